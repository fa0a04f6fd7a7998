// The products and rearrangements of autograd/linalg_functions.h.
#include <leangrad/autograd/linalg_functions.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/einsum.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

using autograd::check_operands;

namespace {

// batch1 (b, n, m) and batch2 (b, m, p) of baddbmm and addbmm, of one dtype and device.
void check_batches(const char* op, const Tensor& batch1, const Tensor& batch2) {
  check_operands(op, {batch1, batch2});
  LG_CHECK_SHAPE(batch1.dim() == 3 && batch2.dim() == 3 && batch1.size(0) == batch2.size(0) &&
                     batch1.size(2) == batch2.size(1),
                 op, ": expected batches (b, n, m) and (b, m, p), got ", batch1.shape(), " and ",
                 batch2.shape());
}

// beta input + alpha product, input broadcast to the product's shape (not read when beta is 0).
Tensor add_scaled(const char* op, const Tensor& input, const Tensor& product, double beta,
                  double alpha) {
  check_operands(op, {input, product});
  LG_CHECK_SHAPE(broadcast_shapes(input.shape(), product.shape(), op) == product.shape(), op,
                 ": input of shape ", input.shape(), " does not broadcast to the product's ",
                 product.shape());
  const Tensor scaled = alpha == 1.0 ? product : mul(product, alpha);
  if (beta == 0.0) return scaled;
  return add(beta == 1.0 ? input : mul(input, beta), scaled);
}

}  // namespace

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, double beta,
             double alpha) {
  LG_PROFILE_OP(input, mat1, mat2);
  check_operands("addmm", {mat1, mat2});
  LG_CHECK_SHAPE(mat1.dim() == 2 && mat2.dim() == 2 && mat1.size(1) == mat2.size(0),
                 "addmm: expected matrices (n, m) and (m, p), got ", mat1.shape(), " and ",
                 mat2.shape());
  return add_scaled("addmm", input, matmul(mat1, mat2), beta, alpha);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  LG_PROFILE_OP(input, mat, vec);
  check_operands("addmv", {mat, vec});
  LG_CHECK_SHAPE(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
                 "addmv: expected a matrix (n, m) and a vector (m), got ", mat.shape(), " and ",
                 vec.shape());
  return add_scaled("addmv", input, matmul(mat, vec), beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta,
               double alpha) {
  LG_PROFILE_OP(input, batch1, batch2);
  check_batches("baddbmm", batch1, batch2);
  return add_scaled("baddbmm", input, matmul(batch1, batch2), beta, alpha);
}

Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta,
              double alpha) {
  LG_PROFILE_OP(input, batch1, batch2);
  check_batches("addbmm", batch1, batch2);
  // The sum over the batch and the inner dim at once: (n, b m) @ (b m, p).
  return add_scaled("addbmm", input, einsum("bnm,bmp->np", {batch1, batch2}), beta, alpha);
}

Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<std::int64_t>& dims_a,
                 const std::vector<std::int64_t>& dims_b) {
  LG_PROFILE_OP(a, b);
  const char* op = "tensordot";
  check_operands(op, {a, b});
  LG_CHECK_SHAPE(dims_a.size() == dims_b.size(), op, ": ", dims_a.size(), " dims of a against ",
                 dims_b.size(), " of b (expected as many)");
  LG_CHECK_SHAPE(a.dim() + b.dim() <= 52, op, ": ranks ", a.dim(), " and ", b.dim(),
                 " are too many dims");
  // An einsum with a letter per dim: each contracted pair shares one.
  const auto letter = [](std::int64_t i) {
    return static_cast<char>(i < 26 ? 'a' + i : 'A' + (i - 26));
  };
  std::string ta, tb, out;
  for (std::int64_t d = 0; d < a.dim(); ++d)
    ta.push_back(letter(d));
  for (std::int64_t d = 0; d < b.dim(); ++d)
    tb.push_back(letter(a.dim() + d));
  std::vector<bool> contracted_a(static_cast<std::size_t>(a.dim()), false);
  std::vector<bool> contracted_b(static_cast<std::size_t>(b.dim()), false);
  for (std::size_t i = 0; i < dims_a.size(); ++i) {
    const std::int64_t da = wrap_dim(dims_a[i], a.dim(), op);
    const std::int64_t db = wrap_dim(dims_b[i], b.dim(), op);
    LG_CHECK_SHAPE(
        !contracted_a[static_cast<std::size_t>(da)] && !contracted_b[static_cast<std::size_t>(db)],
        op, ": a dim is contracted twice (dims ", Shape(dims_a), " and ", Shape(dims_b), ")");
    LG_CHECK_SHAPE(a.size(da) == b.size(db), op, ": dim ", da, " of a (size ", a.size(da),
                   ") and dim ", db, " of b (size ", b.size(db), ") differ; shapes ", a.shape(),
                   " and ", b.shape());
    contracted_a[static_cast<std::size_t>(da)] = true;
    contracted_b[static_cast<std::size_t>(db)] = true;
    tb[static_cast<std::size_t>(db)] = ta[static_cast<std::size_t>(da)];
  }
  for (std::int64_t d = 0; d < a.dim(); ++d)
    if (!contracted_a[static_cast<std::size_t>(d)]) out.push_back(ta[static_cast<std::size_t>(d)]);
  for (std::int64_t d = 0; d < b.dim(); ++d)
    if (!contracted_b[static_cast<std::size_t>(d)]) out.push_back(tb[static_cast<std::size_t>(d)]);
  return einsum(ta + "," + tb + "->" + out, {a, b});
}

