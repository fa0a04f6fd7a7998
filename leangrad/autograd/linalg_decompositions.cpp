// The decompositions of autograd/linalg_decompositions.h: the arguments checked here, the
// factorizations run by kernels/matrix_decompositions.h on the host, and every gradient composed
// of differentiable functions.
//
// Note [Linear algebra on the host]
//   LU, Cholesky, QR, eigh and the SVD are panel-by-panel algorithms whose steps depend on the
//   values (pivots, convergence), which PyTorch runs through LAPACK on the CPU and cuSOLVER or
//   MAGMA on CUDA. Here both devices share one host implementation (Eigen's): a CUDA operand is
//   copied to the host, factored there, and its factors copied back, one synchronisation per call
//   (as PyTorch's linalg.eig on CUDA). Everything around the factorizations (the products,
//   triangular masks, gathers of the gradients) runs on the operand's device. A cuSOLVER binding
//   would replace the round trip without changing this file's contract.
//
// Note [Gradients of the decompositions]
//   Real matrices; g is the upstream gradient of an output, X^T the transpose of the last two dims.
//   - inv: X = A^{-1}, gA = -X^T g X^T. solve (X = A^{-1} B): gB = A^{-T} g (a solve), gA = -gB
//     X^T. solve_triangular: the same with triangular solves, gA kept to the triangle read (its
//     diagonal dropped with unitriangular).
//   - det: gA = det A^{-T}, the cofactor matrix, when det != 0. A singular A (det exactly 0) has
//     cofactors too (nonzero at rank n - 1): from A = U diag(s) V^T, cof A = det(U) det(V) U
//     diag(prod_{j != i} s_j) V^T, without dividing by a zero s_i; that branch is taken for the
//     whole batch when any matrix of it is singular. slogdet: g(logabsdet) A^{-T}; sign has none.
//   - lu (A = P L U, square): with M = tril(L^T gL, -1) + triu(gU U^T), gA = P L^{-T} M U^{-T}.
//     lu_factor's packed LU is L - I + U: gL its strict lower part, gU its upper part.
//     lu_solve is composed of two triangular solves and a gather of rows, differentiable as is.
//   - cholesky (A = L L^T): gA = L^{-T} Phi(L^T gL) L^{-1}, Phi(M) = (tril(M) + tril(M, -1)^T) /
//     2, symmetric because A is taken as symmetric (PyTorch's convention: a symmetric
//     perturbation's derivative is <gA, dA> whatever the triangle read).
//   - qr, m >= n (reduced): with M = gR R^T - Q^T gQ and N = triu(M) + triu(M, 1)^T (M's upper
//     triangle mirrored), gA = (gQ + Q N) R^{-T}: from Q^T dQ skew and dR R^{-1} upper
//     triangular. m < n: A = [X Y] with X = Q R1 square and R2 = Q^T Y, so gY = Q gR2 and X takes
//     the square case with gQ + Y gR2^T in place of gQ.
//   - eigh (A = V diag(w) V^T): gA = V (diag(gw) + F o skew(V^T gV)) V^T, F_ij = 1 / (w_j - w_i)
//     off the diagonal, skew(K) = (K - K^T) / 2: only the skew part of V^T gV moves the
//     eigenvectors (V^T dV is skew), and it makes gA symmetric.
//   - svd (A = U diag(s) V^T, k = min(m, n), reduced; full_matrices' extra columns get no
//     gradient): with F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, J = F o (U^T gU - gU^T U) and
//     K = F o (V^T gV - gV^T V) (gV = gVh^T),
//       gA = U (J diag(s) + diag(gs) + diag(s) K) V^T + (I - U U^T) gU diag(1/s) V^T
//            + U diag(1/s) gV^T (I - V V^T),
//     the last two terms present only when U (m > k) or V (n > k) leaves part of the space out.
//   The eigenvector and singular-vector terms are skipped when no gradient reached those outputs
//   (Context::set_materialize_grads(false)): they divide by eigenvalue gaps, and 0 / 0 at a
//   repeated eigenvalue would make a loss of the values alone NaN.
#include <leangrad/autograd/linalg_decompositions.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/matrix_decompositions.h>

namespace leangrad::linalg {

namespace {

using autograd::BackwardContext;
using autograd::record_op;

// ---- Arguments ----------------------------------------------------------------------------------

std::int64_t rows(const Tensor& a) {
  return a.size(a.dim() - 2);
}
std::int64_t cols(const Tensor& a) {
  return a.size(a.dim() - 1);
}

Shape batch_shape(const Tensor& a) {
  Shape s = a.shape();
  s.resize(s.size() - 2);
  return s;
}

std::int64_t batch_count(const Shape& batch, const char* op) {
  std::int64_t count = 1;
  for (const std::int64_t d : batch)
    count = checked_mul(count, d, op);
  return count;
}

Shape with_matrix(Shape batch, std::int64_t m, std::int64_t n) {
  batch.push_back(m);
  batch.push_back(n);
  return batch;
}

Shape with_vector(Shape batch, std::int64_t n) {
  batch.push_back(n);
  return batch;
}

// A defined batch of matrices (*, m, n) of float32 or float64; square when asked.
void check_matrices(const char* op, const Tensor& a, const char* name, bool square) {
  LG_CHECK(a.defined(), op, ": expected a defined ", name, ", got an undefined Tensor()");
  LG_CHECK_DTYPE(a.dtype() == kFloat32 || a.dtype() == kFloat64, op, ": expected ", name,
                 " of dtype float32 or float64, got ", a.dtype(), " (shape ", a.shape(),
                 "; 16-bit floats are not supported, as in PyTorch)");
  LG_CHECK_SHAPE(a.dim() >= 2, op, ": expected ", name,
                 " to be a batch of matrices (*, m, n) of at least 2 dims, got shape ", a.shape());
  if (square) {
    LG_CHECK_SHAPE(rows(a) == cols(a), op, ": expected ", name,
                   " to be a batch of square matrices (*, n, n), got shape ", a.shape());
  }
}

// b's dtype and device are a's.
void check_pair(const char* op, const Tensor& a, const char* a_name, const Tensor& b,
                const char* b_name) {
  LG_CHECK_DTYPE(a.dtype() == b.dtype(), op, ": expected ", a_name, " and ", b_name,
                 " of one dtype, got ", a.dtype(), " and ", b.dtype());
  LG_CHECK_DEVICE(a.device() == b.device(), op, ": expected ", a_name, " and ", b_name,
                  " on one device, got ", a.device(), " and ", b.device());
}

// The pivots (*, n) int32 of `factors` (*, n, n), as `maker` (lu_factor, ldl_factor) returns
// them: defined, on factors' device, of their batch shape. Their values are the caller's to check.
void check_factor_pivots(const char* op, const Tensor& factors, const char* factors_name,
                         const Tensor& pivots, const char* maker) {
  LG_CHECK(pivots.defined(), op, ": expected defined pivots, got an undefined Tensor()");
  LG_CHECK_DTYPE(pivots.dtype() == kInt32, op, ": expected pivots of dtype int32 (", maker,
                 "'s), got ", pivots.dtype());
  LG_CHECK_DEVICE(pivots.device() == factors.device(), op, ": expected pivots on ", factors_name,
                  "'s device ", factors.device(), ", got ", pivots.device());
  const std::int64_t n = cols(factors);
  LG_CHECK_SHAPE(
      pivots.dim() == factors.dim() - 1 && pivots.size(pivots.dim() - 1) == n &&
          batch_shape(factors) == Shape(pivots.shape().begin(), pivots.shape().end() - 1),
      op, ": expected pivots of shape ", with_vector(batch_shape(factors), n), " for ",
      factors_name, " of shape ", factors.shape(), ", got ", pivots.shape());
}

Tensor mT(const Tensor& a) {
  return transpose(a, -2, -1);
}

// ---- Host computation ---------------------------------------------------------------------------

// A's values on the host, contiguous and the caller's own (the kernels write in place). No graph.
Tensor host_copy(const Tensor& a) {
  const NoGradGuard no_grad;
  Tensor h = a.detach().to(Device::cpu()).contiguous();
  if (a.device().is_cpu() && h.data_ptr() == a.data_ptr()) h = h.clone();
  return h;
}

Tensor host_empty(const Shape& shape, DType dtype) {
  return empty(shape, TensorOptions(dtype));
}

// A host result on `like`'s device.
Tensor on_device_of(const Tensor& host, const Tensor& like) {
  const NoGradGuard no_grad;
  return host.to(like.device());
}

template <typename F>
void with_real(DType dtype, const F& f) {
  if (dtype == kFloat64) {
    f(double{});
  } else {
    f(float{});
  }
}

std::int32_t* int_data(Tensor& t) {
  return t.data_ptr<std::int32_t>();
}

// The first matrix of the batch whose `info` is not 0, or -1.
std::int64_t first_failure(const Tensor& info) {
  const std::int32_t* p = info.data_ptr<std::int32_t>();
  for (std::int64_t i = 0; i < info.numel(); ++i) {
    if (p[i] != 0) return i;
  }
  return -1;
}

// "" for a single matrix, " (batch element 3)" otherwise.
std::string batch_element(const Tensor& info, std::int64_t i) {
  return info.numel() > 1 ? " (batch element " + std::to_string(i) + ")" : std::string();
}

struct LuFactors {
  Tensor lu;      // host, (*, n, n)
  Tensor pivots;  // host, (*, n) int32
  Tensor info;    // host, (batch) int32
};

LuFactors lu_on_host(const Tensor& a, const char* op) {
  const std::int64_t n = cols(a);
  const Shape batch = batch_shape(a);
  const std::int64_t count = batch_count(batch, op);
  LuFactors f{host_copy(a), host_empty(with_vector(batch, n), kInt32), host_empty({count}, kInt32)};
  with_real(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::lu_factor<T>(f.lu.data_ptr<T>(), count, n, int_data(f.pivots), int_data(f.info));
  });
  return f;
}

// An Error for the first singular matrix among lu's, worded as PyTorch's.
void check_invertible(const LuFactors& f, const char* op, const char* what) {
  const std::int64_t i = first_failure(f.info);
  if (i < 0) return;
  LG_THROW(Error, op, batch_element(f.info, i), ": the diagonal element ",
           f.info.data_ptr<std::int32_t>()[i], " of U is zero, the ", what,
           " could not be completed because the input matrix is singular");
}

// X with A X = B from the host factors; b (*, n, k) on the host, batch as lu's.
Tensor lu_solve_on_host(const LuFactors& f, Tensor b, const char* op, bool adjoint = false) {
  const std::int64_t n = rows(b);
  const std::int64_t k = cols(b);
  const std::int64_t count = batch_count(batch_shape(b), op);
  with_real(b.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::lu_solve<T>(f.lu.data_ptr<T>(), f.pivots.data_ptr<std::int32_t>(), b.data_ptr<T>(),
                         count, n, k, adjoint);
  });
  return b;
}

