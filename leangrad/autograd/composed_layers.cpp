// lp_pool1d, lp_pool2d, local_response_norm, bilinear, channel_shuffle and rrelu
// (autograd/composed_layers.h), each PyTorch's composition of other functions.
#include <leangrad/autograd/composed_layers.h>

#include <cmath>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

namespace {

void check_norm_type(const char* op, double norm_type) {
  LG_CHECK(norm_type != 0.0 && std::isfinite(norm_type), op,
           ": expected a finite, non-zero norm_type, got ", norm_type);
}

// PyTorch's tail of an LP pool: (sign(avg) relu(|avg|)) window_size, to the power 1 / p (the
// sign and relu change nothing but the gradient at 0, kept for parity).
Tensor lp_of_average(const Tensor& average, double norm_type, double window) {
  return pow(mul(mul(sign(average), relu(abs(average))), window), 1.0 / norm_type);
}

}  // namespace

Tensor lp_pool1d(const Tensor& x, double norm_type, std::int64_t kernel_size, std::int64_t stride,
                 bool ceil_mode) {
  LG_PROFILE_OP(x);
  check_norm_type("lp_pool1d", norm_type);
  autograd::check_floating_input("lp_pool1d", x);
  const Tensor average = avg_pool1d(pow(x, norm_type), kernel_size, stride, 0, ceil_mode);
  return lp_of_average(average, norm_type, static_cast<double>(kernel_size));
}

Tensor lp_pool2d(const Tensor& x, double norm_type, Size2 kernel_size, Size2 stride,
                 bool ceil_mode) {
  LG_PROFILE_OP(x);
  check_norm_type("lp_pool2d", norm_type);
  autograd::check_floating_input("lp_pool2d", x);
  const Tensor average = avg_pool2d(pow(x, norm_type), kernel_size, stride, {0, 0}, ceil_mode);
  return lp_of_average(average, norm_type,
                       static_cast<double>(kernel_size[0]) * static_cast<double>(kernel_size[1]));
}

Tensor local_response_norm(const Tensor& x, std::int64_t size, double alpha, double beta,
                           double k) {
  LG_PROFILE_OP(x);
  const char* op = "local_response_norm";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() >= 3, op, ": expected an input of at least 3 dims (N, C, *), got shape ",
                 x.shape());
  LG_CHECK(size >= 1, op, ": expected a positive size, got ", size);
  const std::int64_t n = x.size(0), channels = x.size(1);
  const std::int64_t rest = channels == 0 ? 0 : x.numel() / (n * channels);
  // The mean of x^2 over each channel window: (N, 1, C, rest) padded along C, averaged over
  // (size, 1) windows (PyTorch's avg_pool2d / avg_pool3d, which divide by size).
  const Tensor squares = reshape(mul(x, x), {n, 1, channels, rest});
  const Tensor padded = pad(squares, {0, 0, size / 2, (size - 1) / 2});
  const Tensor mean = reshape(avg_pool2d(padded, {size, 1}, {1, 1}), x.shape());
  return div(x, pow(add(mul(mean, alpha), k), beta));
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias) {
  LG_PROFILE_OP(x1, x2, weight, bias);
  const char* op = "bilinear";
  autograd::check_operands(op, {x1, x2, weight}, /*floating=*/true);
  LG_CHECK_SHAPE(x1.dim() >= 1 && x2.dim() == x1.dim() &&
                     Shape(x1.shape().begin(), x1.shape().end() - 1) ==
                         Shape(x2.shape().begin(), x2.shape().end() - 1),
                 op, ": expected inputs of one leading shape (*, in1) and (*, in2), got ",
                 x1.shape(), " and ", x2.shape());
  const std::int64_t in1 = x1.size(-1), in2 = x2.size(-1);
  LG_CHECK_SHAPE(weight.dim() == 3 && weight.size(1) == in1 && weight.size(2) == in2, op,
                 ": expected a weight of shape (out, ", in1, ", ", in2, ") for inputs ", x1.shape(),
                 " and ", x2.shape(), ", got ", weight.shape());
  const std::int64_t out = weight.size(0);
  if (bias.defined()) {
    autograd::check_operands(op, {x1, bias}, /*floating=*/true);
    LG_CHECK_SHAPE(bias.shape() == Shape{out}, op, ": expected a bias of shape (", out, "), got ",
                   bias.shape());
  }
  const std::int64_t rows = in1 == 0 ? 0 : x1.numel() / in1;
  // u[b, o, i] = sum_j weight[o, i, j] x2[b, j], one matmul; then y[b, o] = sum_i x1[b, i] u[b,
  // o, i].
  const Tensor u = reshape(
      matmul(reshape(x2, {rows, in2}), reshape(permute(weight, {2, 0, 1}), {in2, out * in1})),
      {rows, out, in1});
  Tensor y = sum(mul(u, reshape(x1, {rows, 1, in1})), {2});
  if (bias.defined()) y = add(y, bias);
  Shape shape(x1.shape().begin(), x1.shape().end() - 1);
  shape.push_back(out);
  return reshape(y, shape);
}

Tensor channel_shuffle(const Tensor& x, std::int64_t groups) {
  LG_PROFILE_OP(x);
  const char* op = "channel_shuffle";
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(x.dim() >= 3, op, ": expected an input of at least 3 dims (N, C, *), got shape ",
                 x.shape());
  LG_CHECK(groups >= 1, op, ": expected a positive number of groups, got ", groups);
  LG_CHECK_SHAPE(x.size(1) % groups == 0, op, ": ", x.size(1), " channels (input of shape ",
                 x.shape(), ") are not divisible by groups = ", groups);
  Shape grouped{x.size(0), groups, x.size(1) / groups};
  grouped.insert(grouped.end(), x.shape().begin() + 2, x.shape().end());
  return reshape(transpose(reshape(x, grouped), 1, 2), x.shape());
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training) {
  LG_PROFILE_OP(x);
  const char* op = "rrelu";
  autograd::check_floating_input(op, x);
  LG_CHECK(std::isfinite(lower) && std::isfinite(upper) && lower <= upper, op,
           ": expected finite bounds with lower <= upper, got lower ", lower, " and upper ", upper);
  if (!training) return leaky_relu(x, (lower + upper) / 2.0);
  // The factor of each element: 1 where x > 0, its slope elsewhere; a constant (the mask and the
  // draws take no gradient), so the gradient is the factor.
  const Tensor slopes = add(mul(rand_like(x), upper - lower), lower);
  return mul(x, where(gt(x, 0.0), ones_like(x), slopes));
}

}  // namespace leangrad
