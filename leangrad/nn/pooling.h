// Shape-changing modules without parameters: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d,
// AdaptiveMaxPool1d, AdaptiveMaxPool2d, MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, the 3-d poolings,
// PixelShuffle, PixelUnshuffle and Flatten, each a thin wrapper over the function of
// autograd/nn_functions.h.
//   nn::MaxPool2d pool(2);  nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(1).padding(1));
//   nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).ceil_mode(true).count_include_pad(false));
//   nn::AdaptiveAvgPool2d pool(1);  // a classifier head's global average: (N, C, H, W) -> (N, C,
//   1, 1)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// kernel, stride (default: the kernel), padding and ceil_mode of a 2-D pooling; one number means
// both dims.
template <typename Derived>
struct Pool2dOptionsBase {
  explicit Pool2dOptionsBase(std::int64_t kernel) : Pool2dOptionsBase(Size2{kernel, kernel}) {}
  explicit Pool2dOptionsBase(Size2 kernel) : kernel_size_(kernel), stride_(kernel) {}
  Derived& stride(std::int64_t s) { return stride(Size2{s, s}); }
  Derived& stride(Size2 s) {
    stride_ = s;
    return self();
  }
  Derived& padding(std::int64_t p) { return padding(Size2{p, p}); }
  Derived& padding(Size2 p) {
    padding_ = p;
    return self();
  }
  Derived& ceil_mode(bool on) {
    ceil_mode_ = on;
    return self();
  }
  Size2 kernel_size() const { return kernel_size_; }
  Size2 stride() const { return stride_; }
  Size2 padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }

 protected:
  Derived& self() { return static_cast<Derived&>(*this); }

 private:
  Size2 kernel_size_;
  Size2 stride_;
  Size2 padding_{0, 0};
  bool ceil_mode_ = false;
};

//   nn::MaxPool2dOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true)
struct MaxPool2dOptions : Pool2dOptionsBase<MaxPool2dOptions> {
  using Pool2dOptionsBase::Pool2dOptionsBase;
  MaxPool2dOptions& dilation(std::int64_t d) { return dilation(Size2{d, d}); }
  MaxPool2dOptions& dilation(Size2 d) {
    dilation_ = d;
    return *this;
  }
  Size2 dilation() const { return dilation_; }

 private:
  Size2 dilation_{1, 1};
};

//   nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false)
//   nn::AvgPool2dOptions(2).divisor_override(3)
struct AvgPool2dOptions : Pool2dOptionsBase<AvgPool2dOptions> {
  using Pool2dOptionsBase::Pool2dOptionsBase;
  AvgPool2dOptions& count_include_pad(bool on) {
    count_include_pad_ = on;
    return *this;
  }
  AvgPool2dOptions& divisor_override(std::optional<std::int64_t> divisor) {
    divisor_override_ = divisor;
    return *this;
  }
  bool count_include_pad() const { return count_include_pad_; }
  std::optional<std::int64_t> divisor_override() const { return divisor_override_; }

 private:
  bool count_include_pad_ = true;
  std::optional<std::int64_t> divisor_override_;
};