// The row order of P A = L U from LAPACK's pivots (*, k) of an A with m rows (m = k by
// default): row i of P A is row order[i] of A, int64 (*, m) on pivots' device. Each pivot is
// checked against [i + 1, m] (getrf's: a row is never swapped with one above it) or, without
// below_only, [1, m] (what lu_unpack accepts, as PyTorch's); `op` names the caller.
Tensor row_order(const Tensor& pivots, std::optional<std::int64_t> rows = std::nullopt,
                 const char* op = "lu_solve", bool below_only = true) {
  const NoGradGuard no_grad;
  const Tensor p = pivots.to(Device::cpu()).to(kInt32).contiguous();
  const std::int64_t k = pivots.dim() == 0 ? 0 : pivots.size(pivots.dim() - 1);
  const std::int64_t m = rows.value_or(k);
  Shape order_shape(p.shape().begin(), p.shape().end() - (p.dim() == 0 ? 0 : 1));
  order_shape.push_back(m);
  Tensor order = host_empty(order_shape, kInt64);
  const std::int64_t count = shape_numel(order_shape) / std::max<std::int64_t>(m, 1);
  const std::int32_t* pv = p.data_ptr<std::int32_t>();
  std::int64_t* o = order.data_ptr<std::int64_t>();
  for (std::int64_t b = 0; b < count; ++b) {
    std::int64_t* ob = o + b * m;
    for (std::int64_t i = 0; i < m; ++i)
      ob[i] = i;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t j = pv[b * k + i];
      const std::int64_t lowest = below_only ? i + 1 : 1;
      LG_CHECK(j >= lowest && j <= m, op, ": pivots[", i, "] = ", j, " is outside [", lowest, ", ",
               m, "]", count > 1 ? " (matrix " + std::to_string(b) + ")" : std::string(),
               " (pivots come from lu_factor, counted from 1)");
      std::swap(ob[i], ob[j - 1]);
    }
  }
  return order.to(pivots.device());
}

// P B for P A = L U: B's rows (dim -2) read in `order` (*, n). Differentiable in b.
Tensor permute_rows(const Tensor& b, const Tensor& order) {
  return gather(b, -2, expand(unsqueeze(order, -1), b.shape()));
}

// The permutation matrix P^T with A = P^T L U (PyTorch's P of A = P L U): P^T[order[i], i] = 1.
Tensor permutation_matrix(const Tensor& order, DType dtype) {
  const NoGradGuard no_grad;
  const std::int64_t n = order.size(order.dim() - 1);
  const Tensor identity =
      expand(eye(n, TensorOptions(dtype).device(order.device())),
             with_matrix(Shape(order.shape().begin(), order.shape().end() - 1), n, n));
  return mT(permute_rows(identity, order));
}

}  // namespace

// ---- LU -----------------------------------------------------------------------------------------

namespace {

// gA for A = P^T L U (P A = L U) from gL and gU, either undefined (Note [Gradients of the
// decompositions]).
Tensor lu_backward(const Tensor& L, const Tensor& U, const Tensor& order, const Tensor& gL,
                   const Tensor& gU) {
  Tensor m;
  if (gL.defined()) m = tril(matmul(mT(L), gL), -1);
  if (gU.defined()) {
    const Tensor upper = triu(matmul(gU, mT(U)));
    m = m.defined() ? add(m, upper) : upper;
  }
  if (!m.defined()) return Tensor();
  // L^{-T} M U^{-T}, then P^T's rows: row order[i] of gA is row i of the product.
  const Tensor y = solve_triangular(mT(L), m, /*upper=*/true, /*left=*/true, /*unit=*/true);
  const Tensor z = solve_triangular(mT(U), y, /*upper=*/false, /*left=*/false);
  return matmul(permutation_matrix(order, z.dtype()), z);
}

struct LuFactor : autograd::Function<LuFactor> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& A) {
    const LuFactors f = lu_on_host(A, "linalg_lu_factor");
    const Tensor lu = on_device_of(f.lu, A);
    const Tensor pivots = on_device_of(f.pivots, A);
    ctx->save_for_backward({lu, pivots});
    return {lu, pivots, on_device_of(f.info, A).reshape(batch_shape(A))};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const std::vector<Tensor> saved = ctx->saved();
    const Tensor& lu = saved[0];
    const Tensor L = tril(lu, -1);  // its unit diagonal added below
    const Tensor eye_n = eye(cols(lu), lu.options());
    return {lu_backward(add(L, eye_n), triu(lu), row_order(saved[1]), tril(grads[0], -1),
                        triu(grads[0]))};
  }
};

struct Lu : autograd::Function<Lu> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& A) {
    ctx->set_materialize_grads(false);
    const LuFactors f = lu_on_host(A, "linalg_lu");
    const Tensor lu = on_device_of(f.lu, A);
    const Tensor order = on_device_of(row_order(f.pivots), A);  // from the host pivots
    const Tensor L = add(tril(lu, -1), eye(cols(A), A.options()));
    const Tensor U = triu(lu);
    const Tensor P = permutation_matrix(order, A.dtype());
    ctx->save_for_backward({L, U, order});
    return {P, L, U};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const std::vector<Tensor> saved = ctx->saved();
    return {lu_backward(saved[0], saved[1], saved[2], grads[1], grads[2])};
  }
};

void check_lu_pivot(const char* op, bool pivot) {
  LG_CHECK(pivot, op, ": LU without pivoting is not supported (pivot must be true; PyTorch's CPU ",
           "refuses it too)");
}

}  // namespace

std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_lu_factor", A, "A", /*square=*/true);
  check_lu_pivot("linalg_lu_factor", pivot);
  const std::vector<Tensor> out = LuFactor::apply(A);
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_lu_factor_ex";
  check_matrices(op, A, "A", /*square=*/true);
  check_lu_pivot(op, pivot);
  const std::vector<Tensor> out = LuFactor::apply(A);
  if (check_errors) {
    const Tensor info = out[2].to(Device::cpu()).contiguous().reshape({-1});
    const std::int64_t i = first_failure(info);
    LG_CHECK(i < 0, op, batch_element(info, i), ": U[", info.data_ptr<std::int32_t>()[i] - 1, ", ",
             info.data_ptr<std::int32_t>()[i] - 1,
             "] is zero (the matrix is singular); call it with check_errors=false for the factors");
  }
  return {out[0], out[1], out[2]};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_lu", A, "A", /*square=*/true);
  check_lu_pivot("linalg_lu", pivot);
  const std::vector<Tensor> out = Lu::apply(A);
  return {out[0], out[1], out[2]};
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  LG_PROFILE_OP(LU, pivots, B);
  const char* op = "linalg_lu_solve";
  check_matrices(op, LU, "LU", /*square=*/true);
  check_matrices(op, B, "B", /*square=*/false);
  check_pair(op, LU, "LU", B, "B");
  check_factor_pivots(op, LU, "LU", pivots, "lu_factor");
  const std::int64_t n = cols(LU);
  LG_CHECK_SHAPE((left ? rows(B) : cols(B)) == n, op, ": expected B of shape ",
                 left ? "(*, n, k)" : "(*, k, n)", " with n = ", n, " (LU of shape ", LU.shape(),
                 ", left=", left ? "true" : "false", "), got ", B.shape());
  // A = P^T L U. left: X = A^{-1} B = U^{-1} L^{-1} P B; adjoint: A^{-T} B = P^T L^{-T} U^{-T} B.
  // Right-hand forms by transposing: X A = B is A^T X^T = B^T.
  const Tensor order = row_order(pivots);
  const Shape batch = broadcast_shapes(batch_shape(LU), batch_shape(B), op);
  const Tensor lu_b = expand(LU, with_matrix(batch, n, n));
  const Tensor order_b = expand(order, with_vector(batch, n));
  const Tensor rhs = left ? B : mT(B);
  const Tensor rhs_b = expand(rhs, with_matrix(batch, n, cols(rhs)));
  const bool transposed = left ? adjoint : !adjoint;  // solving with A^T
  Tensor x;
  if (!transposed) {
    const Tensor y = solve_triangular(lu_b, permute_rows(rhs_b, order_b), false, true, true);
    x = solve_triangular(lu_b, y, true, true, false);
  } else {
    const Tensor y = solve_triangular(mT(lu_b), rhs_b, false, true, false);
    const Tensor z = solve_triangular(mT(lu_b), y, true, true, true);
    x = matmul(permutation_matrix(order_b, z.dtype()), z);
  }
  return left ? x : mT(x);
}

// ---- LDL^T
// ---------------------------------------------------------------------------------------

namespace {

// LD, pivots and info of A on the host (kernels::ldl_factor), no graph.
std::tuple<Tensor, Tensor, Tensor> ldl_on_host(const Tensor& A, const char* op) {
  check_matrices(op, A, "A", /*square=*/true);
  const std::int64_t n = cols(A);
  const Shape batch = batch_shape(A);
  const std::int64_t count = batch_count(batch, op);
  Tensor ld = host_copy(A);
  Tensor pivots = host_empty(with_vector(batch, n), kInt32);
  Tensor info = host_empty({count}, kInt32);
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::ldl_factor<T>(ld.data_ptr<T>(), count, n, int_data(pivots), int_data(info));
  });
  return {ld, pivots, info};
}

// An Error for the first matrix whose D has a zero pivot.
void check_ldl_info(const Tensor& info, const char* op) {
  const std::int64_t i = first_failure(info);
  if (i < 0) return;
  const std::int32_t k = info.data_ptr<std::int32_t>()[i];
  LG_THROW(Error, op, batch_element(info, i), ": D[", k - 1, ", ", k - 1,
           "] is zero: the factorization is complete but D is singular, so the input matrix is "
           "singular; call linalg::ldl_factor_ex for the factors and info");
}

