// nn::Conv1d, nn::Conv2d, nn::Conv3d, nn::ConvTranspose1d and nn::ConvTranspose2d. nn::Conv2d, as
// LibTorch's:
//   nn::Conv2d(nn::Conv2dOptions(1, 32, 3).stride(1).padding(1)).
// Parameters `weight` (C_out, C_in / groups, kH, kW) and `bias` (C_out,), initialised as
// PyTorch does; forward is leangrad::conv2d (autograd/nn_functions.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// nn::Conv1d, as LibTorch's: nn::Conv1d(nn::Conv1dOptions(16, 32, 3).stride(1).padding(1)).
// Parameters `weight` (C_out, C_in / groups, k) and `bias` (C_out,), initialised as PyTorch does;
// forward is leangrad::conv1d (conv2d over a height of 1). padding and padding_mode as Conv2d's.
class Conv1dOptions {
 public:
  Conv1dOptions(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

  // A number, or kValid or kSame as Conv2d's.
  Conv1dOptions& padding(std::int64_t p) {
    padding_ = p;
    padding_rule_.reset();
    return *this;
  }
  Conv1dOptions& padding(ConvPadding rule) {
    padding_ = 0;
    padding_rule_ = rule;
    return *this;
  }
  std::int64_t padding() const { return padding_; }
  const std::optional<ConvPadding>& padding_rule() const { return padding_rule_; }

  LG_ARG(std::int64_t, in_channels);
  LG_ARG(std::int64_t, out_channels);
  LG_ARG(std::int64_t, kernel_size);
  LG_ARG(std::int64_t, stride) = 1;
  LG_ARG(std::int64_t, dilation) = 1;
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(bool, bias) = true;
  LG_ARG(PadMode, padding_mode) = kZeros;

 private:
  std::int64_t padding_ = 0;
  std::optional<ConvPadding> padding_rule_;
};

class Conv1dImpl : public Module {
 public:
  explicit Conv1dImpl(const Conv1dOptions& options);
  // x (N, C_in, L) -> (N, C_out, L_out).
  Tensor forward(const Tensor& x) override;
  // "16, 32, kernel_size=(3,), stride=(1,), padding=(1,)", as PyTorch prints it.
  std::string extra_repr() const override;
  const Conv1dOptions& options() const { return options_; }

  Tensor weight;
  Tensor bias;  // undefined when options.bias(false)

