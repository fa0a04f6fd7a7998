// kernels/ops.h — the table of contents of every kernel leangrad has.
//
// Each function here is the tensor-level entry of one op: it checks dtypes, devices and shapes
// (errors name them), allocates the output, makes operands contiguous where its launcher needs
// it, makes the tensors' CUDA device current (cuda::DeviceGuard) and switches on the device to a
// raw-pointer launcher of the backend contract (kernels/backend.h): kernels::cpu::X in
// kernels/cpu/, kernels::cuda::X in kernels/cuda/. These functions know nothing of autograd; the
// differentiable public functions (autograd/functions.h, autograd/nn_functions.h) call them.
// Implementations, one file per op or family:
//   ops_elementwise.cpp  binary, unary, compare, where     ops_copy.cpp    copy_, cast, fill_,
//                        in place: binary_, unary_,                        contiguous
//                        activation_
//   ops_shape.cpp        cat
//   ops_reduce.cpp       sum, mean, max, prod, argmax      ops_linalg.cpp  matmul
//   ops_scan.cpp         cumsum, cumprod, logcumsumexp,    ops_sort.cpp    argsort,
//                        cummax, cummin                                    select_rank,
//                                                                          argsort_at,
//                                                                          searchsorted
//   ops_random.cpp       uniform, normal (Philox: the same numbers on every device)
//   ops_tanhexp.cpp      TanhExp                           ops_group_norm.cpp  GroupNorm,
//                                                                          LayerNorm
//   ops_conv.cpp         conv2d, conv3d                    ops_layers.cpp  pooling, dropout,
//   ops_optim.cpp        the optimizers, grad_norm, clip_grads             softmax, losses
//   ops_indexing.cpp     embedding, index_select, gather,  ops_upsample.cpp  interpolation
//                        scatter_add, scatter
//   ops_attention.cpp    fused attention (CPU)
//   ops_orthogonal_polynomials.cpp  the Chebyshev, Hermite, Laguerre and Legendre polynomials
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/core/tensor.h>
#include <leangrad/kernels/optim_math.h>

namespace leangrad {

class Generator;

// The elementwise operations, one enum per kernel family. Kernels switch on these.
enum class BinaryOp : std::uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Atan2,
  Remainder,    // the sign of the divisor (Python's %, torch.remainder)
  Fmod,         // the sign of the dividend (C's fmod, torch.fmod)
  FloorDivide,  // the quotient rounded down (Python's //, torch.floor_divide)
  BitwiseAnd,   // integral and bool operands only
  BitwiseOr,
  BitwiseXor,
  Zeta,       // the Hurwitz zeta function zeta(s, q) (torch.special.zeta); floating only
  Hypot,      // sqrt(a^2 + b^2) without overflow; floating only
  Copysign,   // |a| with b's sign bit; floating only
  Nextafter,  // the next representable value after a toward b; float32 and float64 only
  Fmax,       // the larger, NaN ignored unless both are (C's fmax, torch.fmax)
  Fmin,
  Igamma,   // the regularized lower incomplete gamma function P(a, x); floating only
  Igammac,  // its complement Q(a, x) = 1 - P(a, x)
  Gcd,      // integral only (bool refused), as the shifts
  Lcm,
  LeftShift,   // a << b; 0 where b is negative or at least the width
  RightShift,  // a >> b, arithmetic; the sign's fill where b is negative or at least the width
};
// The last of each elementwise op enum: kernels/op_dispatch.h's with_op knows the ops up to it.
// A new op goes last and moves it.
inline constexpr BinaryOp kLastBinaryOp = BinaryOp::RightShift;
enum class UnaryOp : std::uint8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Tanh,
  Sigmoid,
  Relu,
  Erf,
  Expm1,
  Log1p,
  Sin,
  Cos,
  Rsqrt,
  Reciprocal,
  Sign,
  Floor,
  Ceil,
  Round,
  Trunc,
  Log2,
  Log10,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Exp2,
  Lgamma,   // log|Gamma(x)|
  Digamma,  // d/dx log Gamma(x)
  Erfinv,
  Erfc,   // 1 - erf(x), without the cancellation
  Erfcx,  // exp(x^2) erfc(x)
  Sinc,   // sin(pi x) / (pi x), 1 at 0
  I0,     // the modified Bessel functions of the first kind of order 0 and 1,
  I0e,    // and their exponentially scaled forms exp(-|x|) I(x)
  I1,
  I1e,
  Ndtri,     // the inverse of the standard normal distribution function
  BesselJ0,  // the Bessel functions of the first and second kind of order 0 and 1,
  BesselJ1,
  BesselY0,
  BesselY1,
  BesselK0,  // the modified Bessel functions of the second kind of order 0 and 1,
  BesselK1,
  BesselK0e,  // and their exponentially scaled forms exp(x) K(x)
  BesselK1e,
  SphericalBesselJ0,  // sin(x) / x, 1 at 0
  FrexpMantissa,      // x = m 2^e with 1/2 <= |m| < 1: m,
  FrexpExponent,      // and e (in the input's dtype; exact in every floating one)
  AiryAi,             // the Airy function Ai(x),
  AiryAiPrime,        // and its derivative Ai'(x)
};
inline constexpr UnaryOp kLastUnaryOp = UnaryOp::AiryAiPrime;
enum class CompareOp : std::uint8_t { Gt, Lt, Ge, Le, Eq, Ne };
inline constexpr CompareOp kLastCompareOp = CompareOp::Ne;
enum class ReduceOp : std::uint8_t { Sum, Mean, Max, Prod, Min };
// The running reductions of ops::scan: cumsum, cumprod and logcumsumexp.
enum class ScanOp : std::uint8_t { Sum, Prod, LogSumExp };
// How ops::scatter combines each src element into its place: Assign writes it (the last one in
// index order along its line wins), the others fold it into what is there (Max and Min propagate
// NaN).
enum class ScatterOp : std::uint8_t { Assign, Sum, Prod, Max, Min };
// The fused activations. The first four are what an in-place op writes in one pass
// (ops::activation_), each bitwise the composition of elementwise ops PyTorch's definition
// spells out (kernels/elementwise_math.h; clamp's the where-composition its comment gives);
// ops::activation writes the same bits out of place. The others are computed out of place only,
// each in one pass and one rounding: gelu (GeluTanh: approximate "tanh"), silu, mish and
// softplus, and the elementwise losses' functions of the difference d = input - target,
// smooth_l1_loss's and huber_loss's. Each has a gradient kernel (ops::activation_backward), one
// pass and one rounding.
enum class ActivationOp : std::uint8_t {
  LeakyRelu,
  Elu,
  EluResult,  // elu's gradient from its output (activation_backward only): elu_'s and selu_'s
  Hardtanh,
  Clamp,
  Gelu,
  GeluTanh,
  Silu,
  Mish,
  Softplus,
  SmoothL1,  // of d = input - target (autograd/losses.cpp)
  Huber,
  Hardswish,
  Hardsigmoid,
  LogSigmoid,
  Softsign,
  Tanhshrink,
  Celu,
  Softshrink,
  Hardshrink,
  Threshold
};