// Pivots as kernels::ldl_factor writes them, each of the `count` rows of n checked: every entry
// in [1, n] or [-n, -1], a negative one followed by the same value, which ends the block.
void check_ldl_pivots(const Tensor& pivots_host, std::int64_t count, std::int64_t n,
                      const char* op) {
  const std::int32_t* p = pivots_host.data_ptr<std::int32_t>();
  for (std::int64_t m = 0; m < count; ++m) {
    const std::int32_t* row = p + m * n;
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t v = row[k];
      LG_CHECK(v != 0 && std::abs(v) <= n, op, ": expected pivots in [1, ", n, "] (or their ",
               "negatives for a 2 x 2 block), got ", v, " at position ", k,
               count > 1 ? detail::str_cat(" of batch element ", m) : std::string());
      if (v < 0) {
        LG_CHECK(k + 1 < n && row[k + 1] == v, op, ": the negative pivot ", v, " at position ", k,
                 count > 1 ? detail::str_cat(" of batch element ", m) : std::string(),
                 " opens a 2 x 2 block, expected it repeated at position ", k + 1);
        ++k;
      }
    }
  }
}

}  // namespace

std::tuple<Tensor, Tensor> ldl_factor(const Tensor& A, bool hermitian) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_ldl_factor";
  (void)hermitian;  // real matrices: the same factorization
  auto [ld, pivots, info] = ldl_on_host(A, op);
  check_ldl_info(info, op);
  return {on_device_of(ld, A), on_device_of(pivots, A)};
}

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian,
                                                 bool check_errors) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_ldl_factor_ex";
  (void)hermitian;
  auto [ld, pivots, info] = ldl_on_host(A, op);
  if (check_errors) check_ldl_info(info, op);
  return {on_device_of(ld, A), on_device_of(pivots, A),
          on_device_of(info.reshape(batch_shape(A)), A)};
}

Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  LG_PROFILE_OP(LD, pivots, B);
  const char* op = "linalg_ldl_solve";
  (void)hermitian;
  check_matrices(op, LD, "LD", /*square=*/true);
  check_matrices(op, B, "B", /*square=*/false);
  check_pair(op, LD, "LD", B, "B");
  check_factor_pivots(op, LD, "LD", pivots, "ldl_factor");
  const std::int64_t n = cols(LD);
  LG_CHECK_SHAPE(rows(B) == n, op, ": expected B of shape (*, ", n, ", k) for LD of shape ",
                 LD.shape(), ", got ", B.shape());
  const Shape batch = broadcast_shapes(batch_shape(LD), batch_shape(B), op);
  const std::int64_t count = batch_count(batch, op);
  const Tensor ld_b = expand(LD, with_matrix(batch, n, n));
  const Tensor pivots_b = expand(pivots, with_vector(batch, n));
  const Tensor b_b = expand(B, with_matrix(batch, n, cols(B)));
  const Tensor ld_host = host_copy(ld_b);
  const Tensor pivots_host = host_copy(pivots_b);
  check_ldl_pivots(pivots_host, count, n, op);
  Tensor x = host_copy(b_b);
  with_real(LD.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::ldl_solve<T>(ld_host.data_ptr<T>(), pivots_host.data_ptr<std::int32_t>(),
                          x.data_ptr<T>(), count, n, cols(B));
  });
  // The backward solves again with LD's values (its own gradient is refused, so none of its
  // graph is kept).
  return record_op(
      op, on_device_of(x, B), {ld_b, b_b}, {},
      [ld = ld_b.detach(), pivots_b, op](const BackwardContext& c) -> std::vector<Tensor> {
        LG_CHECK(!c.needs(0), op,
                 ": the derivative with respect to LD is not implemented (nor in "
                 "PyTorch); detach LD, or let only B require grad");
        return {Tensor(), ldl_solve(ld, pivots_b, c.grad)};
      });
}

// ---- Determinants and inverses ------------------------------------------------------------------

namespace {

// det and the LU it came from (host), no graph.
struct DetValue {
  Tensor det;  // host, batch shape
  LuFactors factors;
};

DetValue det_on_host(const Tensor& A, const char* op) {
  DetValue v{Tensor(), lu_on_host(A, op)};
  const std::int64_t n = cols(A);
  const std::int64_t count = v.factors.info.numel();
  v.det = host_empty(batch_shape(A), A.dtype());
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* lu = v.factors.lu.data_ptr<T>();
    const std::int32_t* piv = v.factors.pivots.data_ptr<std::int32_t>();
    T* d = v.det.data_ptr<T>();
    for (std::int64_t b = 0; b < count; ++b) {
      T product = 1;
      for (std::int64_t i = 0; i < n; ++i) {
        product *= lu[(b * n + i) * n + i];
        if (piv[b * n + i] - 1 != i) product = -product;
      }
      d[b] = product;
    }
  });
  return v;
}

// The inverse without an Error for a singular matrix (its entries are then inf or NaN): what
// slogdet's gradient needs at a singular matrix, where PyTorch's is infinite too.
Tensor inv_impl(const Tensor& A, bool check, const char* op, Tensor* info = nullptr);

// The cofactor matrix of each matrix (the gradient of det), from its SVD (Note [Gradients of the
// decompositions]).
Tensor cofactors_by_svd(const Tensor& A) {
  const auto [U, S, Vh] = svd(A, /*full_matrices=*/false);
  const std::int64_t n = cols(A);
  // prod_{j != i} s_j: the row of s with its own entry set to 1.
  const Tensor self = eye(n, TensorOptions(kBool).device(A.device()));
  const Tensor others = prod(where(self, ones({}, S.options()), unsqueeze(S, -2)), -1);
  Tensor sign;
  {
    const NoGradGuard no_grad;  // det(U) det(V) = +-1, constant where the SVD is smooth
    sign = mul(linalg::det(U), linalg::det(Vh));
  }
  return mul(matmul(mul(U, unsqueeze(others, -2)), Vh), unsqueeze(unsqueeze(sign, -1), -1));
}

}  // namespace

Tensor det(const Tensor& A) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_det";
  check_matrices(op, A, "A", /*square=*/true);
  const DetValue v = det_on_host(A, op);
  const Tensor out = on_device_of(v.det, A);
  const bool singular = first_failure(v.factors.info) >= 0;
  return record_op("linalg_det", out, {A}, {A, out},
                   [singular](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& a = c.saved[0];
                     const Tensor g = unsqueeze(unsqueeze(c.grad, -1), -1);
                     if (singular) return {mul(g, cofactors_by_svd(a))};
                     const Tensor d = unsqueeze(unsqueeze(c.saved[1], -1), -1);
                     return {mul(mul(g, d), mT(inv(a)))};
                   });
}

namespace {

// sign(det A) and log|det A| on the host from A's LU, as torch's: the signs of U's diagonal and of
// the permutation multiplied, the logs of |U_ii| added, so a determinant beyond the dtype's range
// (diag(1e200, 1e200), or 1e-200s) still has its logarithm (log|det| of the product overflowed to
// inf, or underflowed to -inf with a sign of 0). A zero pivot gives 0 and -inf; NaN propagates.
std::pair<Tensor, Tensor> slogdet_on_host(const Tensor& A, const char* op) {
  const LuFactors f = lu_on_host(A, op);
  const std::int64_t n = cols(A);
  const std::int64_t count = f.info.numel();
  Tensor sign = host_empty(batch_shape(A), A.dtype());
  Tensor logabsdet = host_empty(batch_shape(A), A.dtype());
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* lu = f.lu.data_ptr<T>();
    const std::int32_t* piv = f.pivots.data_ptr<std::int32_t>();
    T* s = sign.data_ptr<T>();
    T* l = logabsdet.data_ptr<T>();
    for (std::int64_t b = 0; b < count; ++b) {
      T sign_b = 1;
      T log_b = 0;
      bool zero = false, nan = false;
      for (std::int64_t i = 0; i < n; ++i) {
        const T u = lu[(b * n + i) * n + i];
        if (u < 0) sign_b = -sign_b;
        if (piv[b * n + i] - 1 != i) sign_b = -sign_b;  // a row swap
        zero = zero || u == 0;
        nan = nan || std::isnan(u);
        log_b += std::log(std::abs(u));
      }
      s[b] = nan ? std::numeric_limits<T>::quiet_NaN() : (zero ? T(0) : sign_b);
      l[b] = log_b;
    }
  });
  return {sign, logabsdet};
}

struct Slogdet : autograd::Function<Slogdet> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& A) {
    const auto [sign_host, logabsdet_host] = slogdet_on_host(A, "linalg_slogdet");
    const NoGradGuard no_grad;
    const Tensor sign = on_device_of(sign_host, A);
    const Tensor logabsdet = on_device_of(logabsdet_host, A);
    ctx->mark_non_differentiable({sign});
    ctx->save_for_backward({A});
    return {sign, logabsdet};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const Tensor a = ctx->saved()[0];
    const Tensor g = unsqueeze(unsqueeze(grads[1], -1), -1);
    return {mul(g, mT(inv_impl(a, /*check=*/false, "linalg_slogdet")))};
  }
};

}  // namespace

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_slogdet", A, "A", /*square=*/true);
  const std::vector<Tensor> out = Slogdet::apply(A);
  return {out[0], out[1]};
}

namespace {

Tensor inv_impl(const Tensor& A, bool check, const char* op, Tensor* info) {
  const LuFactors f = lu_on_host(A, op);
  if (check) check_invertible(f, op, "inversion");
  if (info != nullptr) *info = on_device_of(f.info, A).reshape(batch_shape(A));
  const std::int64_t n = cols(A);
  Tensor identity;
  {
    const NoGradGuard no_grad;
    identity = expand(eye(n, TensorOptions(A.dtype())), A.shape()).contiguous();
  }
  const Tensor out = on_device_of(lu_solve_on_host(f, identity, op), A);
  return record_op("linalg_inv", out, {A}, {out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor xt = mT(c.saved[0]);
                     return {neg(matmul(matmul(xt, c.grad), xt))};
                   });
}

}  // namespace

Tensor inv(const Tensor& A) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_inv", A, "A", /*square=*/true);
  return inv_impl(A, /*check=*/true, "linalg_inv");
}

std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_inv_ex";
  check_matrices(op, A, "A", /*square=*/true);
  Tensor info;
  Tensor out = inv_impl(A, check_errors, op, &info);
  return {out, info};
}

