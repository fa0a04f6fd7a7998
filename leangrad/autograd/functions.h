// The public functions of leangrad (like at:: in LibTorch): every tensor operation a user calls,
// and the layer where autograd will record graph nodes (the autograd issue adds each op's
// backward beside its forward in functions.cpp). Tensor's methods and operators forward here.
// Each function calls the tensor-level kernel entry of kernels/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad {

// ---- Elementwise arithmetic (broadcasting, PyTorch type promotion) ---------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
Tensor pow(const Tensor& a, double exponent);
Tensor rsub(const Tensor& a, double b);  // b - a
Tensor rdiv(const Tensor& a, double b);  // b / a

Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor expm1(const Tensor& a);  // exp(a) - 1, exact near 0
Tensor log1p(const Tensor& a);  // log(1 + a), exact near 0
Tensor log2(const Tensor& a);
Tensor log10(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor rsqrt(const Tensor& a);       // 1 / sqrt(a)
Tensor reciprocal(const Tensor& a);  // 1 / a
// -1, 0 or 1 (0 for NaN and -0.0, as PyTorch); integral input keeps its dtype.
Tensor sign(const Tensor& a);
// The roundings: integral input is returned as it is; round takes halves to even (PyTorch's
// round, numpy's rint). sign and these have a zero gradient.
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
Tensor round(const Tensor& a);
Tensor trunc(const Tensor& a);
// PyTorch's round(input, decimals=d): round_half_even(a * 10^d) / 10^d for d > 0, and
// round_half_even(a / 10^-d) * 10^-d for d < 0, each step rounded to a's dtype, so the values
// are PyTorch's bit for bit (Note [Rounding to decimals]); a floating dtype when d != 0.
Tensor round(const Tensor& a, std::int64_t decimals);
// Trigonometric and hyperbolic functions and 2^a, with PyTorch's domains and derivatives:
// asin(2), acos(2), acosh(0.5) and atanh(2) are NaN, atanh(+-1) is +-inf, and the derivatives at
// the domain edges are PyTorch's (asin'(1) = inf, acosh'(0.5) = NaN). Integral input is computed
// in float32.
Tensor tan(const Tensor& a);
Tensor asin(const Tensor& a);
Tensor acos(const Tensor& a);
Tensor atan(const Tensor& a);
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor asinh(const Tensor& a);
Tensor acosh(const Tensor& a);
Tensor atanh(const Tensor& a);
Tensor exp2(const Tensor& a);
// The angle of the point (b, a) in (-pi, pi], elementwise with broadcasting (PyTorch's
// atan2(input, other)); integral operands give float32. Gradients b / (a^2 + b^2) and
// -a / (a^2 + b^2), NaN at (0, 0), as PyTorch's.
Tensor atan2(const Tensor& a, const Tensor& b);
// a - floor(a / b) b, with the sign of b (Python's %), and a - trunc(a / b) b, with the sign of
// a (C's fmod), elementwise with broadcasting, as torch.remainder and torch.fmod: integral
// operands stay integral, x % 0 == x for them (Note [Defined integer semantics] in
// kernels/elementwise_math.h; PyTorch raises), NaN for floating b == 0. Gradients 1 for a and
// -floor(a / b) or -trunc(a / b) for b, as PyTorch's. x % y is remainder.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, double b);
Tensor remainder(double a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, double b);
// floor(a / b), elementwise with broadcasting, as torch.floor_divide and Python's //: integral
// operands stay integral (x // 0 == 0 for them), floating b == 0 gives a / b. Piecewise
// constant: no gradient flows through it (PyTorch's is not implemented).
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, double b);
// a / b rounded as rounding_mode says, as torch.div(a, b, rounding_mode=...): none is true
// division (div(a, b)); "trunc" rounds toward zero, "floor" down (floor_divide). With a mode,
// operands that promote to an integral dtype stay integral (exact: x // 0 == 0 and
// trunc(x / 0) == 0 for them, where PyTorch's CPU raises), floating ones give trunc(a / b) or
// floor_divide's value; the gradient is zero, as PyTorch's. Another mode is an Error.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, double b, std::optional<std::string_view> rounding_mode);
// Bitwise and, or, xor and not of integral or bool tensors (of two bools: the logical ones),
// with broadcasting and promotion, as torch.bitwise_*; a floating operand is a DTypeError. A
// double must hold an integer. x & y, x | y, x ^ y and ~x are these.
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, double b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, double b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, double b);
Tensor bitwise_not(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor square(const Tensor& a);  // a * a
// Each element limited to [min, max], either bound optional; NaN stays NaN. The gradient passes
// where min <= a <= max (bounds included), as PyTorch's. An integral tensor with a non-integral
// bound gives float32 (as `a + bound`); a bound the result dtype cannot hold is an Error.
Tensor clamp(const Tensor& a, std::optional<double> min, std::optional<double> max = std::nullopt);
Tensor clamp_min(const Tensor& a, double min);
Tensor clamp_max(const Tensor& a, double max);
// NaN, +inf and -inf replaced by nan, posinf and neginf (by default 0 and the dtype's largest
// and lowest finite values), as torch.nan_to_num; an integral tensor is copied. The gradient
// passes where the element was finite, 0 elsewhere.
Tensor nan_to_num(const Tensor& a, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
// value where mask (Bool) is true, a elsewhere: a's dtype, the shape of a and mask broadcast
// together (as PyTorch's out-of-place masked_fill). A value a's dtype cannot hold is an Error.
Tensor masked_fill(const Tensor& a, const Tensor& mask, double value);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);

// ---- Comparisons (Bool results, not differentiable) ------------------------------------------
Tensor gt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);

