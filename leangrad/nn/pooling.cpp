// MaxPool2d, AvgPool2d, PixelShuffle, PixelUnshuffle and Flatten (nn/pooling.h).
#include <leangrad/nn/pooling.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn {

namespace {
std::string pool_repr(Size2 kernel, Size2 stride, Size2 padding) {
  return detail::str_cat("kernel_size=", shape_str({kernel[0], kernel[1]}),
                         ", stride=", shape_str({stride[0], stride[1]}),
                         ", padding=", shape_str({padding[0], padding[1]}));
}
}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return max_pool2d(input, options.kernel_size(), options.stride(), options.padding());
}
std::string MaxPool2dImpl::extra_repr() const {
  return pool_repr(options.kernel_size(), options.stride(), options.padding());
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return avg_pool2d(input, options.kernel_size(), options.stride(), options.padding());
}
std::string AvgPool2dImpl::extra_repr() const {
  return pool_repr(options.kernel_size(), options.stride(), options.padding());
}

Tensor PixelShuffleImpl::forward(const Tensor& input) {
  return pixel_shuffle(input, upscale_factor);
}
std::string PixelShuffleImpl::extra_repr() const {
  return detail::str_cat("upscale_factor=", upscale_factor);
}

Tensor PixelUnshuffleImpl::forward(const Tensor& input) {
  return pixel_unshuffle(input, downscale_factor);
}
std::string PixelUnshuffleImpl::extra_repr() const {
  return detail::str_cat("downscale_factor=", downscale_factor);
}

Tensor FlattenImpl::forward(const Tensor& input) {
  return flatten(input, start_dim, end_dim);
}
std::string FlattenImpl::extra_repr() const {
  return detail::str_cat("start_dim=", start_dim, ", end_dim=", end_dim);
}

}  // namespace leangrad::nn