namespace {

// solve, and solve_ex: a singular A is an Error with check, and info (when asked for) each
// matrix's lu_factor info, of the broadcast batch's shape.
Tensor solve_impl(const Tensor& A, const Tensor& B, bool left, bool check, const char* op,
                  Tensor* info) {
  check_matrices(op, A, "A", /*square=*/true);
  LG_CHECK(B.defined(), op, ": expected a defined B, got an undefined Tensor()");
  check_pair(op, A, "A", B, "B");
  const std::int64_t n = cols(A);
  // PyTorch's rule: B is a batch of vectors when 1-d or of A's shape without its last dim.
  const bool vector_rhs =
      B.dim() == 1 ||
      (B.dim() == A.dim() - 1 && B.shape() == Shape(A.shape().begin(), A.shape().end() - 1));
  if (!left) {
    LG_CHECK_SHAPE(!vector_rhs && B.dim() >= 2, op,
                   ": with left=false expected B of shape (*, k, n), got ", B.shape());
    return mT(solve_impl(mT(A), mT(B), /*left=*/true, check, op, info));
  }
  const Tensor b = vector_rhs ? unsqueeze(B, -1) : B;
  LG_CHECK_SHAPE(b.dim() >= 2 && rows(b) == n, op, ": expected B of shape (*, ", n, ", k) or (*, ",
                 n, ") for A of shape ", A.shape(), ", got ", B.shape());
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(b), op);
  const Tensor a_b = expand(A, with_matrix(batch, n, n));
  const Tensor b_b = expand(b, with_matrix(batch, n, cols(b)));
  const LuFactors f = lu_on_host(a_b, op);
  if (check) check_invertible(f, op, "solve");
  if (info != nullptr) *info = on_device_of(f.info, A).reshape(batch);
  const Tensor x = on_device_of(lu_solve_on_host(f, host_copy(b_b), op), A);
  // The backward solves A^T gb = g. Without create_graph it takes the forward's factors (A =
  // P^T L U on the host, kept by the node), as PyTorch's does, instead of factoring A again;
  // recording a graph of the backward it solves with A itself, whose solve differentiates.
  const Tensor out = record_op("linalg_solve", x, {a_b, b_b}, {a_b, x},
                               [f, op](const BackwardContext& c) -> std::vector<Tensor> {
                                 const Tensor gb =
                                     autograd::grad_mode_enabled()
                                         ? solve(mT(c.saved[0]), c.grad)
                                         : on_device_of(lu_solve_on_host(f, host_copy(c.grad), op,
                                                                         /*adjoint=*/true),
                                                        c.grad);
                                 std::vector<Tensor> grads(2);
                                 if (c.needs(0)) grads[0] = neg(matmul(gb, mT(c.saved[1])));
                                 if (c.needs(1)) grads[1] = gb;
                                 return grads;
                               });
  return vector_rhs ? squeeze(out, -1) : out;
}

}  // namespace

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  LG_PROFILE_OP(A, B);
  return solve_impl(A, B, left, /*check=*/true, "linalg_solve", nullptr);
}

std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left,
                                    bool check_errors) {
  LG_PROFILE_OP(A, B);
  Tensor info;
  Tensor out = solve_impl(A, B, left, check_errors, "linalg_solve_ex", &info);
  return {out, info};
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                        bool unitriangular) {
  LG_PROFILE_OP(A, B);
  const char* op = "linalg_solve_triangular";
  check_matrices(op, A, "A", /*square=*/true);
  check_matrices(op, B, "B", /*square=*/false);
  check_pair(op, A, "A", B, "B");
  const std::int64_t n = cols(A);
  LG_CHECK_SHAPE((left ? rows(B) : cols(B)) == n, op, ": expected B of shape ",
                 left ? "(*, n, k)" : "(*, k, n)", " with n = ", n, " (A of shape ", A.shape(),
                 ", left=", left ? "true" : "false", "), got ", B.shape());
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B), op);
  const Tensor a_b = expand(A, with_matrix(batch, n, n));
  const Tensor b_b = expand(B, with_matrix(batch, rows(B), cols(B)));
  const Tensor a_host = host_copy(a_b);
  Tensor x_host = host_copy(b_b);
  const std::int64_t k = left ? cols(B) : rows(B);
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::triangular_solve<T>(a_host.data_ptr<T>(), x_host.data_ptr<T>(), batch_count(batch, op),
                                 n, k, upper, left, unitriangular);
  });
  const Tensor x = on_device_of(x_host, A);
  return record_op("linalg_solve_triangular", x, {a_b, b_b}, {a_b, x},
                   [upper, left, unitriangular](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& a = c.saved[0];
                     const Tensor& x = c.saved[1];
                     const Tensor gb = solve_triangular(mT(a), c.grad, !upper, left, unitriangular);
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) {
                       const Tensor ga = neg(left ? matmul(gb, mT(x)) : matmul(mT(x), gb));
                       const std::int64_t off = unitriangular ? 1 : 0;
                       grads[0] = upper ? triu(ga, off) : tril(ga, -off);
                     }
                     if (c.needs(1)) grads[1] = gb;
                     return grads;
                   });
}

// ---- Cholesky -----------------------------------------------------------------------------------

namespace {

// cholesky, and cholesky_ex: an A that is not positive definite is an Error with check, and info
// (when asked for) potrf's, of A's batch shape.
Tensor cholesky_impl(const Tensor& A, bool upper, bool check, const char* op, Tensor* info_out) {
  check_matrices(op, A, "A", /*square=*/true);
  const std::int64_t n = cols(A);
  Tensor l_host = host_copy(A);
  Tensor info = host_empty({batch_count(batch_shape(A), op)}, kInt32);
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::cholesky<T>(l_host.data_ptr<T>(), info.numel(), n, int_data(info));
  });
  const std::int64_t bad = first_failure(info);
  if (check && bad >= 0) {
    LG_THROW(Error, op, batch_element(info, bad),
             ": the factorization could not be completed because the input is not positive ",
             "definite (the leading minor of order ", info.data_ptr<std::int32_t>()[bad],
             " is not positive definite); A of shape ", A.shape());
  }
  if (info_out != nullptr) *info_out = on_device_of(info, A).reshape(batch_shape(A));
  Tensor out = on_device_of(l_host, A);
  out = record_op("linalg_cholesky", out, {A}, {out},
                  [](const BackwardContext& c) -> std::vector<Tensor> {
                    const Tensor& l = c.saved[0];
                    const Tensor m = matmul(mT(l), c.grad);
                    const Tensor phi = mul(add(tril(m), mT(tril(m, -1))), 0.5);
                    const Tensor y = solve_triangular(mT(l), phi, /*upper=*/true);
                    return {solve_triangular(l, y, /*upper=*/false, /*left=*/false)};
                  });
  return upper ? mT(out) : out;
}

}  // namespace

Tensor cholesky(const Tensor& A, bool upper) {
  LG_PROFILE_OP(A);
  return cholesky_impl(A, upper, /*check=*/true, "linalg_cholesky", nullptr);
}

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  LG_PROFILE_OP(A);
  Tensor info;
  Tensor out = cholesky_impl(A, upper, check_errors, "linalg_cholesky_ex", &info);
  return {out, info};
}

// ---- QR -----------------------------------------------------------------------------------------

namespace {

// gA for A = Q R, A (m, n) with m >= n, reduced (Note [Gradients of the decompositions]).
Tensor qr_backward_tall(const Tensor& Q, const Tensor& R, const Tensor& gQ, const Tensor& gR) {
  Tensor m;
  if (gR.defined()) m = matmul(gR, mT(R));
  if (gQ.defined()) {
    const Tensor qtg = matmul(mT(Q), gQ);
    m = m.defined() ? sub(m, qtg) : neg(qtg);
  }
  const Tensor mirrored = add(triu(m), mT(triu(m, 1)));
  Tensor b = matmul(Q, mirrored);
  if (gQ.defined()) b = add(b, gQ);
  return solve_triangular(mT(R), b, /*upper=*/false, /*left=*/false);
}

struct Qr : autograd::Function<Qr> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& A, std::string mode) {
    ctx->set_materialize_grads(false);
    const char* op = "linalg_qr";
    const std::int64_t m = rows(A);
    const std::int64_t n = cols(A);
    const std::int64_t k = std::min(m, n);
    const bool complete = mode == "complete";
    const bool want_q = mode != "r";
    const Shape batch = batch_shape(A);
    const Tensor a_host = host_copy(A);
    Tensor q_host = want_q ? host_empty(with_matrix(batch, m, complete ? m : k), A.dtype())
                           : host_empty({0}, A.dtype());
    Tensor r_host = host_empty(with_matrix(batch, complete ? m : k, n), A.dtype());
    with_real(A.dtype(), [&](auto tag) {
      using T = decltype(tag);
      kernels::qr<T>(a_host.data_ptr<T>(), want_q ? q_host.data_ptr<T>() : nullptr,
                     r_host.data_ptr<T>(), batch_count(batch, op), m, n, complete);
    });
    const Tensor Q = on_device_of(q_host, A);
    const Tensor R = on_device_of(r_host, A);
    ctx->saved_data["mode"] = mode;
    ctx->save_for_backward({A, Q, R});
    return {Q, R};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const auto& mode = std::any_cast<const std::string&>(ctx->saved_data["mode"]);
    const std::vector<Tensor> saved = ctx->saved();
    const Tensor& A = saved[0];
    const Tensor& Q = saved[1];
    const Tensor& R = saved[2];
    const std::int64_t m = rows(A);
    const std::int64_t n = cols(A);
    LG_CHECK(mode != "r", "linalg_qr: the derivative depends on Q, which is not computed with ",
             "mode \"r\" (use mode \"reduced\")");
    LG_CHECK(!(mode == "complete" && m > n), "linalg_qr: not differentiable with mode ",
             "\"complete\" for m > n (A of shape ", A.shape(),
             "): Q's last m - n columns are not determined by A; use mode \"reduced\"");
    const Tensor& gQ = grads[0];
    const Tensor& gR = grads[1];
    if (!gQ.defined() && !gR.defined()) return {Tensor()};
    if (m >= n) return {qr_backward_tall(Q, R, gQ, gR)};
    // A = [X Y], X = Q R1 (m, m), Y = Q R2.
    const Tensor y = slice(A, -1, m, n);
    const Tensor r1 = slice(R, -1, 0, m);
    Tensor gq = gQ;
    Tensor gr1, gy;
    if (gR.defined()) {
      gr1 = slice(gR, -1, 0, m);
      const Tensor gr2 = slice(gR, -1, m, n);
      const Tensor through_r2 = matmul(y, mT(gr2));
      gq = gq.defined() ? add(gq, through_r2) : through_r2;
      gy = matmul(Q, gr2);
    } else {
      gy = zeros(y.shape(), y.options());
    }
    return {cat({qr_backward_tall(Q, r1, gq, gr1), gy}, -1)};
  }
};

}  // namespace