// The orthogonal polynomials of ops::orthogonal_polynomial (kernels/orthogonal_polynomials.h;
// the kernels rely on the order: the four Chebyshev kinds T, U, V, W, then the same shifted).
enum class OrthogonalPolynomial : std::uint8_t {
  ChebyshevT,
  ChebyshevU,
  ChebyshevV,
  ChebyshevW,
  ShiftedChebyshevT,
  ShiftedChebyshevU,
  ShiftedChebyshevV,
  ShiftedChebyshevW,
  HermiteH,   // physicists': H_{k+1} = 2x H_k - 2k H_{k-1}
  HermiteHe,  // probabilists': He_{k+1} = x He_k - k He_{k-1}
  LaguerreL,
  LegendreP,
};

const char* op_name(BinaryOp op);      // "add", "sub", ...
const char* op_name(UnaryOp op);       // "neg", "exp", ...
const char* op_name(CompareOp op);     // "gt", "eq", ...
const char* op_name(ReduceOp op);      // "sum", "mean", "max", "prod", "min"
const char* op_name(ScanOp op);        // "cumsum", "cumprod", "logcumsumexp"
const char* op_name(ScatterOp op);     // "scatter", "scatter_add", "scatter_prod", ...
const char* op_name(ActivationOp op);  // "leaky_relu", "elu", ..., "softplus", "huber_loss"
// "special_chebyshev_polynomial_t", ..., "special_legendre_polynomial_p" (the public names)
const char* op_name(OrthogonalPolynomial p);

namespace layers_math {
enum class ResizeMode : std::uint8_t;  // kernels/layers_math.h
}  // namespace layers_math

namespace ops {

// ---- Elementwise (ops_elementwise.cpp; cast, fill_ and copy_ in ops_copy.cpp) -------------
// out = a op b with NumPy broadcasting; the result dtype is PyTorch's result_type (promote_types,
// where a 0-d tensor beside one with dims counts only when its category is higher), except that
// Div and Atan2 of two integral tensors give float32 (true division, as PyTorch). compare and
// where too.
// Two bool operands: add and maximum are logical or, mul and minimum logical and (bool results,
// as PyTorch); sub and pow are refused.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
// out = a op s (or s op a when scalar_first). An integral tensor with a non-integral scalar gives
// float32; otherwise the tensor's dtype is kept. An integral tensor to a negative integral power
// is refused, as PyTorch's pow(Tensor, Scalar).
Tensor binary(BinaryOp op, const Tensor& a, double s, bool scalar_first = false);
// self = self op other, other broadcast to self's shape; self keeps its dtype. Bumps the version.
void binary_(BinaryOp op, const Tensor& self, const Tensor& other);
void binary_(BinaryOp op, const Tensor& self, double s);
// Floating ops (exp, log, sqrt, tanh, sigmoid) on integral input give float32.
Tensor unary(UnaryOp op, const Tensor& a);
// self = op(self), written into self's memory by unary's own launcher (out and input the same
// pointer and strides: each element is read, then written, by one step of the loop, so a
// transposed or sliced view needs no temporary either): bitwise unary(op, self), with no second
// tensor. self keeps its dtype, so an op whose out-of-place result has another one (exp of int64
// gives float32) is refused, as PyTorch's "result type Float can't be cast to ...". Bumps the
// version.
void unary_(UnaryOp op, const Tensor& self);
// self = the activation of self in place, as unary_ (any strides; floating self but for Clamp):
//   LeakyRelu  negative_slope, -        x > 0 ? x : x * negative_slope
//   Elu        alpha, scale             (x > 0 ? x : expm1(x) * alpha) * scale  (scale 1: elu)
//   Hardtanh   min_val, max_val         x >= max_val ? max_val : x, then <= min_val ? min_val
//   Clamp      min, max                 x < min ? min : x, then > max ? max : that
// each rounded to self's dtype where the composition of elementwise ops that PyTorch's definition
// spells out rounds (where, mul, expm1, masked_fill; kernels/elementwise_math.h), the bits that
// ops::activation writes for the out-of-place functions of autograd/activations.cpp. Hardtanh's
// bounds must fit self's dtype (as masked_fill's value). Clamp is clamp()'s where-composition in
// one pass, for the numeric dtypes (integers too, not bool): a NaN bound stands for an absent one
// (a comparison with NaN is false, so clamp() leaves the values alone then too); the others must
// fit self's dtype, and be integral for an integral self (compared with the values exactly).
// Bumps the version.
void activation_(ActivationOp op, const Tensor& self, double p0, double p1 = 0.0);
// y = f(x), a new tensor of x's shape and dtype (floating, or any numeric one for Clamp).
// LeakyRelu, Elu, Hardtanh and Clamp take p0 and p1 as activation_ does and write its bits. The
// one-rounding activations compute f in float (double for float64) and round once, as PyTorch's
// kernels (kernels/elementwise_math.h):
//   Gelu, GeluTanh, Silu, Mish   no parameters
//   Softplus  beta, threshold    beta x > threshold ? x : log(1 + e^(beta x)) / beta
//   SmoothL1  beta > 0           |x| < beta ? 0.5 x^2 / beta : |x| - 0.5 beta
//   Huber     delta > 0          |x| < delta ? 0.5 x^2 : delta (|x| - 0.5 delta)
//   Hardswish, Hardsigmoid       x min(max(x + 3, 0), 6) / 6, min(max(x + 3, 0), 6) / 6
//   LogSigmoid, Softsign         log(sigmoid(x)) = min(x, 0) - log1p(e^-|x|), x / (1 + |x|)
//   Tanhshrink                   x - tanh(x)
//   Celu      alpha != 0         x > 0 ? x : alpha expm1(x / alpha)
//   Softshrink lambda >= 0       x > lambda ? x - lambda : x < -lambda ? x + lambda : 0
//   Hardshrink lambda            -lambda <= x <= lambda ? 0 : x
//   Threshold threshold, value   x <= threshold ? value : x
// (Softshrink's, Hardshrink's and Threshold's parameters rounded to x's dtype first, as PyTorch's
// kernels take them, so they must fit it.)
// Any strides.
Tensor activation(ActivationOp op, const Tensor& x, double p0 = 0.0, double p1 = 0.0);
// dx = grad_output f'(x) for those, with the forward's p0 and p1: grad_output and x of one shape,
// dtype and device; computed in float (double for float64) and rounded once, as PyTorch's
// leaky_relu_backward, elu_backward (from the input), hardtanh_backward, gelu_backward,
// silu_backward, mish_backward, softplus_backward, smooth_l1_loss_backward and
// huber_loss_backward (with the reduction's scale in grad_output), hardswish_backward,
// hardsigmoid_backward, log_sigmoid_backward, celu's elu_backward, softshrink_backward,
// hardshrink_backward and threshold_backward (softsign's and tanhshrink's, which PyTorch
// composes, in closed form). Each kink takes PyTorch's side: leaky_relu's and elu's 0 the
// negative side, hardtanh's bounds 0, softplus's threshold the smooth side, smooth_l1's and
// huber's |x| = beta the linear side (the same slope there), hardswish's -3 the middle piece's
// slope (-1/2) and 3 the linear side's (1), hardsigmoid's 0, the shrinks' +-lambda and
// threshold's threshold 0. Clamp (floating x): grad_output where min <= x <= max (an absent, NaN,
// bound admits every x), 0 elsewhere and where x is NaN, as clamp()'s composition and PyTorch's
// clamp_backward.
Tensor activation_backward(ActivationOp op, const Tensor& grad_output, const Tensor& x,
                           double p0 = 0.0, double p1 = 0.0);
// self = where(mask, value, self): value a 0-d tensor, converted to self's dtype (read once,
// before the write, so it may be an element of self), mask bool and broadcast to self's shape
// (never the other way: self keeps its shape). Written by where's own launcher into self's
// memory; a mask that overlaps self otherwise than element for element is copied first. Bumps
// the version.
void masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value);
// Bool results.
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b);
Tensor compare(CompareOp op, const Tensor& a, double s);
// cond ? a : b elementwise; cond must be Bool; all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// A contiguous copy converted to `dtype` (float16/bfloat16 round to nearest even).
Tensor cast(const Tensor& a, DType dtype);
// `a` itself when it is contiguous, else a contiguous copy of it. Never recorded by autograd
// (unlike Tensor::contiguous(), which is the differentiable clone): what every entry below uses
// to hand contiguous operands to its launcher.
Tensor contiguous(const Tensor& a);
// self[...] = value (converted to self's dtype); a value the dtype cannot hold (scalar_fits in
// core/dtype.h: 300 in uint8, NaN in int64, 1e6 in float16) is an Error. Bumps the version.
void fill_(const Tensor& self, double value);
// dst[...] = src: any dtypes, any devices (CPU <-> CUDA; asynchronous from pinned memory when
// non_blocking), src broadcast to dst's shape, dst may be a strided view. Bumps dst's version.
void copy_(const Tensor& dst, const Tensor& src, bool non_blocking = false);