// (N, C, H, W) -> (N, C, OH, OW); padding counts as -inf.
class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(std::int64_t kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Module("MaxPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  // The output and the int64 index of each maximum within its plane (LibTorch's
  // forward_with_indices; PyTorch's return_indices=True).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  MaxPool2dOptions options;
};
LEANGRAD_MODULE(MaxPool2d);

// (N, C, H, W) -> (N, C, OH, OW); padding counts as 0, and into the divisor with
// count_include_pad.
class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(std::int64_t kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Module("AvgPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};
LEANGRAD_MODULE(AvgPool2d);

//   nn::AdaptiveAvgPool2dOptions(1), nn::AdaptiveAvgPool2dOptions({7, 7})
struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(std::int64_t size) : output_size_{size, size} {}  // NOLINT: as LibTorch
  AdaptiveAvgPool2dOptions(Size2 size) : output_size_(size) {}               // NOLINT
  AdaptiveAvgPool2dOptions& output_size(Size2 size) {
    output_size_ = size;
    return *this;
  }
  Size2 output_size() const { return output_size_; }

 private:
  Size2 output_size_;
};

// (N, C, H, W) -> (N, C, OH, OW) by adaptive_avg_pool2d.
class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : Module("AdaptiveAvgPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // output_size=[1, 1]
  AdaptiveAvgPool2dOptions options;
};
LEANGRAD_MODULE(AdaptiveAvgPool2d);

//   nn::AdaptiveMaxPool2dOptions(1), nn::AdaptiveMaxPool2dOptions({7, 7})
struct AdaptiveMaxPool2dOptions {
  AdaptiveMaxPool2dOptions(std::int64_t size) : output_size_{size, size} {}  // NOLINT: as LibTorch
  AdaptiveMaxPool2dOptions(Size2 size) : output_size_(size) {}               // NOLINT
  AdaptiveMaxPool2dOptions& output_size(Size2 size) {
    output_size_ = size;
    return *this;
  }
  Size2 output_size() const { return output_size_; }

 private:
  Size2 output_size_;
};

// (N, C, H, W) -> (N, C, OH, OW) by adaptive_max_pool2d; forward_with_indices also returns the
// indices (LibTorch's).
class AdaptiveMaxPool2dImpl : public Module {
 public:
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options)
      : Module("AdaptiveMaxPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;  // output_size=[7, 7]
  AdaptiveMaxPool2dOptions options;
};
LEANGRAD_MODULE(AdaptiveMaxPool2d);

//   nn::AdaptiveMaxPool1dOptions(5)
struct AdaptiveMaxPool1dOptions {
  AdaptiveMaxPool1dOptions(std::int64_t size) : output_size_(size) {}  // NOLINT: as LibTorch
  AdaptiveMaxPool1dOptions& output_size(std::int64_t size) {
    output_size_ = size;
    return *this;
  }
  std::int64_t output_size() const { return output_size_; }

 private:
  std::int64_t output_size_;
};

// (N, C, L) -> (N, C, output_size) by adaptive_max_pool1d; forward_with_indices as above.
class AdaptiveMaxPool1dImpl : public Module {
 public:
  explicit AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options)
      : Module("AdaptiveMaxPool1d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;  // output_size=[5], as LibTorch prints it
  AdaptiveMaxPool1dOptions options;
};
LEANGRAD_MODULE(AdaptiveMaxPool1d);

// The 1-d poolings over (N, C, L) or (C, L), as LibTorch's (max_pool1d, avg_pool1d and
// adaptive_avg_pool1d of autograd/nn_functions.h; stride defaults to the kernel):
//   nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true))
//   nn::AvgPool1d(nn::AvgPool1dOptions(4).count_include_pad(false));  nn::AdaptiveAvgPool1d(1)
struct MaxPool1dOptions {
  MaxPool1dOptions(std::int64_t kernel_size)  // NOLINT: as LibTorch
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  LG_ARG(std::int64_t, kernel_size);
  LG_ARG(std::int64_t, stride);
  LG_ARG(std::int64_t, padding) = 0;
  LG_ARG(std::int64_t, dilation) = 1;
  LG_ARG(bool, ceil_mode) = false;
};

struct AvgPool1dOptions {
  AvgPool1dOptions(std::int64_t kernel_size)  // NOLINT: as LibTorch
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  LG_ARG(std::int64_t, kernel_size);
  LG_ARG(std::int64_t, stride);
  LG_ARG(std::int64_t, padding) = 0;
  LG_ARG(bool, ceil_mode) = false;
  LG_ARG(bool, count_include_pad) = true;
};

struct AdaptiveAvgPool1dOptions {
  AdaptiveAvgPool1dOptions(std::int64_t output_size)  // NOLINT: as LibTorch
      : output_size_(output_size) {}
  LG_ARG(std::int64_t, output_size);
};

class MaxPool1dImpl : public Module {
 public:
  explicit MaxPool1dImpl(const MaxPool1dOptions& options) : Module("MaxPool1d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  MaxPool1dOptions options;
};
LEANGRAD_MODULE(MaxPool1d);

class AvgPool1dImpl : public Module {
 public:
  explicit AvgPool1dImpl(const AvgPool1dOptions& options) : Module("AvgPool1d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  AvgPool1dOptions options;
};
LEANGRAD_MODULE(AvgPool1d);

class AdaptiveAvgPool1dImpl : public Module {
 public:
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options)
      : Module("AdaptiveAvgPool1d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // output_size=[5]
  AdaptiveAvgPool1dOptions options;
};
LEANGRAD_MODULE(AdaptiveAvgPool1d);

// The 3-d poolings over (N, C, D, H, W) or (C, D, H, W), as LibTorch's (max_pool3d,
// avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d of autograd/volumetric_functions.h;
// stride defaults to the kernel; one number means all three dims):
//   nn::MaxPool3d(nn::MaxPool3dOptions(2));  nn::AvgPool3d(nn::AvgPool3dOptions({1, 2, 2}))
//   nn::AdaptiveAvgPool3d(1)  // global average: (N, C, 1, 1, 1)
struct MaxPool3dOptions {
  MaxPool3dOptions(std::int64_t k) : MaxPool3dOptions(Size3{k, k, k}) {}  // NOLINT: as LibTorch
  MaxPool3dOptions(Size3 kernel_size)                                     // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  MaxPool3dOptions& stride(std::int64_t s) { return stride(Size3{s, s, s}); }
  MaxPool3dOptions& padding(std::int64_t p) { return padding(Size3{p, p, p}); }
  MaxPool3dOptions& dilation(std::int64_t d) { return dilation(Size3{d, d, d}); }
  LG_ARG(Size3, kernel_size);
  LG_ARG(Size3, stride);
  LG_ARG(Size3, padding) = {0, 0, 0};
  LG_ARG(Size3, dilation) = {1, 1, 1};
  LG_ARG(bool, ceil_mode) = false;
};

struct AvgPool3dOptions {
  AvgPool3dOptions(std::int64_t k) : AvgPool3dOptions(Size3{k, k, k}) {}  // NOLINT: as LibTorch
  AvgPool3dOptions(Size3 kernel_size)                                     // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  AvgPool3dOptions& stride(std::int64_t s) { return stride(Size3{s, s, s}); }
  AvgPool3dOptions& padding(std::int64_t p) { return padding(Size3{p, p, p}); }
  LG_ARG(Size3, kernel_size);
  LG_ARG(Size3, stride);
  LG_ARG(Size3, padding) = {0, 0, 0};
  LG_ARG(bool, ceil_mode) = false;
  LG_ARG(bool, count_include_pad) = true;
  LG_ARG(std::optional<std::int64_t>, divisor_override) = std::nullopt;
};

struct AdaptiveAvgPool3dOptions {
  AdaptiveAvgPool3dOptions(std::int64_t size)  // NOLINT: as LibTorch
      : output_size_{size, size, size} {}
  AdaptiveAvgPool3dOptions(Size3 size) : output_size_(size) {}  // NOLINT
  LG_ARG(Size3, output_size);
};
using AdaptiveMaxPool3dOptions = AdaptiveAvgPool3dOptions;

class MaxPool3dImpl : public Module {
 public:
  explicit MaxPool3dImpl(const MaxPool3dOptions& options) : Module("MaxPool3d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  MaxPool3dOptions options;
};
LEANGRAD_MODULE(MaxPool3d);

class AvgPool3dImpl : public Module {
 public:
  explicit AvgPool3dImpl(const AvgPool3dOptions& options) : Module("AvgPool3d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  AvgPool3dOptions options;
};
LEANGRAD_MODULE(AvgPool3d);

class AdaptiveAvgPool3dImpl : public Module {
 public:
  explicit AdaptiveAvgPool3dImpl(const AdaptiveAvgPool3dOptions& options)
      : Module("AdaptiveAvgPool3d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // output_size=[1, 1, 1]
  AdaptiveAvgPool3dOptions options;
};
LEANGRAD_MODULE(AdaptiveAvgPool3d);

class AdaptiveMaxPool3dImpl : public Module {
 public:
  explicit AdaptiveMaxPool3dImpl(const AdaptiveMaxPool3dOptions& options)
      : Module("AdaptiveMaxPool3d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  AdaptiveMaxPool3dOptions options;
};
LEANGRAD_MODULE(AdaptiveMaxPool3d);

// (N, C r^2, H, W) -> (N, C, H r, W r)
class PixelShuffleImpl : public Module {
 public:
  explicit PixelShuffleImpl(std::int64_t upscale_factor)
      : Module("PixelShuffle"), upscale_factor(upscale_factor) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::int64_t upscale_factor;
};
LEANGRAD_MODULE(PixelShuffle);

// (N, C, H r, W r) -> (N, C r^2, H, W)
class PixelUnshuffleImpl : public Module {
 public:
  explicit PixelUnshuffleImpl(std::int64_t downscale_factor)
      : Module("PixelUnshuffle"), downscale_factor(downscale_factor) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::int64_t downscale_factor;
};
LEANGRAD_MODULE(PixelUnshuffle);

// Merges dims start_dim..end_dim: (N, C, H, W) -> (N, C H W) by default.
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(std::int64_t start_dim = 1, std::int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::int64_t start_dim;
  std::int64_t end_dim;
};
LEANGRAD_MODULE(Flatten);

// LibTorch's options: nn::Unflatten(nn::UnflattenOptions(1, {16, 7, 7})).
class UnflattenOptions {
 public:
  UnflattenOptions(std::int64_t dim, Shape sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  LG_ARG(std::int64_t, dim);
  LG_ARG(Shape, sizes);
};

// Splits dim into sizes (leangrad::unflatten): (N, 784) -> (N, 1, 28, 28) with
// UnflattenOptions(1, {1, 28, 28}).
class UnflattenImpl : public Module {
 public:
  UnflattenImpl(std::int64_t dim, Shape sizes)
      : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(const UnflattenOptions& options) : Module("Unflatten"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  UnflattenOptions options;
};
LEANGRAD_MODULE(Unflatten);

}  // namespace leangrad::nn