std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_qr";
  check_matrices(op, A, "A", /*square=*/false);
  LG_CHECK(mode == "reduced" || mode == "complete" || mode == "r", op,
           ": expected mode \"reduced\", \"complete\" or \"r\", got \"", mode, "\"");
  const std::vector<Tensor> out = Qr::apply(A, std::string(mode));
  return {out[0], out[1]};
}

namespace {

// The checks of tau (*, k) beside the reflections A (*, m, n): defined, A's dtype, device and
// batch dims, k <= n. Returns k.
std::int64_t check_tau(const char* op, const Tensor& A, const Tensor& tau) {
  LG_CHECK(tau.defined(), op, ": expected a defined tau, got an undefined Tensor()");
  check_pair(op, A, "A", tau, "tau");
  LG_CHECK_SHAPE(tau.dim() == A.dim() - 1 &&
                     Shape(tau.shape().begin(), tau.shape().end() - 1) == batch_shape(A) &&
                     tau.size(-1) <= cols(A),
                 op, ": expected tau (*, k) with A's batch dims and k <= ", cols(A),
                 " (A of shape ", A.shape(), "), got shape ", tau.shape());
  return tau.size(-1);
}

// v_j of geqrf's layout, (*, m): column j of A below the diagonal, 1 on it, 0 above (row is
// arange(m) in A's dtype).
Tensor reflector(const Tensor& A, std::int64_t j, const Tensor& row) {
  const Tensor column = select(A, -1, j);
  return add(mul(column, gt(row, static_cast<double>(j)).to(A.dtype())),
             eq(row, static_cast<double>(j)).to(A.dtype()));
}

// tau_j as (*, 1, 1), to scale a batch of matrices.
Tensor tau_at(const Tensor& tau, std::int64_t j) {
  return unsqueeze(unsqueeze(select(tau, -1, j), -1), -1);
}

}  // namespace

Tensor householder_product(const Tensor& A, const Tensor& tau) {
  LG_PROFILE_OP(A, tau);
  const char* op = "linalg_householder_product";
  check_matrices(op, A, "A", /*square=*/false);
  const std::int64_t m = rows(A);
  const std::int64_t n = cols(A);
  LG_CHECK_SHAPE(m >= n, op, ": expected A (*, m, n) with m >= n, got shape ", A.shape());
  const std::int64_t k = check_tau(op, A, tau);
  // Q = H_0 (H_1 (... (H_(k-1) I))), each H_j applied as Q - tau_j v_j (v_j^T Q).
  Tensor q = expand(eye(m, n, A.options()), A.shape());
  const Tensor row = arange(static_cast<double>(m), A.options());
  for (std::int64_t j = k - 1; j >= 0; --j) {
    const Tensor v = reflector(A, j, row);
    const Tensor vt_q = matmul(unsqueeze(v, -2), q);  // (*, 1, n)
    q = sub(q, mul(tau_at(tau, j), matmul(unsqueeze(v, -1), vt_q)));
  }
  return q;
}

// ---- eigh ---------------------------------------------------------------------------------------

namespace {

bool parse_uplo(const char* op, std::string_view uplo) {
  LG_CHECK(uplo == "L" || uplo == "U", op, ": expected UPLO \"L\" or \"U\", got \"", uplo, "\"");
  return uplo == "U";
}

// w and V on the host (V empty without vectors); an Error when the iteration did not converge.
std::tuple<Tensor, Tensor> eigh_on_host(const Tensor& A, bool upper, bool vectors, const char* op) {
  const std::int64_t n = cols(A);
  const Shape batch = batch_shape(A);
  const Tensor a_host = host_copy(A);
  Tensor w = host_empty(with_vector(batch, n), A.dtype());
  Tensor v = vectors ? host_empty(A.shape(), A.dtype()) : Tensor();
  Tensor info = host_empty({batch_count(batch, op)}, kInt32);
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::eigh<T>(a_host.data_ptr<T>(), w.data_ptr<T>(), vectors ? v.data_ptr<T>() : nullptr,
                     info.numel(), n, upper, int_data(info));
  });
  const std::int64_t bad = first_failure(info);
  if (bad >= 0) {
    LG_THROW(Error, op, batch_element(info, bad), ": the algorithm failed to converge (A of shape ",
             A.shape(), " holds a NaN or an infinity, or is too ill-conditioned)");
  }
  return {w, v};
}

// The 1 / (x_j - x_i) matrix off the diagonal, 0 on it, from x (*, n): a diagonal of ones is
// divided instead, so that no 1/0 enters the graph (its derivative would be 0 * inf).
Tensor inverse_gaps(const Tensor& x) {
  const Tensor gaps = sub(unsqueeze(x, -2), unsqueeze(x, -1));  // [i, j] = x_j - x_i
  const Tensor diagonal = eye(x.size(x.dim() - 1), TensorOptions(kBool).device(x.device()));
  const Tensor one = ones({}, x.options());
  return where(diagonal, zeros({}, x.options()), reciprocal(where(diagonal, one, gaps)));
}

Tensor eigh_backward(const Tensor& w, const Tensor& V, const Tensor& gw, const Tensor& gV) {
  Tensor inner;
  if (gV.defined()) {
    const Tensor k = matmul(mT(V), gV);
    inner = mul(inverse_gaps(w), mul(sub(k, mT(k)), 0.5));
  }
  if (gw.defined()) inner = inner.defined() ? add(inner, diag_embed(gw)) : diag_embed(gw);
  if (!inner.defined()) return Tensor();
  return matmul(matmul(V, inner), mT(V));
}

struct Eigh : autograd::Function<Eigh> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& A, bool upper) {
    ctx->set_materialize_grads(false);
    const auto [w_host, v_host] = eigh_on_host(A, upper, /*vectors=*/true, "linalg_eigh");
    const Tensor w = on_device_of(w_host, A);
    const Tensor V = on_device_of(v_host, A);
    ctx->save_for_backward({w, V});
    return {w, V};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const std::vector<Tensor> saved = ctx->saved();
    return {eigh_backward(saved[0], saved[1], grads[0], grads[1]), Tensor()};
  }
};

}  // namespace

std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_eigh", A, "A", /*square=*/true);
  const bool upper = parse_uplo("linalg_eigh", UPLO);
  const std::vector<Tensor> out = Eigh::apply(A, upper);
  return {out[0], out[1]};
}

Tensor eigvalsh(const Tensor& A, std::string_view UPLO) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_eigvalsh";
  check_matrices(op, A, "A", /*square=*/true);
  const bool upper = parse_uplo(op, UPLO);
  if (!autograd::any_requires_grad({&A})) {
    return on_device_of(std::get<0>(eigh_on_host(A, upper, /*vectors=*/false, op)), A);
  }
  const auto [w, V] = eigh(A, UPLO);
  return w;
}

// ---- SVD ----------------------------------------------------------------------------------------

namespace {

Tensor svd_backward(const Tensor& A, const Tensor& U, const Tensor& S, const Tensor& Vh,
                    const Tensor& gU_in, const Tensor& gS, const Tensor& gVh_in) {
  const std::int64_t m = rows(A);
  const std::int64_t n = cols(A);
  const std::int64_t k = std::min(m, n);
  // Only the first k singular vectors are determined by A.
  const Tensor u = slice(U, -1, 0, k);
  const Tensor vh = slice(Vh, -2, 0, k);
  const Tensor gU = gU_in.defined() ? slice(gU_in, -1, 0, k) : Tensor();
  const Tensor gVh = gVh_in.defined() ? slice(gVh_in, -2, 0, k) : Tensor();
  if (!gU.defined() && !gS.defined() && !gVh.defined()) return Tensor();
  const Tensor v = mT(vh);
  const Tensor gV = gVh.defined() ? mT(gVh) : Tensor();
  // inner = J diag(s) + diag(gs) + diag(s) K, F_ij = 1 / (s_j^2 - s_i^2).
  Tensor inner;
  auto accumulate = [&inner](const Tensor& t) { inner = inner.defined() ? add(inner, t) : t; };
  if (gU.defined() || gV.defined()) {
    const Tensor f = inverse_gaps(square(S));
    if (gU.defined()) {
      const Tensor utg = matmul(mT(u), gU);
      accumulate(mul(mul(f, sub(utg, mT(utg))), unsqueeze(S, -2)));
    }
    if (gV.defined()) {
      const Tensor vtg = matmul(mT(v), gV);
      accumulate(mul(unsqueeze(S, -1), mul(f, sub(vtg, mT(vtg)))));
    }
  }
  if (gS.defined()) accumulate(diag_embed(gS));
  Tensor ga = matmul(matmul(u, inner), vh);
  const Tensor inv_s = reciprocal(S);
  if (gU.defined() && m > k) {  // (I - U U^T) gU diag(1/s) V^T
    const Tensor proj = sub(gU, matmul(u, matmul(mT(u), gU)));
    ga = add(ga, matmul(mul(proj, unsqueeze(inv_s, -2)), vh));
  }
  if (gV.defined() && n > k) {  // U diag(1/s) gV^T (I - V V^T)
    const Tensor proj = sub(mT(gV), matmul(matmul(mT(gV), v), vh));
    ga = add(ga, matmul(u, mul(unsqueeze(inv_s, -1), proj)));
  }
  return ga;
}

// U, S, Vh on the host (U and Vh undefined without vectors); an Error for a non-finite input.
std::tuple<Tensor, Tensor, Tensor> svd_on_host(const Tensor& A, bool full_matrices, bool vectors,
                                               const char* op) {
  const std::int64_t m = rows(A);
  const std::int64_t n = cols(A);
  const std::int64_t k = std::min(m, n);
  const Shape batch = batch_shape(A);
  const Tensor a_host = host_copy(A);
  Tensor U =
      vectors ? host_empty(with_matrix(batch, m, full_matrices ? m : k), A.dtype()) : Tensor();
  Tensor S = host_empty(with_vector(batch, k), A.dtype());
  Tensor Vh =
      vectors ? host_empty(with_matrix(batch, full_matrices ? n : k, n), A.dtype()) : Tensor();
  Tensor info = host_empty({batch_count(batch, op)}, kInt32);
  with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::svd<T>(a_host.data_ptr<T>(), vectors ? U.data_ptr<T>() : nullptr, S.data_ptr<T>(),
                    vectors ? Vh.data_ptr<T>() : nullptr, info.numel(), m, n, full_matrices,
                    int_data(info));
  });
  const std::int64_t bad = first_failure(info);
  if (bad >= 0) {
    LG_THROW(Error, op, batch_element(info, bad), ": the algorithm failed to converge (A of shape ",
             A.shape(), " holds a NaN or an infinity)");
  }
  return {U, S, Vh};
}