 private:
  Conv1dOptions options_;
};
LEANGRAD_MODULE(Conv1d);

class Conv2dOptions {
 public:
  // A square kernel, or (kH, kW).
  Conv2dOptions(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_({kernel_size, kernel_size}) {}
  Conv2dOptions(std::int64_t in_channels, std::int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

  // Setters take one value for both dims, or (height, width).
  Conv2dOptions& stride(std::int64_t s) { return stride(Size2{s, s}); }
  Conv2dOptions& padding(std::int64_t p) { return padding(Size2{p, p}); }
  // padding: a number for both dims, (height, width), or LibTorch's kValid (none) or kSame (the
  // output as large as the input; stride 1 only), autograd/nn_functions.h's ConvPadding, which
  // padding_rule() then holds (padding() is then zeros).
  Conv2dOptions& padding(const Size2& p) {
    padding_ = p;
    padding_rule_.reset();
    return *this;
  }
  Conv2dOptions& padding(ConvPadding rule) {
    padding_ = {0, 0};
    padding_rule_ = rule;
    return *this;
  }
  const Size2& padding() const { return padding_; }
  const std::optional<ConvPadding>& padding_rule() const { return padding_rule_; }
  Conv2dOptions& dilation(std::int64_t d) { return dilation(Size2{d, d}); }

  LG_ARG(std::int64_t, in_channels);
  LG_ARG(std::int64_t, out_channels);
  LG_ARG(Size2, kernel_size);
  LG_ARG(Size2, stride) = {1, 1};
  LG_ARG(Size2, dilation) = {1, 1};
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(bool, bias) = true;
  // kZeros (conv2d's own zero padding), or kReflect, kReplicate or kCircular: the input padded
  // by `padding` (or kSame's amounts) in that mode (leangrad::pad), then convolved without
  // padding, as PyTorch's Conv2d does.
  LG_ARG(PadMode, padding_mode) = kZeros;

 private:
  Size2 padding_ = {0, 0};
  std::optional<ConvPadding> padding_rule_;
};

class Conv2dImpl : public Module {
 public:
  explicit Conv2dImpl(const Conv2dOptions& options);
  // x (N, C_in, H, W) -> (N, C_out, H_out, W_out).
  Tensor forward(const Tensor& x) override;
  // "1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)", as PyTorch prints it.
  std::string extra_repr() const override;
  const Conv2dOptions& options() const { return options_; }

  Tensor weight;
  Tensor bias;  // undefined when options.bias(false)

 private:
  Conv2dOptions options_;
};
LEANGRAD_MODULE(Conv2d);

// nn::Conv3d, as LibTorch's: nn::Conv3d(nn::Conv3dOptions(1, 16, 3).stride({1, 2, 2}).padding(1)).
// Parameters `weight` (C_out, C_in / groups, kD, kH, kW) and `bias` (C_out,), initialised as
// PyTorch does; forward is leangrad::conv3d (autograd/volumetric_functions.h, one conv2d over
// the gathered depth planes). padding_mode as Conv2d's.
class Conv3dOptions {
 public:
  // A cubic kernel, or (kD, kH, kW).
  Conv3dOptions(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_({kernel_size, kernel_size, kernel_size}) {}
  Conv3dOptions(std::int64_t in_channels, std::int64_t out_channels, Size3 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

  // Setters take one value for all three dims, or (depth, height, width).
  Conv3dOptions& stride(std::int64_t s) { return stride(Size3{s, s, s}); }
  Conv3dOptions& padding(std::int64_t p) { return padding(Size3{p, p, p}); }
  // padding: a number for all dims, (depth, height, width), or kValid or kSame as Conv2d's.
  Conv3dOptions& padding(const Size3& p) {
    padding_ = p;
    padding_rule_.reset();
    return *this;
  }
  Conv3dOptions& padding(ConvPadding rule) {
    padding_ = {0, 0, 0};
    padding_rule_ = rule;
    return *this;
  }
  const Size3& padding() const { return padding_; }
  const std::optional<ConvPadding>& padding_rule() const { return padding_rule_; }
  Conv3dOptions& dilation(std::int64_t d) { return dilation(Size3{d, d, d}); }

  LG_ARG(std::int64_t, in_channels);
  LG_ARG(std::int64_t, out_channels);
  LG_ARG(Size3, kernel_size);
  LG_ARG(Size3, stride) = {1, 1, 1};
  LG_ARG(Size3, dilation) = {1, 1, 1};
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(bool, bias) = true;
  LG_ARG(PadMode, padding_mode) = kZeros;

 private:
  Size3 padding_ = {0, 0, 0};
  std::optional<ConvPadding> padding_rule_;
};

class Conv3dImpl : public Module {
 public:
  explicit Conv3dImpl(const Conv3dOptions& options);
  // x (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out).
  Tensor forward(const Tensor& x) override;
  // "1, 16, kernel_size=(3, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1)", as PyTorch prints it.
  std::string extra_repr() const override;
  const Conv3dOptions& options() const { return options_; }

  Tensor weight;
  Tensor bias;  // undefined when options.bias(false)

 private:
  Conv3dOptions options_;
};
LEANGRAD_MODULE(Conv3d);

// nn::ConvTranspose2d, as LibTorch's:
//   nn::ConvTranspose2d(nn::ConvTranspose2dOptions(64, 32, 4).stride(2).padding(1)).
// Parameters `weight` (C_in, C_out / groups, kH, kW) and `bias` (C_out,), initialised as PyTorch
// does (fan_in = C_out / groups * kH * kW, from the weight's shape); forward is
// leangrad::conv_transpose2d. LibTorch's padding_mode and forward's output_size are not there.
// nn::ConvTranspose1d, as LibTorch's: nn::ConvTranspose1d(nn::ConvTranspose1dOptions(32, 16, 4)
// .stride(2).padding(1)). Parameters `weight` (C_in, C_out / groups, k) and `bias` (C_out,),
// initialised as PyTorch does (fan_in = C_out / groups * k); forward is
// leangrad::conv_transpose1d.
class ConvTranspose1dOptions {
 public:
  ConvTranspose1dOptions(std::int64_t in_channels, std::int64_t out_channels,
                         std::int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

  LG_ARG(std::int64_t, in_channels);
  LG_ARG(std::int64_t, out_channels);
  LG_ARG(std::int64_t, kernel_size);
  LG_ARG(std::int64_t, stride) = 1;
  LG_ARG(std::int64_t, padding) = 0;
  LG_ARG(std::int64_t, output_padding) = 0;
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(bool, bias) = true;
  LG_ARG(std::int64_t, dilation) = 1;
};

class ConvTranspose1dImpl : public Module {
 public:
  explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& options);
  // x (N, C_in, L) -> (N, C_out, L_out).
  Tensor forward(const Tensor& x) override;
  // "32, 16, kernel_size=(4,), stride=(2,), padding=(1,)", as PyTorch prints it.
  std::string extra_repr() const override;
  const ConvTranspose1dOptions& options() const { return options_; }

  Tensor weight;
  Tensor bias;  // undefined when options.bias(false)

 private:
  ConvTranspose1dOptions options_;
};
LEANGRAD_MODULE(ConvTranspose1d);

class ConvTranspose2dOptions {
 public:
  ConvTranspose2dOptions(std::int64_t in_channels, std::int64_t out_channels,
                         std::int64_t kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_({kernel_size, kernel_size}) {}
  ConvTranspose2dOptions(std::int64_t in_channels, std::int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

  // Setters take one value for both dims, or (height, width).
  ConvTranspose2dOptions& stride(std::int64_t s) { return stride(Size2{s, s}); }
  ConvTranspose2dOptions& padding(std::int64_t p) { return padding(Size2{p, p}); }
  ConvTranspose2dOptions& output_padding(std::int64_t p) { return output_padding(Size2{p, p}); }
  ConvTranspose2dOptions& dilation(std::int64_t d) { return dilation(Size2{d, d}); }

  LG_ARG(std::int64_t, in_channels);
  LG_ARG(std::int64_t, out_channels);
  LG_ARG(Size2, kernel_size);
  LG_ARG(Size2, stride) = {1, 1};
  LG_ARG(Size2, padding) = {0, 0};
  LG_ARG(Size2, output_padding) = {0, 0};
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(bool, bias) = true;
  LG_ARG(Size2, dilation) = {1, 1};
};

class ConvTranspose2dImpl : public Module {
 public:
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
  // x (N, C_in, H, W) -> (N, C_out, H_out, W_out).
  Tensor forward(const Tensor& x) override;
  // "64, 32, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1)", as PyTorch prints it.
  std::string extra_repr() const override;
  const ConvTranspose2dOptions& options() const { return options_; }

  Tensor weight;
  Tensor bias;  // undefined when options.bias(false)

 private:
  ConvTranspose2dOptions options_;
};
LEANGRAD_MODULE(ConvTranspose2d);

// nn::ConvTranspose3d, as LibTorch's:
//   nn::ConvTranspose3d(nn::ConvTranspose3dOptions(32, 16, 4).stride({1, 2, 2}).padding(1)).
// Parameters `weight` (C_in, C_out / groups, kD, kH, kW) and `bias` (C_out,), initialised as
// PyTorch does (fan_in = C_out / groups * kD * kH * kW); forward is leangrad::conv_transpose3d
// (autograd/volumetric_functions.h: one conv_transpose2d over the depth planes, summed into
// their output depths). LibTorch's padding_mode and forward's output_size are not there, as for
// ConvTranspose2d.
class ConvTranspose3dOptions {
 public:
  // A cubic kernel, or (kD, kH, kW).
  ConvTranspose3dOptions(std::int64_t in_channels, std::int64_t out_channels,
                         std::int64_t kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_({kernel_size, kernel_size, kernel_size}) {}
  ConvTranspose3dOptions(std::int64_t in_channels, std::int64_t out_channels, Size3 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

  // Setters take one value for all three dims, or (depth, height, width).
  ConvTranspose3dOptions& stride(std::int64_t s) { return stride(Size3{s, s, s}); }
  ConvTranspose3dOptions& padding(std::int64_t p) { return padding(Size3{p, p, p}); }
  ConvTranspose3dOptions& output_padding(std::int64_t p) { return output_padding(Size3{p, p, p}); }
  ConvTranspose3dOptions& dilation(std::int64_t d) { return dilation(Size3{d, d, d}); }

  LG_ARG(std::int64_t, in_channels);
  LG_ARG(std::int64_t, out_channels);
  LG_ARG(Size3, kernel_size);
  LG_ARG(Size3, stride) = {1, 1, 1};
  LG_ARG(Size3, padding) = {0, 0, 0};
  LG_ARG(Size3, output_padding) = {0, 0, 0};
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(bool, bias) = true;
  LG_ARG(Size3, dilation) = {1, 1, 1};
};

class ConvTranspose3dImpl : public Module {
 public:
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options);
  // x (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out).
  Tensor forward(const Tensor& x) override;
  // "32, 16, kernel_size=(4, 4, 4), stride=(1, 2, 2), padding=(1, 1, 1)", as PyTorch prints it.
  std::string extra_repr() const override;
  const ConvTranspose3dOptions& options() const { return options_; }

  Tensor weight;
  Tensor bias;  // undefined when options.bias(false)

 private:
  ConvTranspose3dOptions options_;
};
LEANGRAD_MODULE(ConvTranspose3d);

}  // namespace leangrad::nn
