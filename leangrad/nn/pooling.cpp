// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, AdaptiveMaxPool1d and 2d, MaxPool1d, AvgPool1d,
// AdaptiveAvgPool1d, PixelShuffle, PixelUnshuffle,
// Flatten and Unflatten (nn/pooling.h).
#include <leangrad/nn/pooling.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn {

namespace {
std::string pool_repr(Size2 kernel, Size2 stride, Size2 padding) {
  return detail::str_cat("kernel_size=", shape_str({kernel[0], kernel[1]}),
                         ", stride=", shape_str({stride[0], stride[1]}),
                         ", padding=", shape_str({padding[0], padding[1]}));
}
const char* bool_str(bool b) {
  return b ? "true" : "false";
}
}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return max_pool2d(input, options.kernel_size(), options.stride(), options.padding(),
                    options.dilation(), options.ceil_mode());
}
std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return max_pool2d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                 options.dilation(), options.ceil_mode());
}
// As LibTorch's: kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1],
// ceil_mode=false.
std::string MaxPool2dImpl::extra_repr() const {
  const Size2 d = options.dilation();
  return detail::str_cat(pool_repr(options.kernel_size(), options.stride(), options.padding()),
                         ", dilation=", shape_str({d[0], d[1]}),
                         ", ceil_mode=", bool_str(options.ceil_mode()));
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(),
                    options.ceil_mode(), options.count_include_pad(), options.divisor_override());
}
// LibTorch's three fields, then the divisor options (docs/api-notes.md): ceil_mode=false,
// count_include_pad=true, and divisor_override=N when set.
std::string AvgPool2dImpl::extra_repr() const {
  std::string out =
      detail::str_cat(pool_repr(options.kernel_size(), options.stride(), options.padding()),
                      ", ceil_mode=", bool_str(options.ceil_mode()),
                      ", count_include_pad=", bool_str(options.count_include_pad()));
  if (options.divisor_override()) {
    out += detail::str_cat(", divisor_override=", *options.divisor_override());
  }
  return out;
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  return adaptive_avg_pool2d(input, options.output_size());
}
std::string AdaptiveAvgPool2dImpl::extra_repr() const {
  const Size2 s = options.output_size();
  return detail::str_cat("output_size=", shape_str({s[0], s[1]}));
}

Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) {
  return adaptive_max_pool2d(input, options.output_size());
}
std::tuple<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return adaptive_max_pool2d_with_indices(input, options.output_size());
}
std::string AdaptiveMaxPool2dImpl::extra_repr() const {
  const Size2 s = options.output_size();
  return detail::str_cat("output_size=", shape_str({s[0], s[1]}));
}

Tensor MaxPool1dImpl::forward(const Tensor& input) {
  return max_pool1d(input, options.kernel_size(), options.stride(), options.padding(),
                    options.dilation(), options.ceil_mode());
}
std::tuple<Tensor, Tensor> MaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return max_pool1d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                 options.dilation(), options.ceil_mode());
}
// As LibTorch's: kernel_size=[3], stride=[3], padding=[0], dilation=[1], ceil_mode=false.
std::string MaxPool1dImpl::extra_repr() const {
  return detail::str_cat("kernel_size=", shape_str({options.kernel_size()}),
                         ", stride=", shape_str({options.stride()}),
                         ", padding=", shape_str({options.padding()}),
                         ", dilation=", shape_str({options.dilation()}),
                         ", ceil_mode=", bool_str(options.ceil_mode()));
}

Tensor AvgPool1dImpl::forward(const Tensor& input) {
  return avg_pool1d(input, options.kernel_size(), options.stride(), options.padding(),
                    options.ceil_mode(), options.count_include_pad());
}
std::string AvgPool1dImpl::extra_repr() const {
  return detail::str_cat("kernel_size=", shape_str({options.kernel_size()}),
                         ", stride=", shape_str({options.stride()}),
                         ", padding=", shape_str({options.padding()}),
                         ", ceil_mode=", bool_str(options.ceil_mode()),
                         ", count_include_pad=", bool_str(options.count_include_pad()));
}

Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& input) {
  return adaptive_avg_pool1d(input, options.output_size());
}
std::string AdaptiveAvgPool1dImpl::extra_repr() const {
  return detail::str_cat("output_size=", shape_str({options.output_size()}));
}

namespace {
std::string size3_list(Size3 s) {
  return shape_str({s[0], s[1], s[2]});
}
}  // namespace

Tensor MaxPool3dImpl::forward(const Tensor& input) {
  return max_pool3d(input, options.kernel_size(), options.stride(), options.padding(),
                    options.dilation(), options.ceil_mode());
}
std::tuple<Tensor, Tensor> MaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return max_pool3d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                 options.dilation(), options.ceil_mode());
}
std::string MaxPool3dImpl::extra_repr() const {
  return detail::str_cat(
      "kernel_size=", size3_list(options.kernel_size()), ", stride=", size3_list(options.stride()),
      ", padding=", size3_list(options.padding()), ", dilation=", size3_list(options.dilation()),
      ", ceil_mode=", bool_str(options.ceil_mode()));
}

Tensor AvgPool3dImpl::forward(const Tensor& input) {
  return avg_pool3d(input, options.kernel_size(), options.stride(), options.padding(),
                    options.ceil_mode(), options.count_include_pad(), options.divisor_override());
}
std::string AvgPool3dImpl::extra_repr() const {
  std::string out = detail::str_cat(
      "kernel_size=", size3_list(options.kernel_size()), ", stride=", size3_list(options.stride()),
      ", padding=", size3_list(options.padding()), ", ceil_mode=", bool_str(options.ceil_mode()),
      ", count_include_pad=", bool_str(options.count_include_pad()));
  if (options.divisor_override())
    out += detail::str_cat(", divisor_override=", *options.divisor_override());
  return out;
}

Tensor AdaptiveAvgPool3dImpl::forward(const Tensor& input) {
  return adaptive_avg_pool3d(input, options.output_size());
}
std::string AdaptiveAvgPool3dImpl::extra_repr() const {
  return detail::str_cat("output_size=", size3_list(options.output_size()));
}

Tensor AdaptiveMaxPool3dImpl::forward(const Tensor& input) {
  return adaptive_max_pool3d(input, options.output_size());
}
std::tuple<Tensor, Tensor> AdaptiveMaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return adaptive_max_pool3d_with_indices(input, options.output_size());
}
std::string AdaptiveMaxPool3dImpl::extra_repr() const {
  return detail::str_cat("output_size=", size3_list(options.output_size()));
}

Tensor AdaptiveMaxPool1dImpl::forward(const Tensor& input) {
  return adaptive_max_pool1d(input, options.output_size());
}
std::tuple<Tensor, Tensor> AdaptiveMaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return adaptive_max_pool1d_with_indices(input, options.output_size());
}
std::string AdaptiveMaxPool1dImpl::extra_repr() const {
  return detail::str_cat("output_size=", shape_str({options.output_size()}));
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

Tensor UnflattenImpl::forward(const Tensor& input) {
  return unflatten(input, options.dim(), options.sizes());
}
std::string UnflattenImpl::extra_repr() const {
  return detail::str_cat("dim=", options.dim(), ", unflattened_size=", options.sizes());
}

}  // namespace leangrad::nn