struct Svd : autograd::Function<Svd> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& A, bool full_matrices) {
    ctx->set_materialize_grads(false);
    const auto [u, s, vh] = svd_on_host(A, full_matrices, /*vectors=*/true, "linalg_svd");
    const Tensor U = on_device_of(u, A);
    const Tensor S = on_device_of(s, A);
    const Tensor Vh = on_device_of(vh, A);
    ctx->save_for_backward({A, U, S, Vh});
    return {U, S, Vh};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const std::vector<Tensor> saved = ctx->saved();
    return {svd_backward(saved[0], saved[1], saved[2], saved[3], grads[0], grads[1], grads[2]),
            Tensor()};
  }
};

}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_svd", A, "A", /*square=*/false);
  const std::vector<Tensor> out = Svd::apply(A, full_matrices);
  return {out[0], out[1], out[2]};
}

Tensor svdvals(const Tensor& A) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_svdvals";
  check_matrices(op, A, "A", /*square=*/false);
  if (!autograd::any_requires_grad({&A})) {
    return on_device_of(std::get<1>(svd_on_host(A, false, /*vectors=*/false, op)), A);
  }
  return std::get<1>(svd(A, /*full_matrices=*/false));
}

// ---- Built on the decompositions -------------------------------------------------------------

namespace {

// A with the two dims `dim` moved last (validated, distinct).
Tensor with_matrix_dims_last(const char* op, const Tensor& A,
                             const std::vector<std::int64_t>& dim) {
  check_matrices(op, A, "A", /*square=*/false);
  LG_CHECK_SHAPE(dim.size() == 2, op, ": expected two dims, got ", dim.size());
  const std::int64_t d0 = wrap_dim(dim[0], A.dim(), op);
  const std::int64_t d1 = wrap_dim(dim[1], A.dim(), op);
  LG_CHECK_SHAPE(d0 != d1, op, ": expected two different dims, got ", dim[0], " and ", dim[1]);
  return movedim(A, {d0, d1}, {-2, -1});
}

// The (*) result of a norm over the last two dims, given back its two dims of size 1 with
// keepdim (at their places in the input).
Tensor restore_dims(const Tensor& r, const Tensor& A, const std::vector<std::int64_t>& dim,
                    bool keepdim, const char* op) {
  if (!keepdim) return r;
  std::int64_t d0 = wrap_dim(dim[0], A.dim(), op);
  std::int64_t d1 = wrap_dim(dim[1], A.dim(), op);
  if (d0 > d1) std::swap(d0, d1);
  return unsqueeze(unsqueeze(r, d0), d1);
}

// PyTorch's default relative tolerance for the singular values of A (*, m, n): max(m, n) times
// the epsilon of A's dtype (pinv, matrix_rank, lstsq's rcond).
double default_rtol(const Tensor& A) {
  const double eps = A.dtype() == kFloat64 ? 0x1p-52 : 0x1p-23;
  return eps * static_cast<double>(std::max(rows(A), cols(A)));
}

// The cutoff max(atol, rtol s_max) of pinv and matrix_rank, (*, 1), from the values s (*, k)
// (descending) or |w| with hermitian.
Tensor cutoff_of(const Tensor& largest, const Tensor& A, std::optional<double> atol,
                 std::optional<double> rtol) {
  const double r = rtol.value_or(atol.has_value() && *atol > 0 ? 0.0 : default_rtol(A));
  return maximum(mul(largest, r), full({}, atol.value_or(0.0), largest.options()));
}

// 1 / values where kept, else 0 (pinv's and lstsq's inverted singular values); the division sees
// only the kept values, so that its derivative never meets 1 / 0.
Tensor inverse_kept(const Tensor& values, const Tensor& kept) {
  const Tensor one = ones({}, values.options());
  return where(kept, reciprocal(where(kept, values, one)), zeros({}, values.options()));
}

}  // namespace

Tensor matrix_norm(const Tensor& A, double ord, const std::vector<std::int64_t>& dim,
                   bool keepdim) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_matrix_norm";
  const Tensor a = with_matrix_dims_last(op, A, dim);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor r;
  if (ord == 1 || ord == -1) {
    const Tensor column_sums = sum(abs(a), {-2});
    r = ord > 0 ? amax(column_sums, {-1}) : amin(column_sums, {-1});
  } else if (ord == inf || ord == -inf) {
    const Tensor row_sums = sum(abs(a), {-1});
    r = ord > 0 ? amax(row_sums, {-1}) : amin(row_sums, {-1});
  } else if (ord == 2 || ord == -2) {
    const Tensor s = svdvals(a);
    r = ord > 0 ? amax(s, {-1}) : amin(s, {-1});
  } else {
    LG_THROW(Error, op, ": expected ord 1, -1, 2, -2, inf or -inf (or \"fro\", \"nuc\"), got ",
             ord);
  }
  return restore_dims(r, A, dim, keepdim, op);
}

Tensor matrix_norm(const Tensor& A, std::string_view ord, const std::vector<std::int64_t>& dim,
                   bool keepdim) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_matrix_norm";
  LG_CHECK(ord == "fro" || ord == "nuc", op, ": expected ord \"fro\" or \"nuc\" (or a number), ",
           "got \"", ord, "\"");
  const Tensor a = with_matrix_dims_last(op, A, dim);
  const Tensor r = ord == "fro" ? norm(a, 2.0, {-2, -1}) : sum(svdvals(a), {-1});
  return restore_dims(r, A, dim, keepdim, op);
}

namespace {

// |A| |inv(A)| in the norm `p`, as torch's: an empty A's condition number is 0, a singular one's
// infinite (its inverse, of infinities, where LU meets a zero pivot), not an Error. A has elements.
template <typename Order>
Tensor cond_by_inverse(const Tensor& A, const Order& p) {
  const auto [inverse, info] = inv_ex(A, /*check_errors=*/false);
  const Tensor singular = unsqueeze(unsqueeze(gt(info, 0.0), -1), -1);
  const Tensor finite_or_inf =
      where(singular, full({}, std::numeric_limits<double>::infinity(), A.options()), inverse);
  // 0 times inf (a zero matrix), and NaN, are inf, as torch's nan_to_num there.
  const double inf = std::numeric_limits<double>::infinity();
  return nan_to_num(mul(matrix_norm(A, p), matrix_norm(finite_or_inf, p)), inf, inf, -inf);
}

}  // namespace

Tensor cond(const Tensor& A, double p) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_cond";
  check_matrices(op, A, "A", /*square=*/p != 2 && p != -2);
  if (A.numel() == 0) return zeros(batch_shape(A), A.options());  // torch's, in every norm
  if (p == 2 || p == -2) {
    const Tensor s = svdvals(A);
    const Tensor largest = select(s, -1, 0);
    const Tensor smallest = select(s, -1, s.size(-1) - 1);
    return p > 0 ? div(largest, smallest) : div(smallest, largest);
  }
  return cond_by_inverse(A, p);
}

Tensor cond(const Tensor& A, std::string_view p) {
  LG_PROFILE_OP(A);
  check_matrices("linalg_cond", A, "A", /*square=*/true);
  if (A.numel() == 0) return zeros(batch_shape(A), A.options());  // torch's, in every norm
  if (p == "nuc") {
    // torch's: the singular values' sum times their reciprocals' (a large finite number, not
    // inf, for a matrix that is singular only to roundoff).
    const Tensor s = svdvals(A);
    return mul(sum(s, {-1}), sum(reciprocal(s), {-1}));
  }
  return cond_by_inverse(A, p);
}

Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
            bool hermitian) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_pinv";
  check_matrices(op, A, "A", /*square=*/hermitian);
  if (hermitian) {
    if (A.numel() == 0) return zeros(A.shape(), A.options());  // (n, n) with n = 0, or no batch
    const auto [w, V] = eigh(A);
    const Tensor magnitude = abs(w);
    const Tensor kept = gt(magnitude, cutoff_of(amax(magnitude, {-1}, true), A, atol, rtol));
    return matmul(mul(V, unsqueeze(inverse_kept(w, kept), -2)), transpose(V, -2, -1));
  }
  const auto [U, S, Vh] = svd(A, /*full_matrices=*/false);
  if (S.size(-1) == 0) return zeros(with_matrix(batch_shape(A), cols(A), rows(A)), A.options());
  const Tensor kept = gt(S, cutoff_of(slice(S, -1, 0, 1), A, atol, rtol));
  return matmul(mul(transpose(Vh, -2, -1), unsqueeze(inverse_kept(S, kept), -2)),
                transpose(U, -2, -1));
}

Tensor matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                   bool hermitian) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_matrix_rank";
  check_matrices(op, A, "A", /*square=*/hermitian);
  const NoGradGuard no_grad;
  const Tensor values = hermitian ? abs(eigvalsh(A)) : svdvals(A);
  if (values.size(-1) == 0) return zeros(batch_shape(A), TensorOptions(kInt64).device(A.device()));
  const Tensor kept = gt(values, cutoff_of(amax(values, {-1}, true), A, atol, rtol));
  return sum(kept.to(kInt64), {-1});
}

Tensor matrix_power(const Tensor& A, std::int64_t n) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_matrix_power";
  check_matrices(op, A, "A", /*square=*/true);
  if (n == 0) {
    // The identity, with A's history (a zero gradient, as PyTorch's): `where` takes nothing of A.
    const Tensor all = ones({}, TensorOptions(kBool).device(A.device()));
    return where(all, expand(eye(cols(A), A.options()), A.shape()), A);
  }
  Tensor base = n < 0 ? inv(A) : A;
  // |n| by its bits: the product of base^(2^i) for the set bits i.
  std::uint64_t remaining =
      n < 0 ? static_cast<std::uint64_t>(-(n + 1)) + 1 : static_cast<std::uint64_t>(n);
  Tensor result;
  while (true) {
    if (remaining & 1u) result = result.defined() ? matmul(result, base) : base;
    remaining >>= 1u;
    if (remaining == 0) break;
    base = matmul(base, base);
  }
  return result;
}