// ---- Shape (ops_shape.cpp) -------------------------------------------------------------------
// Concatenation along dim; all tensors on one device, equal sizes except along dim, dtypes
// promoted. stack() is unsqueeze + cat and lives in autograd/functions.cpp.
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim);

// ---- Reductions (ops_reduce.cpp) -------------------------------------------------------------
// Reduce over `dims` (empty = all dims). Sum/Mean of integral input: Sum gives int64, Mean
// requires a floating dtype. Max and Min propagate NaN (of two equal elements, +0 and -0, the
// first; of several NaNs, the last). CPU sums are pairwise (accurate for 1e7+ f32).
// Prod multiplies in order along each output's elements (the accumulator types of Sum; integral
// and bool input give int64, wrapping around); the product of nothing is 1.
Tensor reduce(ReduceOp op, const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim);
// Index (int64) of the first maximum along `dim`, or in the flattened tensor when dim is empty.
Tensor argmax(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim);

// ---- Running reductions (ops_scan.cpp) ---------------------------------------------------------
// op's running value along dim (reverse: from the end), of x's shape: element j combines elements
// 0..j in that order (Sum: cumsum, Prod: cumprod, LogSumExp: logcumsumexp), on either device with
// the same steps (the same bits on both for Sum and Prod). Floating x keeps its dtype (the 16-bit
// floats accumulated in float32, each output rounded once); integral and bool x give int64 for
// Sum and Prod, as torch's; LogSumExp takes floating x only.
Tensor scan(ScanOp op, const Tensor& x, std::int64_t dim, bool reverse = false);
// (values, indices) of the running maximum (is_max) or minimum along dim, as torch.cummax and
// torch.cummin: values of x's dtype and shape, int64 indices; among equal values the later one,
// and a NaN is the extremum from where it appears (the last NaN's index).
std::tuple<Tensor, Tensor> scan_extremum(const Tensor& x, std::int64_t dim, bool is_max);

