// The modules of nn/composed_layers.h.
#include <leangrad/nn/composed_layers.h>

#include <cmath>
#include <string>
#include <type_traits>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::nn {

Tensor LPPool1dImpl::forward(const Tensor& input) {
  return lp_pool1d(input, options.norm_type(), options.kernel_size(), options.stride(),
                   options.ceil_mode());
}

std::string LPPool1dImpl::extra_repr() const {
  return detail::str_cat("norm_type=", options.norm_type(), ", kernel_size=", options.kernel_size(),
                         ", stride=", options.stride(),
                         ", ceil_mode=", options.ceil_mode() ? "true" : "false");
}

Tensor LPPool2dImpl::forward(const Tensor& input) {
  return lp_pool2d(input, options.norm_type(), options.kernel_size(), options.stride(),
                   options.ceil_mode());
}

std::string LPPool2dImpl::extra_repr() const {
  const Size2 k = options.kernel_size(), s = options.stride();
  return detail::str_cat("norm_type=", options.norm_type(), ", kernel_size=(", k[0], ", ", k[1],
                         "), stride=(", s[0], ", ", s[1],
                         "), ceil_mode=", options.ceil_mode() ? "true" : "false");
}

LocalResponseNormImpl::LocalResponseNormImpl(const LocalResponseNormOptions& options)
    : Module("LocalResponseNorm"), options(options) {
  LG_CHECK(options.size() >= 1, "LocalResponseNorm: expected a positive size, got ",
           options.size());
}

Tensor LocalResponseNormImpl::forward(const Tensor& input) {
  return local_response_norm(input, options.size(), options.alpha(), options.beta(), options.k());
}

std::string LocalResponseNormImpl::extra_repr() const {
  return detail::str_cat(options.size(), ", alpha=", options.alpha(), ", beta=", options.beta(),
                         ", k=", options.k());
}

CrossMapLRN2dImpl::CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options)
    : Module("CrossMapLRN2d"), options(options) {
  LG_CHECK(options.size() >= 1, "CrossMapLRN2d: expected a positive size, got ", options.size());
}

Tensor CrossMapLRN2dImpl::forward(const Tensor& input) {
  return cross_map_lrn2d(input, options.size(), options.alpha(), options.beta(), options.k());
}

std::string CrossMapLRN2dImpl::extra_repr() const {
  return detail::str_cat(options.size(), ", alpha=", options.alpha(), ", beta=", options.beta(),
                         ", k=", options.k());
}

BilinearImpl::BilinearImpl(const BilinearOptions& options) : Module("Bilinear"), options(options) {
  LG_CHECK(options.in1_features() > 0 && options.in2_features() > 0 && options.out_features() > 0,
           "Bilinear: expected positive in1_features, in2_features and out_features, got ",
           options.in1_features(), ", ", options.in2_features(), ", ", options.out_features());
  weight = register_parameter(
      "weight", empty({options.out_features(), options.in1_features(), options.in2_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  const NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in1_features()));
  Generator& gen = default_generator(Device::cpu());
  ops::uniform_(weight, -bound, bound, gen);
  if (bias.defined()) ops::uniform_(bias, -bound, bound, gen);
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return bilinear(input1, input2, weight, bias);
}

std::string BilinearImpl::extra_repr() const {
  return detail::str_cat(
      "in1_features=", options.in1_features(), ", in2_features=", options.in2_features(),
      ", out_features=", options.out_features(), ", bias=", options.bias() ? "true" : "false");
}

ChannelShuffleImpl::ChannelShuffleImpl(const ChannelShuffleOptions& options)
    : Module("ChannelShuffle"), options(options) {
  LG_CHECK(options.groups() >= 1, "ChannelShuffle: expected a positive number of groups, got ",
           options.groups());
}

Tensor ChannelShuffleImpl::forward(const Tensor& input) {
  return channel_shuffle(input, options.groups());
}

std::string ChannelShuffleImpl::extra_repr() const {
  return detail::str_cat("groups=", options.groups());
}

RReLUImpl::RReLUImpl(const RReLUOptions& options) : Module("RReLU"), options(options) {
  LG_CHECK(options.lower() <= options.upper(), "RReLU: expected lower <= upper, got lower ",
           options.lower(), " and upper ", options.upper());
}

Tensor RReLUImpl::forward(const Tensor& input) {
  return rrelu(input, options.lower(), options.upper(), is_training());
}

std::string RReLUImpl::extra_repr() const {
  return detail::str_cat("lower=", options.lower(), ", upper=", options.upper());
}

namespace {

template <typename Size>
std::string size_repr(const Size& s) {
  if constexpr (std::is_same_v<Size, std::int64_t>) {
    return std::to_string(s);
  } else {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i)
      out += (i > 0 ? ", " : "") + std::to_string(s[i]);
    return out + ")";
  }
}

template <typename Options>
std::string unpool_repr(const Options& o) {
  return "kernel_size=" + size_repr(o.kernel_size()) + ", stride=" + size_repr(o.stride()) +
         ", padding=" + size_repr(o.padding());
}

}  // namespace

Tensor MaxUnpool1dImpl::forward(const Tensor& input, const Tensor& indices,
                                std::optional<std::int64_t> output_size) {
  return max_unpool1d(input, indices, options.kernel_size(), options.stride(), options.padding(),
                      output_size);
}
std::string MaxUnpool1dImpl::extra_repr() const {
  return unpool_repr(options);
}

Tensor MaxUnpool2dImpl::forward(const Tensor& input, const Tensor& indices,
                                std::optional<Size2> output_size) {
  return max_unpool2d(input, indices, options.kernel_size(), options.stride(), options.padding(),
                      output_size);
}
std::string MaxUnpool2dImpl::extra_repr() const {
  return unpool_repr(options);
}

Tensor MaxUnpool3dImpl::forward(const Tensor& input, const Tensor& indices,
                                std::optional<Size3> output_size) {
  return max_unpool3d(input, indices, options.kernel_size(), options.stride(), options.padding(),
                      output_size);
}
std::string MaxUnpool3dImpl::extra_repr() const {
  return unpool_repr(options);
}

Tensor Softmax2dImpl::forward(const Tensor& input) {
  LG_CHECK(input.defined(), "Softmax2d: expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 3 || input.dim() == 4,
                 "Softmax2d: expected an input (N, C, H, W) or (C, H, W), got shape ",
                 input.shape());
  return softmax(input, -3);
}

}  // namespace leangrad::nn
