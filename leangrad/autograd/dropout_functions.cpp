// The channel and alpha dropouts (autograd/dropout_functions.h).
#include <leangrad/autograd/dropout_functions.h>

#include <cmath>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

namespace {

void check_probability(const char* op, double p) {
  LG_CHECK(p >= 0.0 && p <= 1.0, op, ": expected a probability p in [0, 1], got ", p);
}

// The shape of a per-channel mask for x of batched rank `batched_dim`, or of one rank less
// (unbatched): x's leading (N, C) or (C) and 1 for every spatial dim.
Shape channel_mask_shape(const Tensor& x, std::int64_t batched_dim) {
  const std::int64_t channel_dims = x.dim() == batched_dim ? 2 : 1;
  Shape shape(x.shape().begin(), x.shape().begin() + channel_dims);
  shape.resize(static_cast<std::size_t>(x.dim()), 1);
  return shape;
}

// 1 with probability 1 - p (kept), 0 otherwise, of `shape`, x's dtype and device.
Tensor keep_mask(const Tensor& x, const Shape& shape, double p) {
  return bernoulli(zeros(shape, x.options()), 1.0 - p);
}

// Channel dropout over a batched input of `batched_dim` dims or an unbatched one of one less.
Tensor channel_dropout(const char* op, const Tensor& x, double p, bool training,
                       std::int64_t batched_dim) {
  check_probability(op, p);
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == batched_dim || x.dim() == batched_dim - 1, op, ": expected a ",
                 batched_dim, "-D input (N, C, ...) or a ", batched_dim - 1,
                 "-D unbatched one (C, ...), got shape ", x.shape());
  if (!training || p == 0.0) return x;
  if (p == 1.0) return mul(x, 0.0);
  const Tensor mask = keep_mask(x, channel_mask_shape(x, batched_dim), p);
  return mul(x, mul(mask, 1.0 / (1.0 - p)));
}

// Alpha dropout with a mask of `mask_shape` (x's own, or per channel).
Tensor alpha_dropout_with(const Tensor& x, double p, const Shape& mask_shape) {
  if (p == 1.0) return mul(x, 0.0);
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1.0) * (1.0 - p));
  const Tensor keep = keep_mask(x, mask_shape, p);
  // kept: a x + alpha a p; dropped: alpha a (p - 1), i.e. alpha a p + alpha a (keep - 1).
  const Tensor shift = add(mul(sub(keep, 1.0), kAlpha * a), kAlpha * a * p);
  return add(mul(x, mul(keep, a)), shift);
}

}  // namespace

Tensor dropout1d(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  return channel_dropout("dropout1d", x, p, training, 3);
}

Tensor dropout2d(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  return channel_dropout("dropout2d", x, p, training, 4);
}

Tensor dropout3d(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  return channel_dropout("dropout3d", x, p, training, 5);
}

Tensor alpha_dropout(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  const char* op = "alpha_dropout";
  check_probability(op, p);
  autograd::check_floating_input(op, x);
  if (!training || p == 0.0) return x;
  return alpha_dropout_with(x, p, x.shape());
}

Tensor feature_alpha_dropout(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  const char* op = "feature_alpha_dropout";
  check_probability(op, p);
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() >= 2, op, ": expected an input of at least 2 dims (N, C, *), got shape ",
                 x.shape());
  if (!training || p == 0.0) return x;
  Shape mask_shape{x.size(0), x.size(1)};
  mask_shape.resize(static_cast<std::size_t>(x.dim()), 1);
  return alpha_dropout_with(x, p, mask_shape);
}

}  // namespace leangrad