// ---- Sorting and searching (ops_sort.cpp) -------------------------------------------------------
// The positions (int64) along dim of x's elements in sorted order, ascending or descending, the
// first k of each slice (k -1: all): x's shape with size(dim) k. NaN is the largest element, -0
// and +0 are equal, and equal elements keep their order (a stable sort, on both devices). Any
// dtype.
Tensor argsort(const Tensor& x, std::int64_t dim, bool descending, std::int64_t k = -1);
// The position (int64, keepdim shape) along dim of each slice's element of rank `rank` (int64, x's
// shape with size(dim) 1; 0 the smallest, NaN the largest, each in [0, size(dim))): the first
// position holding that value (-0 and +0 are one value), as autograd's median and kthvalue take
// it. O(size) per slice on the CPU (a selection, not a sort); CUDA sorts. x of any dtype but bool,
// at least 1-d, with a non-empty dim.
Tensor select_rank(const Tensor& x, std::int64_t dim, const Tensor& rank);
// argsort(x, dim) gathered at `ranks` along dim, without a sort where selections cost less: the
// position (int64, ranks' shape) that a stable ascending sort puts at each rank (ranks int64 of
// x's rank and x's sizes but along dim, each in [0, size(dim))). quantile's gradient goes to
// these positions, as it would through a sort. The CPU selects where a slice asks for few
// distinct ranks (Note [Stable positions by selection], kernels/cpu/sort.cpp); CUDA sorts. Any
// dtype, x at least 1-d with a non-empty dim.
Tensor argsort_at(const Tensor& x, std::int64_t dim, const Tensor& ranks);
// For each element v of values, the index (int64) at which it would be inserted into its row of
// sorted (the last dim) to keep the row sorted: the first i with !(row[i] < v) (right: !(row[i] <=
// v)), found by bisection with exactly those comparisons, as torch.searchsorted (a NaN v gives the
// row's length; NaNs at a row's end are larger than everything). sorted is 1-d (one row for every
// value) or has values' leading dims; sorter, when defined, holds each row's ascending order
// (int64, sorted's shape, as argsort gives it). sorted and values of one dtype (the caller
// promotes), not bool. Rows are not checked for being sorted (the result is then unspecified, as
// torch's).
Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right, const Tensor& sorter);

// ---- Linear algebra (ops_linalg.cpp) ---------------------------------------------------------
// (M, K) @ (K, N) -> (M, N); (B, M, K) @ (B, K, N) -> (B, M, N); a 3-D operand with a 2-D one
// broadcasts the 2-D one over the batch. CPU: oneDNN's sgemm or Eigen, see cpu_gemm_backend.
// CUDA: cuBLAS, TF32 off unless allowed.
Tensor matmul(const Tensor& a, const Tensor& b);
// Which library does the CPU's float32 matrix products: matmul (so linear) and the GEMMs of
// conv2d and conv_transpose2d, forward and backward (kernels/cpu/gemm.h).
//  - OneDnn: oneDNN's sgemm, whose kernels are generated at run time for the CPU the program runs
//    on (AVX2, AVX-512, AMX). The default in a build with oneDNN (LEANGRAD_WITH_ONEDNN).
//  - Eigen: Eigen's GEMM, compiled for the build's LEANGRAD_CPU_ARCH. The default without oneDNN,
//    and always the float64 one.
// Results agree to within GEMM rounding, not bitwise. The default comes from the environment,
// read once: LEANGRAD_CPU_GEMM=eigen or onednn; another value, or onednn in a build without it, is
// named in a warning on stderr and the build's default is used. set_cpu_gemm_backend(OneDnn) in a
// build without oneDNN throws Error.
enum class CpuGemmBackend : std::uint8_t { Eigen, OneDnn };
void set_cpu_gemm_backend(CpuGemmBackend backend);
CpuGemmBackend cpu_gemm_backend();
// "oneDNN 2.6.3" or "Eigen 3.4.0": the library cpu_gemm_backend() names, with its version.
std::string cpu_gemm_library();
// Sets the backend for a scope and restores the previous one on leaving it, also by an exception.
class CpuGemmBackendGuard {
 public:
  explicit CpuGemmBackendGuard(CpuGemmBackend backend) : previous_(cpu_gemm_backend()) {
    set_cpu_gemm_backend(backend);
  }
  ~CpuGemmBackendGuard() { set_cpu_gemm_backend(previous_); }
  CpuGemmBackendGuard(const CpuGemmBackendGuard&) = delete;
  CpuGemmBackendGuard& operator=(const CpuGemmBackendGuard&) = delete;

 private:
  CpuGemmBackend previous_;
};

// ---- Random (ops_random.cpp) -----------------------------------------------------------------
// Fill with U[low, high) or N(mean, std) from the Philox stream of `gen`; element i of the
// tensor gets the same number on every device for the same generator state.
void uniform_(const Tensor& self, double low, double high, Generator& gen);
void normal_(const Tensor& self, double mean, double std, Generator& gen);

// ---- Activations and normalization (ops_activation.cpp, ops_norm.cpp) -----------------------
// TanhExp (kernels/tanhexp_math.h): y = x * tanh(exp(x)) elementwise, finite for every finite x.
// Any layout in, a contiguous result of x's dtype out (floating dtypes only).
Tensor tanhexp(const Tensor& x);
// dx = dy * d/dx[x tanh(e^x)]; dy and x of one shape, floating dtype and device.
Tensor tanhexp_backward(const Tensor& grad_output, const Tensor& x);

// ---- Orthogonal polynomials (ops_orthogonal_polynomials.cpp) ----------------------------------
// p_n(x) elementwise, or with slope its derivative in x, for the family p (Note [Orthogonal
// polynomials] in kernels/orthogonal_polynomials.h), computed in double and rounded: x and n of
// one floating dtype, one shape, on one device; a contiguous result of that dtype. The caller
// refuses degrees above kMaxRecurrenceDegree where runs_degree_long_recurrence says so (here
// they give NaN).
Tensor orthogonal_polynomial(OrthogonalPolynomial p, const Tensor& x, const Tensor& n,
                             bool slope = false);

// Fused scaled dot-product attention (ops_attention.cpp; Note [Fused attention] in
// kernels/cpu/attention.cpp), on the CPU, any floating dtype (float16 and bfloat16 computed in
// float32, the logsumexp kept in float32: Note [Fused attention in 16 bits] in
// ops_attention.cpp): query (..., L, E), key (..., S, E),
// value (..., S, Ev) with the same leading dims; attn_mask undefined, Bool (true: may attend) or
// of the query's dtype (added), broadcasting to (..., L, S); is_causal hides key j from query i
// where j > i. output = dropout(softmax(mask((query * scale) key^T)), dropout_p) value,
// (..., L, Ev), and logsumexp (..., L), what the backward recomputes the weights from; the weights
// are never stored. Dropout (dropout_p > 0, gen given) draws from gen the counters ops::dropout
// would draw for the (..., L, S) weights and drops the same ones; their seed and offset come back
// for the backward. A CUDA tensor is an error: autograd/attention.cpp composes attention there.
struct AttentionOutput {
  Tensor output;
  Tensor logsumexp;
  std::uint64_t dropout_seed = 0;
  std::uint64_t dropout_offset = 0;
};
AttentionOutput attention(const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& attn_mask, bool is_causal, double scale,
                          double dropout_p = 0.0, Generator* gen = nullptr);
