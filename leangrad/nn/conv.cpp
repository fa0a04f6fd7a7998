// nn::Conv1d, nn::Conv2d, nn::Conv3d, nn::ConvTranspose1d and nn::ConvTranspose2d (nn/conv.h):
// parameters created and initialised as torch.nn does, forward through leangrad::conv1d / conv2d
// / conv3d / conv_transpose1d / conv_transpose2d.
#include <leangrad/nn/conv.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::nn {

namespace {

std::string size2_str(const Size2& s) {
  std::ostringstream out;
  out << "(" << s[0] << ", " << s[1] << ")";
  return out.str();
}

std::string size3_str(const Size3& s) {
  std::ostringstream out;
  out << "(" << s[0] << ", " << s[1] << ", " << s[2] << ")";
  return out.str();
}

// PyTorch's reset_parameters, the same for both convolutions: kaiming_uniform_(weight,
// a = sqrt(5)) is U(-b, b) with b = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + 5)):
// b = 1 / sqrt(fan_in), where fan_in = weight.size(1) * kH * kW (* k for Conv1d); the bias (when
// `bias_size` > 0) is U(-b, b) too. Returns {weight, bias}.
std::pair<Tensor, Tensor> conv_parameters(const char* op, const Shape& weight_shape,
                                          std::int64_t bias_size) {
  std::int64_t fan_in = 1;  // weight.size(1) times the kernel's sizes
  for (std::size_t d = 1; d < weight_shape.size(); ++d)
    fan_in = checked_mul(fan_in, weight_shape[d], op);
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  Generator& gen = default_generator(Device::cpu());
  Tensor w = empty(weight_shape);
  ops::uniform_(w, -bound, bound, gen);
  Tensor b;
  if (bias_size > 0) {
    b = empty({bias_size});
    ops::uniform_(b, -bound, bound, gen);
  }
  return {w, b};
}

// The options every convolution module refuses, the same for all three: a count that is not
// positive (`kernel` the kernel size as printed, `kernel_positive` whether each of its sizes
// is), or channels that `groups` does not divide.
void check_conv_options(const char* op, std::int64_t in, std::int64_t out, std::int64_t groups,
                        bool kernel_positive, const std::string& kernel) {
  LG_CHECK_SHAPE(in > 0 && out > 0 && groups > 0 && kernel_positive, op,
                 ": expected positive in_channels, out_channels, groups and kernel_size, got ", in,
                 ", ", out, ", ", groups, ", ", kernel);
  LG_CHECK_SHAPE(in % groups == 0 && out % groups == 0, op, ": in_channels (", in,
                 ") and out_channels (", out, ") must be divisible by groups (", groups, ")");
}

// The padding a module with padding_mode other than kZeros gives leangrad::pad (the last dim
// first): each dim's `padding` on both sides, or kSame's amounts (same_padding); empty when there
// is none.
template <std::size_t D>
std::vector<std::int64_t> mode_padding(const std::array<std::int64_t, D>& padding,
                                       const std::optional<ConvPadding>& rule,
                                       const std::array<std::int64_t, D>& kernel,
                                       const std::array<std::int64_t, D>& dilation) {
  std::vector<std::int64_t> amounts;
  amounts.reserve(2 * D);
  bool any = false;
  for (std::size_t i = D; i-- > 0;) {
    std::array<std::int64_t, 2> sides = {padding[i], padding[i]};
    if (rule == ConvPadding::Same) sides = same_padding(kernel[i], dilation[i]);
    amounts.push_back(sides[0]);
    amounts.push_back(sides[1]);
    any = any || sides[0] != 0 || sides[1] != 0;
  }
  if (!any) amounts.clear();
  return amounts;
}

// kSame keeps the size only at stride 1: a module refuses another at construction, as PyTorch's.
template <std::size_t D>
void check_same_stride(const char* op, const std::optional<ConvPadding>& rule,
                       const std::array<std::int64_t, D>& stride) {
  bool strided = false;
  for (const std::int64_t s : stride)
    strided = strided || s != 1;
  LG_CHECK_SHAPE(rule != ConvPadding::Same || !strided, op,
                 ": padding kSame (\"same\") keeps the size only at stride 1, got stride ",
                 Shape(std::vector<std::int64_t>(stride.begin(), stride.end())));
}

// ", padding=same" or ", padding=valid", as PyTorch prints a string padding; empty otherwise.
std::string rule_str(const std::optional<ConvPadding>& rule) {
  return rule ? std::string(", padding=") + conv_padding_name(*rule) : std::string();
}

}  // namespace

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options) : Module("Conv1d"), options_(options) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups(), k = options.kernel_size();
  check_conv_options("Conv1d", in, out, groups, k > 0, std::to_string(k));
  check_same_stride<1>("Conv1d", options.padding_rule(), {options.stride()});
  auto [w, b] = conv_parameters("Conv1d", {out, in / groups, k}, options.bias() ? out : 0);
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor Conv1dImpl::forward(const Tensor& x) {
  const Conv1dOptions& o = options_;
  if (o.padding_mode() != kZeros) {
    const std::vector<std::int64_t> p =
        mode_padding<1>({o.padding()}, o.padding_rule(), {o.kernel_size()}, {o.dilation()});
    if (!p.empty()) {
      return conv1d(pad(x, p, o.padding_mode()), weight, bias, o.stride(), 0, o.dilation(),
                    o.groups());
    }
  }
  if (o.padding_rule()) {
    return conv1d(x, weight, bias, o.stride(), *o.padding_rule(), o.dilation(), o.groups());
  }
  return conv1d(x, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
}

std::string Conv1dImpl::extra_repr() const {
  std::ostringstream out;  // PyTorch prints one-element tuples: (3,)
  out << options_.in_channels() << ", " << options_.out_channels() << ", kernel_size=("
      << options_.kernel_size() << ",), stride=(" << options_.stride() << ",)";
  if (options_.padding() != 0) out << ", padding=(" << options_.padding() << ",)";
  out << rule_str(options_.padding_rule());
  if (options_.dilation() != 1) out << ", dilation=(" << options_.dilation() << ",)";
  if (options_.groups() != 1) out << ", groups=" << options_.groups();
  if (!options_.bias()) out << ", bias=False";
  if (options_.padding_mode() != kZeros)
    out << ", padding_mode=" << pad_mode_name(options_.padding_mode());
  return out.str();
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options) : Module("Conv2d"), options_(options) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups();
  const Size2 k = options.kernel_size();
  check_conv_options("Conv2d", in, out, groups, k[0] > 0 && k[1] > 0, size2_str(k));
  check_same_stride("Conv2d", options.padding_rule(), options.stride());
  auto [w, b] = conv_parameters("Conv2d", {out, in / groups, k[0], k[1]}, options.bias() ? out : 0);
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor Conv2dImpl::forward(const Tensor& x) {
  const Conv2dOptions& o = options_;
  if (o.padding_mode() != kZeros) {
    const std::vector<std::int64_t> p =
        mode_padding(o.padding(), o.padding_rule(), o.kernel_size(), o.dilation());
    if (!p.empty()) {
      return conv2d(pad(x, p, o.padding_mode()), weight, bias, o.stride(), Size2{0, 0},
                    o.dilation(), o.groups());
    }
  }
  if (o.padding_rule()) {
    return conv2d(x, weight, bias, o.stride(), *o.padding_rule(), o.dilation(), o.groups());
  }
  return conv2d(x, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
}

std::string Conv2dImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.in_channels() << ", " << options_.out_channels()
      << ", kernel_size=" << size2_str(options_.kernel_size())
      << ", stride=" << size2_str(options_.stride());
  if (options_.padding() != Size2{0, 0}) out << ", padding=" << size2_str(options_.padding());
  out << rule_str(options_.padding_rule());
  if (options_.dilation() != Size2{1, 1}) out << ", dilation=" << size2_str(options_.dilation());
  if (options_.groups() != 1) out << ", groups=" << options_.groups();
  if (!options_.bias()) out << ", bias=False";
  if (options_.padding_mode() != kZeros)
    out << ", padding_mode=" << pad_mode_name(options_.padding_mode());
  return out.str();
}

Conv3dImpl::Conv3dImpl(const Conv3dOptions& options) : Module("Conv3d"), options_(options) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups();
  const Size3 k = options.kernel_size();
  check_conv_options("Conv3d", in, out, groups, k[0] > 0 && k[1] > 0 && k[2] > 0, size3_str(k));
  check_same_stride("Conv3d", options.padding_rule(), options.stride());
  auto [w, b] =
      conv_parameters("Conv3d", {out, in / groups, k[0], k[1], k[2]}, options.bias() ? out : 0);
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor Conv3dImpl::forward(const Tensor& x) {
  const Conv3dOptions& o = options_;
  if (o.padding_mode() != kZeros) {
    const std::vector<std::int64_t> p =
        mode_padding(o.padding(), o.padding_rule(), o.kernel_size(), o.dilation());
    if (!p.empty()) {
      return conv3d(pad(x, p, o.padding_mode()), weight, bias, o.stride(), Size3{0, 0, 0},
                    o.dilation(), o.groups());
    }
  }
  if (o.padding_rule()) {
    return conv3d(x, weight, bias, o.stride(), *o.padding_rule(), o.dilation(), o.groups());
  }
  return conv3d(x, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
}

std::string Conv3dImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.in_channels() << ", " << options_.out_channels()
      << ", kernel_size=" << size3_str(options_.kernel_size())
      << ", stride=" << size3_str(options_.stride());
  if (options_.padding() != Size3{0, 0, 0}) out << ", padding=" << size3_str(options_.padding());
  out << rule_str(options_.padding_rule());
  if (options_.dilation() != Size3{1, 1, 1}) out << ", dilation=" << size3_str(options_.dilation());
  if (options_.groups() != 1) out << ", groups=" << options_.groups();
  if (!options_.bias()) out << ", bias=False";
  if (options_.padding_mode() != kZeros)
    out << ", padding_mode=" << pad_mode_name(options_.padding_mode());
  return out.str();
}

ConvTranspose1dImpl::ConvTranspose1dImpl(const ConvTranspose1dOptions& options)
    : Module("ConvTranspose1d"), options_(options) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups(), k = options.kernel_size();
  check_conv_options("ConvTranspose1d", in, out, groups, k > 0, std::to_string(k));
  // Its weight is (in, out / groups, k): fan_in = out_channels / groups * k.
  auto [w, b] = conv_parameters("ConvTranspose1d", {in, out / groups, k}, options.bias() ? out : 0);
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor ConvTranspose1dImpl::forward(const Tensor& x) {
  return conv_transpose1d(x, weight, bias, options_.stride(), options_.padding(),
                          options_.output_padding(), options_.groups(), options_.dilation());
}

std::string ConvTranspose1dImpl::extra_repr() const {
  std::ostringstream out;  // PyTorch prints one-element tuples: (4,)
  out << options_.in_channels() << ", " << options_.out_channels() << ", kernel_size=("
      << options_.kernel_size() << ",), stride=(" << options_.stride() << ",)";
  if (options_.padding() != 0) out << ", padding=(" << options_.padding() << ",)";
  if (options_.output_padding() != 0)
    out << ", output_padding=(" << options_.output_padding() << ",)";
  if (options_.dilation() != 1) out << ", dilation=(" << options_.dilation() << ",)";
  if (options_.groups() != 1) out << ", groups=" << options_.groups();
  if (!options_.bias()) out << ", bias=False";
  return out.str();
}

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options)
    : Module("ConvTranspose2d"), options_(options) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups();
  const Size2 k = options.kernel_size();
  check_conv_options("ConvTranspose2d", in, out, groups, k[0] > 0 && k[1] > 0, size2_str(k));
  // Its weight is (in, out / groups, kH, kW): fan_in = out_channels / groups * kH * kW.
  auto [w, b] =
      conv_parameters("ConvTranspose2d", {in, out / groups, k[0], k[1]}, options.bias() ? out : 0);
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor ConvTranspose2dImpl::forward(const Tensor& x) {
  return conv_transpose2d(x, weight, bias, options_.stride(), options_.padding(),
                          options_.output_padding(), options_.groups(), options_.dilation());
}