Tensor tensordot(const Tensor& a, const Tensor& b, std::int64_t n) {
  LG_PROFILE_OP(a, b);
  check_operands("tensordot", {a, b});
  LG_CHECK_SHAPE(n >= 0 && n <= a.dim() && n <= b.dim(), "tensordot: cannot contract ", n,
                 " dims of tensors of shapes ", a.shape(), " and ", b.shape());
  std::vector<std::int64_t> dims_a, dims_b;
  for (std::int64_t i = 0; i < n; ++i) {
    dims_a.push_back(a.dim() - n + i);
    dims_b.push_back(i);
  }
  return tensordot(a, b, dims_a, dims_b);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  check_operands("kron", {a, b});
  const std::int64_t rank = std::max(a.dim(), b.dim());
  // a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...): their product, reshaped, is the blocks.
  Shape sa, sb, out;
  for (std::int64_t d = 0; d < rank; ++d) {
    const std::int64_t na = d < rank - a.dim() ? 1 : a.size(d - (rank - a.dim()));
    const std::int64_t nb = d < rank - b.dim() ? 1 : b.size(d - (rank - b.dim()));
    sa.insert(sa.end(), {na, 1});
    sb.insert(sb.end(), {1, nb});
    out.push_back(checked_mul(na, nb, "kron"));
  }
  return reshape(mul(reshape(a, sa), reshape(b, sb)), out);
}

Tensor diagonal(const Tensor& input, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  LG_PROFILE_OP(input);
  const char* op = "diagonal";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() >= 2, op, ": expected at least 2 dims, got shape ", input.shape());
  const std::int64_t d1 = wrap_dim(dim1, input.dim(), op);
  const std::int64_t d2 = wrap_dim(dim2, input.dim(), op);
  LG_CHECK_SHAPE(d1 != d2, op, ": dim1 and dim2 are both dim ", d1, " (shape ", input.shape(), ")");
  // Cut the rows (offset < 0) or columns (offset > 0) before the diagonal, then a square.
  Tensor x = input;
  const std::int64_t cut_dim = offset >= 0 ? d2 : d1;
  const std::int64_t size = x.size(cut_dim);
  // min(|offset|, size), without negating INT64_MIN.
  const std::int64_t cut = offset >= 0 ? std::min(offset, size) : (offset < -size ? size : -offset);
  x = narrow(x, cut_dim, cut, x.size(cut_dim) - cut);
  const std::int64_t n = std::min(x.size(d1), x.size(d2));
  x = narrow(narrow(x, d1, 0, n), d2, 0, n);
  // The two dims last, made one of n * n elements, and every (n + 1)-th taken.
  std::vector<std::int64_t> order;
  Shape kept;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    order.push_back(d);
    kept.push_back(x.size(d));
  }
  order.insert(order.end(), {d1, d2});
  kept.push_back(n * n);
  return slice(reshape(permute(x, order), kept), -1, 0, n * n, n + 1);
}

