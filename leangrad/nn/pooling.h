// Shape-changing modules without parameters: MaxPool2d, AvgPool2d, PixelShuffle, PixelUnshuffle
// and Flatten, each a thin wrapper over the function of autograd/nn_functions.h.
//   nn::MaxPool2d pool(2);  nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(1).padding(1));
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// kernel, stride (default: the kernel) and padding of a 2-D pooling; one number means both dims.
template <typename Derived>
struct Pool2dOptionsBase {
  explicit Pool2dOptionsBase(std::int64_t kernel) : Pool2dOptionsBase(Size2{kernel, kernel}) {}
  explicit Pool2dOptionsBase(Size2 kernel) : kernel_size_(kernel), stride_(kernel) {}
  Derived& stride(std::int64_t s) { return stride(Size2{s, s}); }
  Derived& stride(Size2 s) {
    stride_ = s;
    return static_cast<Derived&>(*this);
  }
  Derived& padding(std::int64_t p) { return padding(Size2{p, p}); }
  Derived& padding(Size2 p) {
    padding_ = p;
    return static_cast<Derived&>(*this);
  }
  Size2 kernel_size() const { return kernel_size_; }
  Size2 stride() const { return stride_; }
  Size2 padding() const { return padding_; }

 private:
  Size2 kernel_size_;
  Size2 stride_;
  Size2 padding_{0, 0};
};

struct MaxPool2dOptions : Pool2dOptionsBase<MaxPool2dOptions> {
  using Pool2dOptionsBase::Pool2dOptionsBase;
};
struct AvgPool2dOptions : Pool2dOptionsBase<AvgPool2dOptions> {
  using Pool2dOptionsBase::Pool2dOptionsBase;
};

// (N, C, H, W) -> (N, C, OH, OW); padding counts as -inf.
class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(std::int64_t kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Module("MaxPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  MaxPool2dOptions options;
};
LEANGRAD_MODULE(MaxPool2d);

// (N, C, H, W) -> (N, C, OH, OW); padding counts as 0 (count_include_pad = true).
class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(std::int64_t kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Module("AvgPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};
LEANGRAD_MODULE(AvgPool2d);

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

}  // namespace leangrad::nn