// The gradients of query, key and value from the output's; each computed only when asked for
// (undefined otherwise). dropout_p, seed and offset: the forward's.
struct AttentionGrads {
  Tensor grad_query;
  Tensor grad_key;
  Tensor grad_value;
};
AttentionGrads attention_backward(const Tensor& grad_output, const Tensor& query, const Tensor& key,
                                  const Tensor& value, const Tensor& output,
                                  const Tensor& logsumexp, const Tensor& attn_mask, bool is_causal,
                                  double scale, double dropout_p, std::uint64_t dropout_seed,
                                  std::uint64_t dropout_offset, bool need_query, bool need_key,
                                  bool need_value);

// GroupNorm over x: (N, C, *), C divisible by num_groups; weight, bias: (C,) of x's dtype and
// device, or undefined. mean and rstd (what backward needs) are (N, num_groups), float32
// (float64 for float64 input). See Note [GroupNorm layout and math] in kernels/group_norm_math.h.
struct GroupNormOutput {
  Tensor output;
  Tensor mean;
  Tensor rstd;
};
GroupNormOutput group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight,
                           const Tensor& bias, double eps);
// The gradients of group_norm's inputs from dy (x's shape); each is computed only when asked for
// (undefined otherwise). grad_weight/grad_bias need a defined weight/bias in the forward; an
// undefined weight here means all ones.
struct GroupNormGrads {
  Tensor grad_input;
  Tensor grad_weight;
  Tensor grad_bias;
};
GroupNormGrads group_norm_backward(const Tensor& grad_output, const Tensor& x, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& weight,
                                   std::int64_t num_groups, bool need_input, bool need_weight,
                                   bool need_bias);

// LayerNorm over the trailing elements of x: x seen as (rows, features), features > 0 dividing
// x.numel(), each row normalized with its own statistics; weight, bias: `features` elements of
// x's dtype and device (any shape, normalized_shape for the caller), or undefined. output has
// x's shape; mean and rstd are (rows,), float32 (float64 for float64 input). Note [LayerNorm
// layout and math] in kernels/group_norm_math.h.
GroupNormOutput layer_norm(const Tensor& x, std::int64_t features, const Tensor& weight,
                           const Tensor& bias, double eps);
// The gradients of layer_norm's inputs from dy (x's shape), each only when asked for; grad_weight
// and grad_bias have weight's shape (bias's), and need them defined in the forward.
GroupNormGrads layer_norm_backward(const Tensor& grad_output, const Tensor& x, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& weight, std::int64_t features,
                                   bool need_input, bool need_weight, bool need_bias);

// BatchNorm over x: (N, C, *), each channel normalized over its N * S values (S the product of
// the trailing dims); weight, bias: (C,) of x's dtype and device, or undefined. training: with
// the batch's statistics (biased variance); otherwise with running_mean and running_var ((C,),
// any floating dtype, on x's device). mean and rstd are the statistics used, (C,), float32
// (float64 for float64 input): the batch's, or running_mean and 1 / sqrt(running_var + eps).
// Note [BatchNorm layout and math] in kernels/group_norm_math.h. The running statistics are not
// updated here.
GroupNormOutput batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           const Tensor& running_mean, const Tensor& running_var, bool training,
                           double eps);
// The gradients of batch_norm's inputs from dy (x's shape), each only when asked for, from the
// mean and rstd the forward returned; training says whether they were the batch's (dx flows
// through them) or constants.
GroupNormGrads batch_norm_backward(const Tensor& grad_output, const Tensor& x, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& weight, bool training,
                                   bool need_input, bool need_weight, bool need_bias);

// ---- Convolution (ops_conv.cpp) --------------------------------------------------------------
// Stride, padding, dilation (height, width) and groups of a 2-D convolution.
struct Conv2dParams {
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
};
// x (N, C_in, H, W), weight (C_out, C_in / groups, kH, kW), bias (C_out,) or undefined
// -> (N, C_out, H_out, W_out). Any strides in; one floating dtype, one device. CPU: im2col +
// GEMM, oneDNN or Eigen (f16/bf16 computed in f32). CUDA: implicit GEMM (tensor cores for
// f16/bf16, TF32 when cuda::allow_tf32()) or cuDNN, see conv2d_backend.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dParams& p);
// dL/dx (input_shape) from grad_out (N, C_out, H_out, W_out) and weight.
Tensor conv2d_input_grad(const Tensor& grad_out, const Tensor& weight, const Shape& input_shape,
                         const Conv2dParams& p);
// dL/dweight (weight_shape) from grad_out and x.
Tensor conv2d_weight_grad(const Tensor& grad_out, const Tensor& x, const Shape& weight_shape,
                          const Conv2dParams& p);
// Which CPU implementation conv2d and its gradients (so conv_transpose2d and conv1d) use for
// float32 (kernels/cpu/conv.cpp, Note [Which CPU convolution]):
//  - Auto (default): oneDNN's direct convolution (kernels/cpu/conv_direct.h) when the CPU GEMM
//    backend is oneDNN and both channel counts per group are at least 16; im2col + GEMM otherwise.
//  - Gemm: im2col + GEMM always.
//  - Direct: oneDNN's direct convolution wherever oneDNN has one for the problem and the CPU, also
//    under LEANGRAD_CPU_GEMM=eigen (for tests and benchmarks).
//  - Rows: the loop over zero-padded rows (kernels/cpu/conv_rows.h) wherever it applies (stride
//    and dilation 1, padding below the kernel's size), float32 and float64; Auto takes it for
//    few output channels.
// Either way, a problem the chosen path does not take runs im2col + GEMM (oneDNN has no direct
// convolution for float64, nor any in a build without oneDNN). Results agree to within the
// rounding of a sum, not bitwise. The default comes from the environment, read once:
// LEANGRAD_CPU_CONV=auto, gemm, direct or rows; another value is named in a warning on stderr and
// auto is used.
enum class CpuConv2dAlgorithm : std::uint8_t { Auto, Gemm, Direct, Rows };
void set_cpu_conv2d_algorithm(CpuConv2dAlgorithm algorithm);
CpuConv2dAlgorithm cpu_conv2d_algorithm();
// Sets the algorithm for a scope and restores the previous one on leaving it, also by an exception.
class CpuConv2dAlgorithmGuard {
 public:
  explicit CpuConv2dAlgorithmGuard(CpuConv2dAlgorithm algorithm)
      : previous_(cpu_conv2d_algorithm()) {
    set_cpu_conv2d_algorithm(algorithm);
  }
  ~CpuConv2dAlgorithmGuard() { set_cpu_conv2d_algorithm(previous_); }
  CpuConv2dAlgorithmGuard(const CpuConv2dAlgorithmGuard&) = delete;
  CpuConv2dAlgorithmGuard& operator=(const CpuConv2dAlgorithmGuard&) = delete;