Tensor diag(const Tensor& input, std::int64_t k) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "diag: expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 1 || input.dim() == 2, "diag: expected a 1-d or 2-d input, got ",
                 "shape ", input.shape());
  if (input.dim() == 2) return diagonal(input, k, 0, 1);
  // The vector, then a zero, picked into an (m, m) matrix: position (i, i + k) takes element i
  // (row i - k for k < 0), every other position the zero.
  const std::int64_t n = input.size(0);
  LG_CHECK_SHAPE(k != std::numeric_limits<std::int64_t>::min(), "diag: the diagonal ", k,
                 " is out of range");
  const std::int64_t skip = k >= 0 ? k : -k;
  const std::int64_t m = checked_add(n, skip, "diag");
  std::vector<std::int64_t> picks(static_cast<std::size_t>(checked_mul(m, m, "diag")), n);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t row = k >= 0 ? i : i + skip;
    const std::int64_t col = k >= 0 ? i + skip : i;
    picks[static_cast<std::size_t>(row * m + col)] = i;
  }
  const Tensor padded = cat({input, zeros({1}, input.options())}, 0);
  const Tensor index = tensor(picks, {m * m}).to(input.device());
  return reshape(index_select(padded, 0, index), {m, m});
}

Tensor trace(const Tensor& input) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "trace: expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 2, "trace: expected a 2-d input, got shape ", input.shape());
  return sum(diagonal(input));
}

Tensor inner(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(),
           "inner: expected defined tensors, got an undefined Tensor()");
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  LG_CHECK_SHAPE(a.size(-1) == b.size(-1), "inner: expected the last dims of one size, got shapes ",
                 a.shape(), " and ", b.shape());
  return tensordot(a, b, {a.dim() - 1}, {b.dim() - 1});
}

Tensor cross(const Tensor& a, const Tensor& b, std::int64_t dim) {
  LG_PROFILE_OP(a, b);
  const char* op = "cross";
  check_operands(op, {a, b});
  LG_CHECK_SHAPE(a.dim() == b.dim(), op, ": expected operands of one rank, got shapes ", a.shape(),
                 " and ", b.shape());
  const std::int64_t d = wrap_dim(dim, a.dim(), op);
  LG_CHECK_SHAPE(a.size(d) == 3 && b.size(d) == 3, op, ": dim ", d, " must have size 3 in both, ",
                 "got shapes ", a.shape(), " and ", b.shape());
  // c_i = a_(i+1) b_(i+2) - a_(i+2) b_(i+1), indices mod 3.
  const auto shifted = [d](const Tensor& t, std::int64_t by) { return roll(t, {-by}, {d}); };
  return sub(mul(shifted(a, 1), shifted(b, 2)), mul(shifted(a, 2), shifted(b, 1)));
}