Tensor vecdot(const Tensor& x, const Tensor& y, std::int64_t dim) {
  LG_PROFILE_OP(x, y);
  const char* op = "linalg_vecdot";
  LG_CHECK(x.defined() && y.defined(), op, ": expected defined x and y");
  LG_CHECK_DTYPE(x.dtype() == y.dtype(), op, ": expected x and y of the same dtype, got ",
                 x.dtype(), " and ", y.dtype());
  LG_CHECK_DTYPE(is_floating(x.dtype()), op, ": expected a floating dtype, got ", x.dtype());
  LG_CHECK_DEVICE(x.device() == y.device(), op, ": expected x and y on one device, got ",
                  x.device(), " and ", y.device());
  return sum(mul(x, y), {dim});
}

Tensor multi_dot(const std::vector<Tensor>& tensors) {
  LG_PROFILE_OP(tensors);
  const char* op = "linalg_multi_dot";
  LG_CHECK(tensors.size() >= 2, op, ": expected at least 2 tensors, got ", tensors.size());
  const std::size_t count = tensors.size();
  std::vector<Tensor> m(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Tensor& t = tensors[i];
    LG_CHECK(t.defined(), op, ": tensor ", i, " is an undefined Tensor()");
    const bool end = i == 0 || i == count - 1;
    LG_CHECK_SHAPE(t.dim() == 2 || (end && t.dim() == 1), op, ": expected tensor ", i,
                   end ? " to be 1-d or 2-d" : " to be 2-d", ", got shape ", t.shape());
    check_pair(op, tensors[0], "tensor 0", t, "every other tensor");
    m[i] = t.dim() == 2 ? t : (i == 0 ? unsqueeze(t, 0) : unsqueeze(t, 1));
  }
  for (std::size_t i = 0; i + 1 < count; ++i) {
    LG_CHECK_SHAPE(m[i].size(1) == m[i + 1].size(0), op, ": tensors ", i, " and ", i + 1,
                   " cannot be multiplied (shapes ", tensors[i].shape(), " and ",
                   tensors[i + 1].shape(), ")");
  }
  // p[i] x p[i + 1] is matrix i; cost[i][j] the fewest multiplications for matrices i..j and
  // split[i][j] where the last product of that range splits (in doubles: no overflow).
  std::vector<double> p(count + 1);
  for (std::size_t i = 0; i < count; ++i)
    p[i] = static_cast<double>(m[i].size(0));
  p[count] = static_cast<double>(m[count - 1].size(1));
  std::vector<std::vector<double>> cost(count, std::vector<double>(count, 0.0));
  std::vector<std::vector<std::size_t>> split(count, std::vector<std::size_t>(count, 0));
  for (std::size_t length = 2; length <= count; ++length) {
    for (std::size_t i = 0; i + length <= count; ++i) {
      const std::size_t j = i + length - 1;
      cost[i][j] = std::numeric_limits<double>::infinity();
      for (std::size_t k = i; k < j; ++k) {
        const double c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  }
  const std::function<Tensor(std::size_t, std::size_t)> chain = [&](std::size_t i,
                                                                    std::size_t j) -> Tensor {
    if (i == j) return m[i];
    return mm(chain(i, split[i][j]), chain(split[i][j] + 1, j));
  };
  Tensor out = chain(0, count - 1);
  if (tensors.back().dim() == 1) out = squeeze(out, 1);
  if (tensors.front().dim() == 1) out = squeeze(out, 0);
  return out;
}

Tensor vector_norm(const Tensor& x, double ord, const std::vector<std::int64_t>& dim,
                   bool keepdim) {
  LG_PROFILE_OP(x);
  return leangrad::norm(x, ord, dim, keepdim);
}

Tensor norm(const Tensor& x, std::optional<double> ord, const std::vector<std::int64_t>& dim,
            bool keepdim) {
  LG_PROFILE_OP(x);
  const char* op = "linalg_norm";
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  if (!ord.has_value()) return leangrad::norm(x, 2.0, dim, keepdim);
  LG_CHECK_SHAPE(
      dim.size() == 1 || dim.size() == 2 || (dim.empty() && (x.dim() == 1 || x.dim() == 2)), op,
      ": with ord, expected one or two dims, or a 1-d or 2-d input, got dims of ", "size ",
      dim.size(), " for shape ", x.shape());
  const bool matrix = dim.size() == 2 || (dim.empty() && x.dim() == 2);
  if (!matrix) return leangrad::norm(x, *ord, dim, keepdim);
  return matrix_norm(x, *ord, dim.empty() ? std::vector<std::int64_t>{-2, -1} : dim, keepdim);
}

Tensor norm(const Tensor& x, std::string_view ord, const std::vector<std::int64_t>& dim,
            bool keepdim) {
  LG_PROFILE_OP(x);
  return matrix_norm(x, ord, dim.empty() ? std::vector<std::int64_t>{-2, -1} : dim, keepdim);
}

Tensor tensorinv(const Tensor& A, std::int64_t ind) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_tensorinv";
  LG_CHECK(A.defined(), op, ": expected a defined A, got an undefined Tensor()");
  LG_CHECK_SHAPE(ind > 0 && ind <= A.dim(), op, ": expected ind in [1, ", A.dim(), "], got ", ind,
                 " (A of shape ", A.shape(), ")");
  const Shape& shape = A.shape();
  const Shape leading(shape.begin(), shape.begin() + ind);
  const Shape trailing(shape.begin() + ind, shape.end());
  const std::int64_t rows_ = shape_numel(leading, op);
  const std::int64_t cols_ = shape_numel(trailing, op);
  LG_CHECK_SHAPE(rows_ == cols_, op, ": expected the product of the first ", ind,
                 " dims to equal the product of the rest, got ", rows_, " and ", cols_,
                 " (A of shape ", shape, ")");
  Shape out_shape = trailing;
  out_shape.insert(out_shape.end(), leading.begin(), leading.end());
  return reshape(inv(reshape(A, {rows_, cols_})), out_shape);
}

Tensor tensorsolve(const Tensor& A, const Tensor& B, const std::vector<std::int64_t>& dims) {
  LG_PROFILE_OP(A, B);
  const char* op = "linalg_tensorsolve";
  LG_CHECK(A.defined() && B.defined(), op, ": expected defined A and B, got an undefined Tensor()");
  Tensor a = A;
  if (!dims.empty()) {
    std::vector<std::int64_t> to_end;
    for (std::size_t i = 0; i < dims.size(); ++i)
      to_end.push_back(A.dim() - static_cast<std::int64_t>(dims.size() - i));
    a = movedim(A, dims, to_end);
  }
  LG_CHECK_SHAPE(
      a.dim() >= B.dim() && Shape(a.shape().begin(), a.shape().begin() + B.dim()) == B.shape(), op,
      ": expected A's leading dims to be B's shape ", B.shape(), ", got A of shape ", a.shape());
  const Shape x_shape(a.shape().begin() + B.dim(), a.shape().end());
  const std::int64_t rows_ = B.numel();
  const std::int64_t cols_ = shape_numel(x_shape, op);
  LG_CHECK_SHAPE(rows_ == cols_, op, ": expected B's size ", rows_,
                 " to equal the size of the solution's shape ", x_shape, ", got ", cols_);
  return reshape(solve(reshape(a, {rows_, cols_}), reshape(B, {rows_})), x_shape);
}

LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                  std::string_view driver) {
  LG_PROFILE_OP(A, B);
  const char* op = "linalg_lstsq";
  check_matrices(op, A, "A", /*square=*/false);
  check_matrices(op, B, "B", /*square=*/false);
  check_pair(op, A, "A", B, "B");
  LG_CHECK(driver == "gelsy" || driver == "gelsd" || driver == "gelss" || driver == "gels", op,
           ": expected driver \"gelsy\", \"gelsd\", \"gelss\" or \"gels\", got \"", driver, "\"");
  const std::int64_t m = rows(A);
  const std::int64_t n = cols(A);
  // PyTorch's rule: B with one dim fewer than A is a batch of vectors (*, m).
  const bool vector_rhs = B.dim() == A.dim() - 1;
  const Tensor b_in = vector_rhs ? unsqueeze(B, -1) : B;
  LG_CHECK_SHAPE(rows(b_in) == m, op, ": expected B of shape (*, ", m, ", k) or (*, ", m,
                 ") for A of shape ", A.shape(), ", got ", B.shape());
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(b_in), op);
  const Tensor a = expand(A, with_matrix(batch, m, n));
  const Tensor b = expand(b_in, with_matrix(batch, m, cols(b_in)));
  const auto [U, S, Vh] = svd(a, /*full_matrices=*/false);
  const std::int64_t k = S.size(-1);
  LstsqResult r;
  if (k == 0) {
    r.solution = zeros(with_matrix(batch, n, cols(b)), A.options());
    r.rank = zeros(batch, TensorOptions(kInt64).device(A.device()));
  } else {
    const double tolerance = rcond.value_or(default_rtol(a));
    const Tensor kept = gt(S, mul(slice(S, -1, 0, 1), tolerance));
    const Tensor inverse_s = inverse_kept(S, kept);
    // X = V diag(1/s) U^T B, the small side first.
    r.solution = matmul(transpose(Vh, -2, -1),
                        mul(unsqueeze(inverse_s, -1), matmul(transpose(U, -2, -1), b)));
    const NoGradGuard no_grad;
    r.rank = sum(kept.to(kInt64), {-1});
  }
  const TensorOptions empty_options = A.options();
  r.residuals = zeros({0}, empty_options);
  if (m > n && k > 0 && driver != "gelsy") {  // PyTorch's gelsy gives none
    bool full_rank = true;
    {
      const NoGradGuard no_grad;
      full_rank = r.rank.cpu().eq(static_cast<double>(n)).all().item<bool>();
    }
    if (full_rank) r.residuals = sum(square(sub(matmul(a, r.solution), b)), {-2});
  }
  if (driver == "gels") r.rank = zeros({0}, TensorOptions(kInt64).device(A.device()));
  r.singular_values = driver == "gelsd" || driver == "gelss" ? S : zeros({0}, empty_options);
  if (vector_rhs) r.solution = squeeze(r.solution, -1);  // the residuals keep their (*, 1)
  return r;
}