 private:
  CpuConv2dAlgorithm previous_;
};
// Which CUDA implementation conv2d and its gradients use: our implicit-GEMM kernels (default;
// cuDNN for the shapes they do not cover) or cuDNN throughout. The default comes from the
// environment, read once: LEANGRAD_CONV=cudnn.
enum class Conv2dBackend : std::uint8_t { ImplicitGemm, Cudnn };
void set_conv2d_backend(Conv2dBackend backend);
Conv2dBackend conv2d_backend();
// Sets the backend for a scope and restores the previous one on leaving it, also by an exception.
class Conv2dBackendGuard {
 public:
  explicit Conv2dBackendGuard(Conv2dBackend backend) : previous_(conv2d_backend()) {
    set_conv2d_backend(backend);
  }
  ~Conv2dBackendGuard() { set_conv2d_backend(previous_); }
  Conv2dBackendGuard(const Conv2dBackendGuard&) = delete;
  Conv2dBackendGuard& operator=(const Conv2dBackendGuard&) = delete;

 private:
  Conv2dBackend previous_;
};

// ---- 3-D convolution (ops_conv.cpp) ------------------------------------------------------------
// Stride, padding, dilation (depth, height, width) and groups of a 3-D convolution.
struct Conv3dParams {
  std::array<std::int64_t, 3> stride = {1, 1, 1};
  std::array<std::int64_t, 3> padding = {0, 0, 0};
  std::array<std::int64_t, 3> dilation = {1, 1, 1};
  std::int64_t groups = 1;
};
// conv3d as one kernel per pass: oneDNN's direct 3-D convolution on the CPU, float32 (float16 and
// bfloat16 computed in float32 and rounded once; Note [Direct 3-D convolution] in ops_conv.cpp).
// Elsewhere (CUDA, float64, a build without oneDNN, a problem oneDNN has no generated kernel for)
// autograd's conv3d composes conv2d instead (Note [Volumes by planes] in
// autograd/volumetric_functions.cpp), and these entries raise. Whether to use the kernel for x,
// weight and bias (or undefined) with p: valid operands of those dtypes and device, not empty,
// oneDNN has generated kernels for all three passes of the problem, and cpu_conv2d_algorithm()
// chooses them as it would for conv2d (Direct; or Auto with oneDNN as the CPU GEMM backend and 16
// or more input and output channels per group; never Gemm). The entries below only ask whether
// oneDNN has the kernel, so a backward run under another algorithm than its forward's still runs.
bool use_conv3d_kernel(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       const Conv3dParams& p);
// x (N, C_in, D, H, W), weight (C_out, C_in / groups, kD, kH, kW), bias (C_out,) or undefined
// -> (N, C_out, D_out, H_out, W_out). Any strides in.
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv3dParams& p);
// dL/dx (input_shape) from grad_out (N, C_out, D_out, H_out, W_out) and weight.
Tensor conv3d_input_grad(const Tensor& grad_out, const Tensor& weight, const Shape& input_shape,
                         const Conv3dParams& p);
// dL/dweight (weight_shape) from grad_out and x.
Tensor conv3d_weight_grad(const Tensor& grad_out, const Tensor& x, const Shape& weight_shape,
                          const Conv3dParams& p);

// ---- Layers (ops_layers.cpp) -----------------------------------------------------------------
// Pixel shuffle and linear need no kernel of their own: they are views, copies and matmul in
// autograd/nn_functions.cpp. Every entry below accepts any strides (it makes operands contiguous).
// Pooling over (N, C, H, W) or (C, H, W), PyTorch's options in at::'s order: kernel, stride and
// dilation > 0 (stride 0 means the kernel), 0 <= padding <= kernel / 2, the output size of
// Note [Pooling windows] (kernels/layers_math.h; ceil_mode's last window starts inside the input
// or the left padding). Max pooling pads with -inf and returns the int64 index h * W + w of each
// maximum within its plane (as PyTorch's indices), -1 for a window holding no input element.
using Pool2dSize = std::array<std::int64_t, 2>;
struct MaxPool2dResult {
  Tensor out;
  Tensor indices;
};
MaxPool2dResult max_pool2d(const Tensor& x, Pool2dSize kernel, Pool2dSize stride,
                           Pool2dSize padding, Pool2dSize dilation = {1, 1},
                           bool ceil_mode = false);
Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, const Shape& input_shape,
                           Pool2dSize kernel, Pool2dSize stride, Pool2dSize padding,
                           Pool2dSize dilation = {1, 1}, bool ceil_mode = false);
// Adaptive max pooling of (N, C, H, W) or (C, H, W) (C, H, W > 0) to (..., OH, OW) (OH, OW > 0;
// H, W, OH, OW < 2^31): output (i, j) is the maximum of rows [floor(i H / OH), ceil((i + 1) H /
// OH)) by the columns likewise (Note [Adaptive pooling windows], kernels/layers_math.h), with
// max_pool2d's indices and choice among ties and NaNs. The backward adds each output's gradient
// at its index (indices of grad_out's shape, int64, on its device).
MaxPool2dResult adaptive_max_pool2d(const Tensor& x, Pool2dSize output_size);
Tensor adaptive_max_pool2d_backward(const Tensor& grad_out, const Tensor& indices,
                                    const Shape& input_shape);