// ---- Tests and logic (Bool results, not differentiable) -------------------------------------
// NaN, an infinity, neither: elementwise; false, false, true in integral and bool dtypes.
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);
// +inf and -inf, elementwise (false for integral and bool dtypes), as torch.isposinf/isneginf.
Tensor isposinf(const Tensor& a);
Tensor isneginf(const Tensor& a);
// |a - b| <= atol + |rtol b| or a == b (equal infinities), elementwise with broadcasting, in
// a's dtype (integral operands in float32), NaN close to NaN only with equal_nan, as
// torch.isclose; a and b of one dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
// Whether each element of `elements` equals some element of `test_elements` (NaN equals none),
// shaped as `elements`; invert: whether it equals none, as torch.isin.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false,
            bool invert = false);
// Logic on "non-zero" (NaN is), any dtypes, broadcasting, as torch.logical_*.
Tensor logical_not(const Tensor& a);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// Whether every (all) or some (any) element over dims (empty: all dims) is non-zero: true and
// false over no elements, as torch's.
Tensor all(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor any(const Tensor& a, const DimList& dims = {}, bool keepdim = false);

// cond ? a : b, broadcasting all three; cond must be Bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// Whether `a` holds a NaN or an infinity (never for integral and bool dtypes). Waits for the
// device: for checks (AnomalyMode, checkpoints), not for training loops.
bool has_non_finite(const Tensor& a);
// |a - b| <= atol + rtol |b| for every element (broadcasting; NaNs count as equal only with
// equal_nan), as torch.allclose. Waits for the device.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// Same shape and the same values (NaN unequal to itself), as torch.equal. Waits for the device.
bool equal(const Tensor& a, const Tensor& b);

// ---- Reductions ------------------------------------------------------------------------------
// Empty dims = all dims.
Tensor sum(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& a, const DimList& dims = {}, bool keepdim = false);
// The gradients of max and min follow PyTorch 1.13's three rules (docs/api-notes.md):
// - max(dims) and min(): split evenly among the extrema; a NaN extremum's among the NaNs;
// - amax and amin: split likewise, but a slice whose extremum is NaN gets NaN gradients;
// - max(dim) and min(dim): all of it to the index returned.
Tensor max(const Tensor& a, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& a);
Tensor argmax(const Tensor& a, std::int64_t dim, bool keepdim = false);
// LibTorch's max(dim) / min(dim): (values, indices of the first extremum, or of the first NaN).
std::tuple<Tensor, Tensor> max(const Tensor& a, std::int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& a, std::int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& a, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);
Tensor min(const Tensor& a);
Tensor argmin(const Tensor& a);
Tensor argmin(const Tensor& a, std::int64_t dim, bool keepdim = false);
// Variance over dims (empty: all) with divisor N - 1 (unbiased) or N, from the centred values
// (two passes, no cancellation); std is its square root. Floating dtypes.
Tensor var(const Tensor& a, const DimList& dims = {}, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& a, const DimList& dims = {}, bool unbiased = true, bool keepdim = false);

// ---- Linear algebra, joining -----------------------------------------------------------------
// torch.matmul: 1-d operands are vectors, 2-d matrices, and higher ranks batches of matrices
// whose batch dims broadcast ((2, 1, T, D) @ (5, D, T) -> (2, 5, T, T); Note [Batched matmul
// beyond 3-d]).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);  // 2-d operands only
// (B, n, k) @ (B, k, m) -> (B, n, m): 3-d operands of one batch size only (matmul broadcasts).
Tensor bmm(const Tensor& a, const Tensor& b);
// The inner product of two 1-d tensors of one size and dtype (0-d), and their outer product
// (n), (m) -> (n, m).
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
// The transpose of a matrix; 0-d and 1-d tensors as they are.
Tensor t(const Tensor& a);
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);

// ---- Sorting ---------------------------------------------------------------------------------
// (values, indices) of a's elements sorted along dim, ascending or descending, as torch.sort with
// stable=true: equal elements keep their order (-0 and +0 are equal), and NaN is the largest
// element. values is gather(a, dim, indices), which carries the gradient. Any dtype.
std::tuple<Tensor, Tensor> sort(const Tensor& a, std::int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& a, std::int64_t dim = -1, bool descending = false);
// The k largest (smallest) elements along dim and their indices, largest (smallest) first, ties
// in index order, NaN the largest, as torch.topk; the results are sorted whatever `sorted` says
// (torch's unsorted order is any order).
std::tuple<Tensor, Tensor> topk(const Tensor& a, std::int64_t k, std::int64_t dim = -1,
                                bool largest = true, bool sorted = true);