Tensor matrix_exp(const Tensor& A) {
  LG_PROFILE_OP(A);
  const char* op = "linalg_matrix_exp";
  check_matrices(op, A, "A", /*square=*/true);
  const std::int64_t n = cols(A);
  if (A.numel() == 0) return A.clone();
  // Each matrix's squarings s = max(0, ceil(log2(|A|_1 / theta_13))), theta_13 = 5.37 (Higham
  // 2005, Table 2.3: the [13/13] approximant's backward error stays below the unit roundoff of
  // float64 there, so of float32 too).
  constexpr double kTheta13 = 5.371920351148152;
  Tensor squarings;
  std::int64_t most = 0;
  {
    const NoGradGuard no_grad;
    const Tensor norms = matrix_norm(A, 1.0).to(kFloat64).cpu().contiguous();
    Tensor s = empty(norms.shape(), TensorOptions(kFloat64));
    const double* v = norms.data_ptr<double>();
    double* out = s.data_ptr<double>();
    for (std::int64_t i = 0; i < norms.numel(); ++i) {
      LG_CHECK(std::isfinite(v[i]), op, ": A holds a NaN or an infinity (A of shape ", A.shape(),
               ")");
      const double e = v[i] > kTheta13 ? std::ceil(std::log2(v[i] / kTheta13)) : 0.0;
      out[i] = e;
      most = std::max(most, static_cast<std::int64_t>(e));
    }
    squarings = s.to(A.dtype()).to(A.device());
  }
  const Tensor scaled = div(A, unsqueeze(unsqueeze(exp2(squarings), -1), -1));
  static constexpr double b[] = {64764752532480000.0,
                                 32382376266240000.0,
                                 7771770303897600.0,
                                 1187353796428800.0,
                                 129060195264000.0,
                                 10559470521600.0,
                                 670442572800.0,
                                 33522128640.0,
                                 1323241920.0,
                                 40840800.0,
                                 960960.0,
                                 16380.0,
                                 182.0,
                                 1.0};
  const Tensor identity = expand(eye(n, A.options()), A.shape());
  const Tensor a2 = matmul(scaled, scaled);
  const Tensor a4 = matmul(a2, a2);
  const Tensor a6 = matmul(a4, a2);
  auto combination = [&](double c6, double c4, double c2) {
    return add(add(mul(a6, c6), mul(a4, c4)), mul(a2, c2));
  };
  const Tensor u_inner = add(matmul(a6, combination(b[13], b[11], b[9])),
                             add(combination(b[7], b[5], b[3]), mul(identity, b[1])));
  const Tensor u = matmul(scaled, u_inner);
  const Tensor v = add(matmul(a6, combination(b[12], b[10], b[8])),
                       add(combination(b[6], b[4], b[2]), mul(identity, b[0])));
  Tensor r = solve(sub(v, u), add(v, u));
  // Square each matrix its own number of times.
  for (std::int64_t i = 0; i < most; ++i) {
    const Tensor more = gt(squarings, static_cast<double>(i));
    r = where(unsqueeze(unsqueeze(more, -1), -1), matmul(r, r), r);
  }
  return r;
}

}  // namespace leangrad::linalg

namespace leangrad {

Tensor inverse(const Tensor& A) {
  return linalg::inv(A);
}
Tensor det(const Tensor& A) {
  return linalg::det(A);
}
Tensor matrix_exp(const Tensor& A) {
  return linalg::matrix_exp(A);
}

Tensor logdet(const Tensor& A) {
  // log(sign): 0 for a positive determinant, NaN for a negative one, -inf for 0 (then -inf).
  const auto [sign, logabsdet] = linalg::slogdet(A);
  return add(logabsdet, log(sign));
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  return linalg::slogdet(A);
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  LG_PROFILE_OP(B, L);
  const Tensor lower = upper ? transpose(L, -2, -1) : L;
  const Tensor y = linalg::solve_triangular(lower, B, /*upper=*/false);
  return linalg::solve_triangular(transpose(lower, -2, -1), y, /*upper=*/true);
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  LG_PROFILE_OP(L);
  const char* op = "cholesky_inverse";
  LG_CHECK(L.defined(), op, ": expected a defined factor, got an undefined Tensor()");
  LG_CHECK_SHAPE(L.dim() >= 2 && L.size(-1) == L.size(-2), op,
                 ": expected square factors (*, n, n), got shape ", L.shape());
  LG_CHECK_DTYPE(L.dtype() == kFloat32 || L.dtype() == kFloat64, op,
                 ": expected float32 or float64, got ", L.dtype());
  // A^-1 solves A X = I; the identity broadcasts over L's batch.
  return cholesky_solve(eye(L.size(-1), L.options()), L, upper);
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& A) {
  LG_PROFILE_OP(A);
  const char* op = "geqrf";
  linalg::check_matrices(op, A, "A", /*square=*/false);
  const std::int64_t m = linalg::rows(A);
  const std::int64_t n = linalg::cols(A);
  const Shape batch = linalg::batch_shape(A);
  Tensor a = linalg::host_copy(A);
  Tensor tau = linalg::host_empty(linalg::with_vector(batch, std::min(m, n)), A.dtype());
  linalg::with_real(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    kernels::geqrf<T>(a.data_ptr<T>(), tau.data_ptr<T>(), linalg::batch_count(batch, op), m, n);
  });
  return {linalg::on_device_of(a, A), linalg::on_device_of(tau, A)};
}

Tensor orgqr(const Tensor& A, const Tensor& tau) {
  return linalg::householder_product(A, tau);
}

Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& other, bool left, bool transpose) {
  LG_PROFILE_OP(A, tau, other);
  const char* op = "ormqr";
  linalg::check_matrices(op, A, "input", /*square=*/false);
  linalg::check_matrices(op, other, "other", /*square=*/false);
  linalg::check_pair(op, A, "input", other, "other");
  const std::int64_t k = linalg::check_tau(op, A, tau);
  const std::int64_t mn = linalg::rows(A);
  LG_CHECK_SHAPE(linalg::batch_shape(other) == linalg::batch_shape(A), op,
                 ": expected other with input's batch dims, got input of shape ", A.shape(),
                 " and other of shape ", other.shape());
  LG_CHECK_SHAPE((left ? linalg::rows(other) : linalg::cols(other)) == mn && k <= mn, op,
                 ": expected other's ", left ? "rows" : "columns", " to number input's ", mn,
                 " rows (and tau at most as many), got input of shape ", A.shape(),
                 ", tau of shape ", tau.shape(), " and other of shape ", other.shape());
  // Q = H_0 ... H_(k-1), each H_j symmetric: Q C applies H_(k-1) first, Q^T C H_0 first; C Q
  // applies H_0 first, C Q^T H_(k-1) first.
  const bool from_first = left == transpose;
  const Tensor row = arange(static_cast<double>(mn), A.options());
  Tensor out = other;
  for (std::int64_t step = 0; step < k; ++step) {
    const std::int64_t j = from_first ? step : k - 1 - step;
    const Tensor v = linalg::reflector(A, j, row);
    const Tensor t = linalg::tau_at(tau, j);
    out = left ? sub(out, mul(t, matmul(unsqueeze(v, -1), matmul(unsqueeze(v, -2), out))))
               : sub(out, mul(t, matmul(matmul(out, unsqueeze(v, -1)), unsqueeze(v, -2))));
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots,
                                             bool unpack_data, bool unpack_pivots) {
  LG_PROFILE_OP(LU, pivots);
  const char* op = "lu_unpack";
  LG_CHECK(LU.defined() && pivots.defined(), op,
           ": expected a defined LU and pivots, got an undefined Tensor()");
  LG_CHECK_SHAPE(LU.dim() >= 2, op, ": expected LU of at least 2 dims (*, m, n), got shape ",
                 LU.shape());
  LG_CHECK_DTYPE(is_floating(LU.dtype()), op, ": expected a floating LU, got ", LU.dtype());
  const std::int64_t m = LU.size(-2);
  const std::int64_t k = std::min(m, LU.size(-1));
  const Shape batch(LU.shape().begin(), LU.shape().end() - 2);
  Shape pivots_shape = batch;
  pivots_shape.push_back(k);
  LG_CHECK_DTYPE(pivots.dtype() == kInt32, op, ": expected int32 pivots (lu_factor's), got ",
                 pivots.dtype());
  LG_CHECK_SHAPE(pivots.shape() == pivots_shape, op, ": expected pivots of shape ", pivots_shape,
                 " for LU of shape ", LU.shape(), ", got ", pivots.shape());
  LG_CHECK_DEVICE(pivots.device() == LU.device(), op, ": LU is on ", LU.device(),
                  " but pivots are on ", pivots.device());
  Tensor L = zeros({0}, LU.options());
  Tensor U = zeros({0}, LU.options());
  Tensor P = zeros({0}, LU.options());
  if (unpack_data) {
    // L's multipliers below the diagonal of the first k columns with a unit diagonal; U the
    // first k rows on and above it.
    L = add(tril(narrow(LU, -1, 0, k), -1), eye(m, k, LU.options()));
    U = triu(narrow(LU, -2, 0, k));
  }
  if (unpack_pivots) {
    // Row i of L U is row order[i] of A (the swaps applied in turn, checked on the host), so
    // A = P L U with P[order[i], i] = 1: permutation_matrix's.
    P = linalg::permutation_matrix(linalg::row_order(pivots, m, op, /*below_only=*/false),
                                   LU.dtype());
  }
  return {std::move(P), std::move(L), std::move(U)};
}

Tensor nuclear_norm(const Tensor& A, bool keepdim) {
  return linalg::matrix_norm(A, "nuc", {-2, -1}, keepdim);
}

Tensor nuclear_norm(const Tensor& A, const std::vector<std::int64_t>& dim, bool keepdim) {
  return linalg::matrix_norm(A, "nuc", dim, keepdim);
}

Tensor frobenius_norm(const Tensor& A) {
  return linalg::vector_norm(A, 2.0);
}

Tensor frobenius_norm(const Tensor& A, const std::vector<std::int64_t>& dim, bool keepdim) {
  return linalg::vector_norm(A, 2.0, dim, keepdim);
}

}  // namespace leangrad