std::string ConvTranspose2dImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.in_channels() << ", " << options_.out_channels()
      << ", kernel_size=" << size2_str(options_.kernel_size())
      << ", stride=" << size2_str(options_.stride());
  if (options_.padding() != Size2{0, 0}) out << ", padding=" << size2_str(options_.padding());
  if (options_.output_padding() != Size2{0, 0})
    out << ", output_padding=" << size2_str(options_.output_padding());
  if (options_.dilation() != Size2{1, 1}) out << ", dilation=" << size2_str(options_.dilation());
  if (options_.groups() != 1) out << ", groups=" << options_.groups();
  if (!options_.bias()) out << ", bias=False";
  return out.str();
}

ConvTranspose3dImpl::ConvTranspose3dImpl(const ConvTranspose3dOptions& options)
    : Module("ConvTranspose3d"), options_(options) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups();
  const Size3 k = options.kernel_size();
  check_conv_options("ConvTranspose3d", in, out, groups, k[0] > 0 && k[1] > 0 && k[2] > 0,
                     size3_str(k));
  // Its weight is (in, out / groups, kD, kH, kW): fan_in = out_channels / groups * kD * kH * kW.
  auto [w, b] = conv_parameters("ConvTranspose3d", {in, out / groups, k[0], k[1], k[2]},
                                options.bias() ? out : 0);
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor ConvTranspose3dImpl::forward(const Tensor& x) {
  return conv_transpose3d(x, weight, bias, options_.stride(), options_.padding(),
                          options_.output_padding(), options_.groups(), options_.dilation());
}

std::string ConvTranspose3dImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.in_channels() << ", " << options_.out_channels()
      << ", kernel_size=" << size3_str(options_.kernel_size())
      << ", stride=" << size3_str(options_.stride());
  if (options_.padding() != Size3{0, 0, 0}) out << ", padding=" << size3_str(options_.padding());
  if (options_.output_padding() != Size3{0, 0, 0})
    out << ", output_padding=" << size3_str(options_.output_padding());
  if (options_.dilation() != Size3{1, 1, 1}) out << ", dilation=" << size3_str(options_.dilation());
  if (options_.groups() != 1) out << ", groups=" << options_.groups();
  if (!options_.bias()) out << ", bias=False";
  return out.str();
}

}  // namespace leangrad::nn