// ---- Views and copies ------------------------------------------------------------------------
Tensor view(const Tensor& a, const Shape& shape);
Tensor reshape(const Tensor& a, const Shape& shape);
Tensor permute(const Tensor& a, const std::vector<std::int64_t>& dims);
Tensor transpose(const Tensor& a, std::int64_t dim0, std::int64_t dim1);
Tensor slice(const Tensor& a, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step = 1);
Tensor select(const Tensor& a, std::int64_t dim, std::int64_t index);
Tensor unsqueeze(const Tensor& a, std::int64_t dim);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, std::int64_t dim);
Tensor expand(const Tensor& a, const Shape& shape, const char* op = "expand");
Tensor flatten(const Tensor& a, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
// Splits dim into `sizes` (their product must be that dim's size; one of them may be -1, worked
// out from the rest), as torch.unflatten: unflatten((N, 12), 1, {3, 4}) is (N, 3, 4). A view
// where reshape gives one.
Tensor unflatten(const Tensor& a, std::int64_t dim, const Shape& sizes);
Tensor clone(const Tensor& a);
// A copy on `device` and/or with `dtype` (no copy when both already match).
Tensor to(const Tensor& a, Device device, DType dtype, bool non_blocking = false);

// ---- NumPy-style aliases ----------------------------------------------------------------------
// LibTorch's other spellings of the functions above: the same function, values and gradients.
inline Tensor arcsin(const Tensor& a) {
  return asin(a);
}
inline Tensor arccos(const Tensor& a) {
  return acos(a);
}
inline Tensor arctan(const Tensor& a) {
  return atan(a);
}
inline Tensor arcsinh(const Tensor& a) {
  return asinh(a);
}
inline Tensor arccosh(const Tensor& a) {
  return acosh(a);
}
inline Tensor arctanh(const Tensor& a) {
  return atanh(a);
}
inline Tensor arctan2(const Tensor& a, const Tensor& b) {
  return atan2(a, b);
}
inline Tensor absolute(const Tensor& a) {
  return abs(a);
}
inline Tensor negative(const Tensor& a) {
  return neg(a);
}
inline Tensor clip(const Tensor& a, std::optional<double> min,
                   std::optional<double> max = std::nullopt) {
  return clamp(a, min, max);
}
// a + alpha b and a - alpha b, as torch::add and torch::sub with alpha.
inline Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  return alpha == 1.0 ? add(a, b) : add(a, mul(b, alpha));
}
inline Tensor sub(const Tensor& a, const Tensor& b, double alpha) {
  return alpha == 1.0 ? sub(a, b) : sub(a, mul(b, alpha));
}
inline Tensor subtract(const Tensor& a, const Tensor& b, double alpha = 1.0) {
  return sub(a, b, alpha);
}
inline Tensor subtract(const Tensor& a, double b) {
  return sub(a, b);
}
inline Tensor multiply(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor multiply(const Tensor& a, double b) {
  return mul(a, b);
}
inline Tensor divide(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor divide(const Tensor& a, double b) {
  return div(a, b);
}
inline Tensor divide(const Tensor& a, const Tensor& b,
                     std::optional<std::string_view> rounding_mode) {
  return div(a, b, rounding_mode);
}
inline Tensor divide(const Tensor& a, double b, std::optional<std::string_view> rounding_mode) {
  return div(a, b, rounding_mode);
}
inline Tensor true_divide(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor true_divide(const Tensor& a, double b) {
  return div(a, b);
}
inline Tensor greater(const Tensor& a, const Tensor& b) {
  return gt(a, b);
}
inline Tensor greater(const Tensor& a, double b) {
  return gt(a, b);
}
inline Tensor greater_equal(const Tensor& a, const Tensor& b) {
  return ge(a, b);
}
inline Tensor greater_equal(const Tensor& a, double b) {
  return ge(a, b);
}
inline Tensor less(const Tensor& a, const Tensor& b) {
  return lt(a, b);
}
inline Tensor less(const Tensor& a, double b) {
  return lt(a, b);
}
inline Tensor less_equal(const Tensor& a, const Tensor& b) {
  return le(a, b);
}
inline Tensor less_equal(const Tensor& a, double b) {
  return le(a, b);
}
inline Tensor not_equal(const Tensor& a, const Tensor& b) {
  return ne(a, b);
}
inline Tensor not_equal(const Tensor& a, double b) {
  return ne(a, b);
}
inline Tensor concat(const std::vector<Tensor>& tensors, std::int64_t dim = 0) {
  return cat(tensors, dim);
}
inline Tensor concatenate(const std::vector<Tensor>& tensors, std::int64_t dim = 0) {
  return cat(tensors, dim);
}
inline Tensor ger(const Tensor& a, const Tensor& b) {
  return outer(a, b);
}

}  // namespace leangrad