// Average pooling: each window's sum over divisor_override (nonzero) when given, else over the
// window's size clipped to the padded input (count_include_pad) or its count of input elements.
Tensor avg_pool2d(const Tensor& x, Pool2dSize kernel, Pool2dSize stride, Pool2dSize padding,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
Tensor avg_pool2d_backward(const Tensor& grad_out, const Shape& input_shape, Pool2dSize kernel,
                           Pool2dSize stride, Pool2dSize padding, bool ceil_mode = false,
                           bool count_include_pad = true,
                           std::optional<std::int64_t> divisor_override = std::nullopt);
// Dropout with 0 <= p <= 1: out = mask ? x / (1 - p) : 0, mask (Bool, x's shape) from the Philox
// stream of `gen` by element index (layers_math::dropout_keep): the same on every device.
struct DropoutResult {
  Tensor out;
  Tensor mask;
};
DropoutResult dropout(const Tensor& x, double p, Generator& gen);
Tensor dropout_backward(const Tensor& grad_out, const Tensor& mask, double p);
// softmax / log_softmax along `dim` (numerically stable: shifted by the maximum); the backward
// takes the forward's output.
Tensor softmax(const Tensor& x, std::int64_t dim, bool log);
Tensor softmax_backward(const Tensor& grad_out, const Tensor& out, std::int64_t dim, bool log);
// Per-sample losses of logits / log-probabilities (N, C) against int64 class indices (N,), each
// scaled by its class's weight w_t (`weight` (C,) of the input's dtype and device, or undefined:
// every class weighs 1); an ignored sample's loss is 0. A target outside [0, C) (and not
// ignore_index) throws Error on the CPU; on CUDA it gives a NaN loss for that sample (no
// synchronisation to check it). Both also return sample_weights (N,): w_t of each sample, 0 when
// ignored, whose sum a Mean reduction divides by (PyTorch's total_weight). cross_entropy also
// returns the logsumexp of each row (N,) for the backward, in float32 (float64 for float64 logits).
struct CrossEntropyResult {
  Tensor losses;
  Tensor sample_weights;
  Tensor logsumexp;
};
CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                 std::int64_t ignore_index);
Tensor cross_entropy_backward(const Tensor& grad_losses, const Tensor& logits,
                              const Tensor& logsumexp, const Tensor& target, const Tensor& weight,
                              std::int64_t ignore_index);
struct NllLossResult {
  Tensor losses;
  Tensor sample_weights;
};
NllLossResult nll_loss(const Tensor& logp, const Tensor& target, const Tensor& weight,
                       std::int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_losses, const Tensor& target, const Tensor& weight,
                         std::int64_t num_classes, std::int64_t ignore_index);
// The shape of the class indices for an input of `input_shape`, the input without its class dim:
// (N,) for (N, C), (N, d1, ..., dk) for (N, C, d1, ..., dk), () for an unbatched (C,).
Shape class_target_shape(const Shape& input_shape);
// Throws unless `input` is floating, of shape (C), (N, C) or (N, C, d1, ...), and `target` is
// int64 class indices of class_target_shape(input) on input's device. The kernels above take
// only (N, C) (and check that too); the autograd losses check the user's shapes with this before
// they flatten them into rows (Note [Class-index losses of any rank] in nn_functions.cpp).
void check_class_targets(const char* op, const Tensor& input, const Tensor& target);
// Throws unless `weight` is undefined or a class weight for `input` (C), (N, C) or (N, C, ...):
// 1-D of size C, of input's dtype and on its device. The losses above check it; the autograd
// losses call it on the user's input too.
void check_class_weight(const char* op, const Tensor& weight, const Tensor& input);

// ---- Interpolation (ops_upsample.cpp) ---------------------------------------------------------
// x (N, C, H, W) resized to (N, C, out_size[0], out_size[1]), nearest, nearest-exact, bilinear or
// bicubic, with PyTorch's index rules (Note [Interpolation source indices] in
// kernels/layers_math.h). scale_factor: the (height, width) factors the user gave, which those
// rules use in place of in / out; 0 when the user gave a size.
using Resize2dScales = std::array<double, 2>;
Tensor upsample2d(const Tensor& x, Pool2dSize out_size, Resize2dScales scale_factor,
                  layers_math::ResizeMode mode, bool align_corners);
// dL/dx (input_shape) from grad_out (N, C, OH, OW): each output's gradient added into its taps.
Tensor upsample2d_backward(const Tensor& grad_out, const Shape& input_shape,
                           Resize2dScales scale_factor, layers_math::ResizeMode mode,
                           bool align_corners);

// ---- Indexing (ops_indexing.cpp) -------------------------------------------------------------
// An index of a CPU tensor out of range throws Error naming it and its position; on CUDA (no
// synchronisation to check) it reads NaN (0 in an integral dtype) and adds nothing.
//
// weight (num_embeddings, dim), indices int64 of any shape -> (*indices.shape, dim): the rows of
// weight the indices pick.
Tensor embedding(const Tensor& weight, const Tensor& indices);
// The weight gradient (num_embeddings, dim) of embedding: each upstream row grad_out[i...] added
// into the row of its index, except rows of padding_idx (-1: none), which get none.
Tensor embedding_backward(const Tensor& grad_out, const Tensor& indices,
                          std::int64_t num_embeddings, std::int64_t padding_idx);
// torch.index_select: x's slices along dim at `index` (int64 or int32, 0-d or 1-d, values in
// [0, x.size(dim))), in the index's order: x's shape with size(dim) replaced by index.numel().
// Any dtype.
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
// Its gradient, of x_shape: each slice of grad added into the slice of its index.
Tensor index_select_backward(const Tensor& grad, std::int64_t dim, const Tensor& index,
                             const Shape& x_shape);
// torch.gather: out (the shape of `index`, int64 with x's rank, no dim but `dim` larger than
// x's) with out[c] = x[c with c_dim replaced by index[c]]. Any dtype.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
// Its gradient, of x_shape: scatter_add of grad (the index's shape) into zeros made in the
// accumulation dtype (no copy of them), cast to grad's dtype.
Tensor gather_backward(const Tensor& grad, std::int64_t dim, const Tensor& index,
                       const Shape& x_shape);