namespace {

// PyTorch's _euclidean_dist: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 0, its square
// root; the gradient PyTorch's _euclidean_dist_backward gives, with 0 where the distance is 0
// (written with differentiable functions, so it differentiates again).
Tensor euclidean_by_products(const Tensor& x1, const Tensor& x2) {
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor n1 = sum(mul(x1, x1), {-1}, /*keepdim=*/true);
    const Tensor n2 = sum(mul(x2, x2), {-1}, /*keepdim=*/true);
    const Tensor left = cat({mul(x1, -2.0), n1, ones_like(n1)}, -1);
    const Tensor right = cat({x2, ones_like(n2), n2}, -1);
    out = sqrt(clamp_min(matmul(left, transpose(right, -1, -2)), 0.0));
  }
  return autograd::record_op(
      "cdist", out, {x1, x2}, {x1, x2, out},
      [](const autograd::BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& a = c.saved[0];
        const Tensor& b = c.saved[1];
        const Tensor& d = c.saved[2];
        // g / d with 0 where d is 0; the division by a safe d, so that no infinity meets the
        // mask's zero in a second derivative.
        const Tensor at_zero = eq(d, 0.0);
        const Tensor ratio =
            where(at_zero, zeros_like(d), div(c.grad, where(at_zero, ones_like(d), d)));
        std::vector<Tensor> grads(2);
        if (c.needs(0)) {
          grads[0] =
              autograd::sum_to(sub(mul(a, sum(ratio, {-1}, true)), matmul(ratio, b)), c.shape(0));
        }
        if (c.needs(1)) {
          grads[1] = autograd::sum_to(
              sub(mul(b, unsqueeze(sum(ratio, {-2}), -1)), matmul(transpose(ratio, -1, -2), a)),
              c.shape(1));
        }
        return grads;
      });
}

}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  LG_PROFILE_OP(x1, x2);
  const char* op = "cdist";
  check_operands(op, {x1, x2}, /*floating=*/true);
  LG_CHECK_SHAPE(x1.dim() >= 2 && x2.dim() >= 2 && x1.size(-1) == x2.size(-1), op,
                 ": expected (*, P, M) and (*, R, M), got shapes ", x1.shape(), " and ",
                 x2.shape());
  LG_CHECK(p >= 0, op, ": expected p >= 0, got ", p);
  // The batch dims broadcast: each operand expanded to them.
  const Shape batch1(x1.shape().begin(), x1.shape().end() - 2);
  const Shape batch2(x2.shape().begin(), x2.shape().end() - 2);
  Shape batch = broadcast_shapes(batch1, batch2, op);
  Shape s1 = batch, s2 = batch;
  s1.insert(s1.end(), {x1.size(-2), x1.size(-1)});
  s2.insert(s2.end(), {x2.size(-2), x2.size(-1)});
  const Tensor a = x1.shape() == s1 ? x1 : expand(x1, s1);
  const Tensor b = x2.shape() == s2 ? x2 : expand(x2, s2);
  if (p == 2.0 && (a.size(-2) > 25 || b.size(-2) > 25)) return euclidean_by_products(a, b);
  // (*, P, 1, M) - (*, 1, R, M), its norm over M.
  return norm(sub(unsqueeze(a, -2), unsqueeze(b, -3)), p, {-1});
}

Tensor diff(const Tensor& input, std::int64_t n, std::int64_t dim) {
  LG_PROFILE_OP(input);
  const char* op = "diff";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() >= 1, op, ": expected at least 1 dim, got a 0-d input");
  LG_CHECK(n >= 0, op, ": expected n >= 0, got ", n);
  const std::int64_t d = wrap_dim(dim, input.dim(), op);
  Tensor x = input;
  for (std::int64_t i = 0; i < n && x.size(d) > 0; ++i) {
    const std::int64_t length = x.size(d) - 1;
    const Tensor next = narrow(x, d, 1, length), previous = narrow(x, d, 0, length);
    x = x.dtype() == kBool ? ne(next, previous) : sub(next, previous);  // bool: xor, as torch's
  }
  return n == 0 ? clone(x) : x;
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  LG_PROFILE_OP(mat, vec);
  check_operands("mv", {mat, vec});
  LG_CHECK_SHAPE(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
                 "mv: expected a matrix (n, m) and a vector (m), got ", mat.shape(), " and ",
                 vec.shape());
  return matmul(mat, vec);
}

Tensor vdot(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  check_operands("vdot", {a, b});
  LG_CHECK_SHAPE(a.dim() == 1 && b.dim() == 1 && a.size(0) == b.size(0),
                 "vdot: expected two 1-d tensors of one size, got ", a.shape(), " and ", b.shape());
  return dot(a, b);
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta,
            double alpha) {
  LG_PROFILE_OP(input, vec1, vec2);
  check_operands("addr", {vec1, vec2});
  LG_CHECK_SHAPE(vec1.dim() == 1 && vec2.dim() == 1, "addr: expected two vectors, got ",
                 vec1.shape(), " and ", vec2.shape());
  return add_scaled("addr", input, outer(vec1, vec2), beta, alpha);
}

