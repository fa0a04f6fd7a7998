// nn::FractionalMaxPool2d and nn::FractionalMaxPool3d (nn/fractional_max_pool.h).
#include <leangrad/nn/fractional_max_pool.h>

#include <string>

#include <leangrad/core/error.h>

namespace leangrad::nn {

namespace {

template <std::size_t N>
void check_options(const char* name, const FractionalMaxPoolOptions<N>& options) {
  LG_CHECK(options.output_size().has_value() != options.output_ratio().has_value(), name,
           " requires specifying either an output size, or a pooling ratio (exactly one), got ",
           options.output_size() ? "both" : "neither");
  for (const std::int64_t k : options.kernel_size())
    LG_CHECK(k >= 1, name, ": expected kernel_size >= 1, got ", k);
  if (options.output_ratio()) {
    for (const double r : *options.output_ratio())
      LG_CHECK(r > 0.0 && r < 1.0, name, ": output_ratio must be between 0 and 1, got ", r);
  }
}

template <typename A>
std::string tuple_of(const A& values) {
  std::string s = "(";
  for (std::size_t i = 0; i < values.size(); ++i)
    s += detail::str_cat(i == 0 ? "" : ", ", values[i]);
  return s + ")";
}

template <std::size_t N>
std::string repr(const FractionalMaxPoolOptions<N>& options) {
  std::string s = "kernel_size=" + tuple_of(options.kernel_size());
  if (options.output_size()) s += ", output_size=" + tuple_of(*options.output_size());
  if (options.output_ratio()) s += ", output_ratio=" + tuple_of(*options.output_ratio());
  return s;
}

}  // namespace

FractionalMaxPool2dImpl::FractionalMaxPool2dImpl(const FractionalMaxPool2dOptions& options)
    : Module("FractionalMaxPool2d"), options(options) {
  check_options("FractionalMaxPool2d", options);
}

std::tuple<Tensor, Tensor> FractionalMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return fractional_max_pool2d_with_indices(input, options.kernel_size(), options.output_size(),
                                            options.output_ratio(), options._random_samples());
}

Tensor FractionalMaxPool2dImpl::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

std::string FractionalMaxPool2dImpl::extra_repr() const {
  return repr(options);
}

FractionalMaxPool3dImpl::FractionalMaxPool3dImpl(const FractionalMaxPool3dOptions& options)
    : Module("FractionalMaxPool3d"), options(options) {
  check_options("FractionalMaxPool3d", options);
}

std::tuple<Tensor, Tensor> FractionalMaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return fractional_max_pool3d_with_indices(input, options.kernel_size(), options.output_size(),
                                            options.output_ratio(), options._random_samples());
}

Tensor FractionalMaxPool3dImpl::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

std::string FractionalMaxPool3dImpl::extra_repr() const {
  return repr(options);
}

}  // namespace leangrad::nn