// torch.scatter_add: a copy of x with each src[c] added at x[c with c_dim replaced by index[c]],
// for c over index's shape (src at least as large in every dim). Floating dtypes, int64 and
// int32 (wrapping as PyTorch's); the sums in float32 for the 16-bit floats. gather's gradient.
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);
// scatter_add's generalisation: a copy of x with each src[c] combined by `op` into x[c with c_dim
// replaced by index[c]], the shapes as scatter_add's; src of x's dtype. Assign takes every dtype
// and writes, the last element of a line in index order winning a place named twice, on both
// devices (CUDA finds the winner first, so the result does not depend on thread timing). Sum,
// Prod, Max and Min take every dtype: integers wrap around, uint8 and bool are combined in int32
// and cast back (uint8 modulo 256, as PyTorch's; bool's sum an or, its product an and), the
// 16-bit floats in float32, each place rounded once; Max and Min propagate NaN. Only a floating
// Sum's or Prod's last bits may vary between CUDA runs (atomics combine in no fixed order). Errors
// name `name` (op_name(op) when null): the function the caller exposes.
Tensor scatter(ScatterOp op, const Tensor& x, std::int64_t dim, const Tensor& index,
               const Tensor& src, const char* name = nullptr);
// torch.nonzero of a CPU bool tensor (any strides): the positions of its true elements in
// row-major order, int64: (count, rank) indices, or with `flat` the (count) row-major offsets.
// CPU only (autograd's nonzero composes other ops for a CUDA mask). Note [True positions in two
// passes] in kernels/cpu/nonzero.cpp.
Tensor nonzero(const Tensor& mask, bool flat);

// ---- Optimizers (ops_optim.cpp) ----------------------------------------------------------------
// The fused updates of kernels/optim_math.h over parameters of one device and one dtype at once
// (one multi-tensor launch on CUDA). Every tensor of a list has the update's element type T
// (float: float32, double: float64, Half: float16, BFloat16: bfloat16, these two computed in
// float: Note [Optimizers in half precision] in kernels/optim_math.h; the codes of Adam8bit
// uint8, its parameters float32), is
// contiguous, of its parameter's shape and on one device; parameters and states are updated in
// place and their versions bumped. optim/ makes one call per dtype (Optimizer::by_dtype).

// A parameter's step on the device (Note [Gated step] in kernels/optim_math.h): once its optimizer
// took a gated step, `skipped` is its int32 0-d count of skipped steps and the device computes the
// scalars from (lr, weight_decay, step - skipped); undefined, the host's `scalars` hold.
struct DeviceStep {
  Tensor skipped{};
  double lr = 0.0;
  double weight_decay = 0.0;
  std::int64_t step = 0;  // the host's count for this update
};

// The flags of one launch, int32 0-d tensors on the parameters' device, or undefined.
struct StepFlags {
  // Read on the device: nonzero skips the whole step (amp::GradScaler's; Note [Gated step]).
  Tensor found_inf{};
  // Written on the device: set to 1 when update.skip_nonfinite left an element with a NaN/Inf
  // gradient as it was (Adam8bit's per-element skip; SGD and RAdam never set it).
  Tensor skipped_nonfinite{};
};

// One parameter of an elementwise update: the states in the functor's slot order (Note
// [Optimizer streams] in kernels/optim_math.h), undefined where an option turns one off.
template <typename Update>
struct OptimParam {
  Tensor param;
  Tensor grad;
  std::array<Tensor, Update::kNumStreams - 2> states;
  typename Update::TensorScalars scalars;
  DeviceStep device_step{};
};
template <typename T>
void sgd_step(const kernels::SgdUpdateOf<T>& update,
              const std::vector<OptimParam<kernels::SgdUpdateOf<T>>>& params,
              const StepFlags& flags = {});
template <typename T>
void adam_step(const kernels::AdamUpdateOf<T>& update,
               const std::vector<OptimParam<kernels::AdamUpdateOf<T>>>& params,
               const StepFlags& flags = {});
template <typename T>
void radam_step(const kernels::RAdamUpdateOf<T>& update,
                const std::vector<OptimParam<kernels::RAdamUpdateOf<T>>>& params,
                const StepFlags& flags = {});

// One parameter of Adam8bit: codes of the param's shape, one absmax per block of
// kernels::kQuantBlockSize elements (kernels/quantization_math.h).
struct Adam8bitParam {
  Tensor param;
  Tensor grad;
  Tensor state1;  // uint8, first moment (signed map)
  Tensor state2;  // uint8, second moment (unsigned map)
  Tensor absmax1;
  Tensor absmax2;
  kernels::AdamUpdate::TensorScalars scalars;
  DeviceStep device_step{};
};
void adam8bit_step(const kernels::AdamUpdate& update, const std::vector<Adam8bitParam>& params,
                   const StepFlags& flags = {});

// torch.nn.utils.clip_grad_norm_ in two steps (optim::clip_grad_norm_ reads the norm between
// them when asked to refuse a non-finite one); nothing here waits for the GPU.
// grad_norm: the joint norm_type-norm (> 0 or infinity) of the floating gradients `grads` (one
// device; float32, float64, float16, bfloat16), a 0-d tensor on their device: float64 when any
// gradient is float64, float32 otherwise (float16 and bfloat16 ones are widened to float32 element
// by element; with several dtypes, the norm of the dtypes' norms, as PyTorch's norm of per-tensor
// norms). clip_grads: every gradient times min(1, max_norm / (total_norm + 1e-6)), in place, the
// factor computed in the norm's dtype (float32 and 16-bit gradients under a float64 norm: in
// float32, from the norm rounded to float32; a 16-bit gradient's product rounded once to its
// dtype); total_norm is grad_norm's result.
Tensor grad_norm(const std::vector<Tensor>& grads, double norm_type);
void clip_grads(const std::vector<Tensor>& grads, double max_norm, const Tensor& total_norm);

// ---- Gradient scaling (ops_optim.cpp; amp::GradScaler) -----------------------------------------
// Nothing here reads a value on the host: the scale, the growth tracker and found_inf stay on
// the device (as torch._amp_foreach_non_finite_check_and_unscale_ and torch._amp_update_scale_).

// Multiplies every gradient (float32, contiguous, one device) in place by 1 / scale (computed on
// the device, kernels::inverse_scale) and sets found_inf to 1 when any element is NaN or Inf; it
// never clears it. scale: float32, found_inf: int32, one element each, on the gradients' device.
void unscale_and_check_finite(const std::vector<Tensor>& grads, const Tensor& scale,
                              const Tensor& found_inf);

// One step of the dynamic loss scale (kernels::update_scale_state): scale (float32) and
// growth_tracker (int32) updated in place from found_inf (int32), all one element on one device.
void update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                  double growth_factor, double backoff_factor, std::int64_t growth_interval);

}  // namespace ops
}  // namespace leangrad