Tensor chain_matmul(const std::vector<Tensor>& matrices) {
  LG_CHECK(!matrices.empty(), "chain_matmul: expected at least one matrix, got none");
  for (std::size_t i = 0; i < matrices.size(); ++i) {
    LG_CHECK(matrices[i].defined(), "chain_matmul: matrix ", i, " is an undefined Tensor()");
    LG_CHECK_SHAPE(matrices[i].dim() == 2, "chain_matmul: expected 2-d matrices, got shape ",
                   matrices[i].shape(), " (matrix ", i, ")");
  }
  if (matrices.size() == 1) return clone(matrices[0]);
  return linalg::multi_dot(matrices);
}

Tensor dist(const Tensor& a, const Tensor& b, double p) {
  LG_PROFILE_OP(a, b);
  check_operands("dist", {a, b}, /*floating=*/true);
  LG_CHECK(p >= 0, "dist: expected p >= 0, got ", p);
  return norm(sub(a, b), p);
}

Tensor pdist(const Tensor& x, double p) {
  LG_PROFILE_OP(x);
  const char* op = "pdist";
  check_operands(op, {x}, /*floating=*/true);
  LG_CHECK_SHAPE(x.dim() == 2, op, ": expected a 2-d input (N, M), got shape ", x.shape());
  LG_CHECK(p >= 0, op, ": expected p >= 0, got ", p);
  // The pairs (i, j), i < j, row by row: the upper triangle's coordinates.
  const Tensor pairs =
      triu_indices(x.size(0), x.size(0), 1, TensorOptions(kInt64).device(x.device()));
  const Tensor first = index_select(x, 0, select(pairs, 0, 0));
  const Tensor second = index_select(x, 0, select(pairs, 0, 1));
  return norm(sub(first, second), p, {1});
}

Tensor renorm(const Tensor& x, double p, std::int64_t dim, double maxnorm) {
  LG_PROFILE_OP(x);
  const char* op = "renorm";
  check_operands(op, {x}, /*floating=*/true);
  LG_CHECK_SHAPE(x.dim() >= 1, op, ": expected at least 1 dim, got a 0-d input");
  LG_CHECK(p > 0, op, ": expected p > 0, got ", p);
  LG_CHECK(maxnorm >= 0, op, ": expected maxnorm >= 0, got ", maxnorm);
  const std::int64_t d = wrap_dim(dim, x.dim(), op);
  DimList others;
  for (std::int64_t i = 0; i < x.dim(); ++i)
    if (i != d) others.push_back(i);
  // Each slice's norm (kept as a size-1 dim each), and the factor that scales the slices above
  // maxnorm down to it; PyTorch's 1e-7 keeps a slice at maxnorm just below.
  const Tensor norms = others.empty() ? abs(x) : norm(x, p, others, /*keepdim=*/true);
  const Tensor factor =
      where(gt(norms, maxnorm), rdiv(add(norms, 1e-7), maxnorm), ones_like(norms));
  return mul(x, factor);
}

Tensor vander(const Tensor& x, std::optional<std::int64_t> N, bool increasing) {
  LG_PROFILE_OP(x);
  const char* op = "vander";
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(x.dim() == 1, op, ": expected a 1-d input, got shape ", x.shape());
  const std::int64_t columns = N.value_or(x.size(0));
  LG_CHECK_SHAPE(columns >= 0, op, ": expected N >= 0, got ", columns);
  // PyTorch's integral result is int64, so the products are too.
  const Tensor base = is_floating(x.dtype()) ? x : x.to(kInt64);
  if (columns == 0) return zeros({x.size(0), 0}, base.options());
  // Column j of the increasing matrix is x^j: the running product of a column of ones and
  // N - 1 columns of x, as PyTorch's (so its rounding, one product per power).
  Tensor powers = ones({x.size(0), 1}, base.options());
  if (columns > 1) {
    powers = cumprod(cat({powers, expand(unsqueeze(base, 1), {x.size(0), columns - 1})}, 1), 1);
  }
  return increasing ? powers : flip(powers, {1});
}

}  // namespace leangrad
