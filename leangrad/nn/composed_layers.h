// Modules over the functions of autograd/composed_layers.h, as LibTorch's: nn::LPPool1d,
// nn::LPPool2d, nn::LocalResponseNorm, nn::Bilinear (parameters weight (out, in1, in2) and bias
// (out), initialised as PyTorch's), nn::ChannelShuffle, nn::RReLU (random slopes in training,
// their mean in eval), nn::MaxUnpool1d/2d/3d (forward(input, indices, output_size)),
// nn::CrossMapLRN2d (LibTorch's legacy LRN) and nn::Softmax2d (softmax over the channels of (N, C,
// H, W) or (C, H, W)).
//   nn::LPPool2d pool(nn::LPPool2dOptions(2.0, 3).stride(2));
//   nn::Bilinear bilinear(nn::BilinearOptions(16, 8, 4));  Tensor y = bilinear(a, b);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include <leangrad/autograd/composed_layers.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// norm_type, kernel_size, stride (default: the kernel) and ceil_mode of an LP pool.
class LPPool1dOptions {
 public:
  LPPool1dOptions(double norm_type, std::int64_t kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  LG_ARG(double, norm_type);
  LG_ARG(std::int64_t, kernel_size);
  LG_ARG(std::int64_t, stride);
  LG_ARG(bool, ceil_mode) = false;
};

class LPPool2dOptions {
 public:
  LPPool2dOptions(double norm_type, std::int64_t kernel_size)
      : LPPool2dOptions(norm_type, Size2{kernel_size, kernel_size}) {}
  LPPool2dOptions(double norm_type, Size2 kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  LPPool2dOptions& stride(std::int64_t s) { return stride(Size2{s, s}); }
  LG_ARG(double, norm_type);
  LG_ARG(Size2, kernel_size);
  LG_ARG(Size2, stride);
  LG_ARG(bool, ceil_mode) = false;
};

class LPPool1dImpl : public Module {
 public:
  explicit LPPool1dImpl(const LPPool1dOptions& options) : Module("LPPool1d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  // "norm_type=2, kernel_size=3, stride=2, ceil_mode=false"
  std::string extra_repr() const override;
  LPPool1dOptions options;
};
LEANGRAD_MODULE(LPPool1d);

class LPPool2dImpl : public Module {
 public:
  explicit LPPool2dImpl(const LPPool2dOptions& options) : Module("LPPool2d"), options(options) {}
  Tensor forward(const Tensor& input) override;
  // "norm_type=2, kernel_size=(3, 3), stride=(2, 2), ceil_mode=false"
  std::string extra_repr() const override;
  LPPool2dOptions options;
};
LEANGRAD_MODULE(LPPool2d);

class LocalResponseNormOptions {
 public:
  /* implicit */ LocalResponseNormOptions(std::int64_t size) : size_(size) {}
  LG_ARG(std::int64_t, size);
  LG_ARG(double, alpha) = 1e-4;
  LG_ARG(double, beta) = 0.75;
  LG_ARG(double, k) = 1.0;
};

class LocalResponseNormImpl : public Module {
 public:
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // "5, alpha=0.0001, beta=0.75, k=1"
  LocalResponseNormOptions options;
};
LEANGRAD_MODULE(LocalResponseNorm);

class BilinearOptions {
 public:
  BilinearOptions(std::int64_t in1_features, std::int64_t in2_features, std::int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  LG_ARG(std::int64_t, in1_features);
  LG_ARG(std::int64_t, in2_features);
  LG_ARG(std::int64_t, out_features);
  LG_ARG(bool, bias) = true;
};

class BilinearImpl : public Module {
 public:
  explicit BilinearImpl(const BilinearOptions& options);
  BilinearImpl(std::int64_t in1, std::int64_t in2, std::int64_t out)
      : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  using Module::forward;
  // (*, in1), (*, in2) -> (*, out), as LibTorch's.
  Tensor forward(const Tensor& input1, const Tensor& input2);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  // PyTorch's reset_parameters: weight and bias U(-1/sqrt(in1), 1/sqrt(in1)).
  void reset_parameters();
  // "in1_features=16, in2_features=8, out_features=4, bias=true"
  std::string extra_repr() const override;
  BilinearOptions options;
  Tensor weight;
  Tensor bias;  // undefined with bias(false)
};
LEANGRAD_MODULE(Bilinear);

class ChannelShuffleOptions {
 public:
  /* implicit */ ChannelShuffleOptions(std::int64_t groups) : groups_(groups) {}
  LG_ARG(std::int64_t, groups);
};

class ChannelShuffleImpl : public Module {
 public:
  explicit ChannelShuffleImpl(const ChannelShuffleOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // "groups=3"
  ChannelShuffleOptions options;
};
LEANGRAD_MODULE(ChannelShuffle);

class RReLUOptions {
 public:
  LG_ARG(double, lower) = 1.0 / 8.0;
  LG_ARG(double, upper) = 1.0 / 3.0;
};

class RReLUImpl : public Module {
 public:
  explicit RReLUImpl(const RReLUOptions& options = {});
  // rrelu(input, lower, upper, is_training()).
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // "lower=0.125, upper=0.333333"
  RReLUOptions options;
};
LEANGRAD_MODULE(RReLU);

// kernel_size, stride (default: the kernel) and padding of a max unpool, one value per spatial
// dim (Size is std::int64_t, Size2 or Size3); setters take one value for every dim too.
template <typename Size>
class MaxUnpoolOptions {
 public:
  /* implicit */ MaxUnpoolOptions(std::int64_t kernel_size)
      : kernel_size_(detail::every_dim<Size>(kernel_size)),
        stride_(detail::every_dim<Size>(kernel_size)) {}
  /* implicit */ MaxUnpoolOptions(Size kernel_size) requires(!std::is_same_v<Size, std::int64_t>)
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  MaxUnpoolOptions& stride(std::int64_t s) requires(!std::is_same_v<Size, std::int64_t>) {
    return stride(detail::every_dim<Size>(s));
  }
  MaxUnpoolOptions& padding(std::int64_t p) requires(!std::is_same_v<Size, std::int64_t>) {
    return padding(detail::every_dim<Size>(p));
  }
  LG_ARG(Size, kernel_size);
  LG_ARG(Size, stride);
  LG_ARG(Size, padding) = detail::every_dim<Size>(0);
};
using MaxUnpool1dOptions = MaxUnpoolOptions<std::int64_t>;
using MaxUnpool2dOptions = MaxUnpoolOptions<Size2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<Size3>;

class MaxUnpool1dImpl : public Module {
 public:
  explicit MaxUnpool1dImpl(const MaxUnpool1dOptions& options)
      : Module("MaxUnpool1d"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& indices,
                 std::optional<std::int64_t> output_size = std::nullopt);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, std::optional<std::int64_t>);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(std::optional<std::int64_t>())})
  std::string extra_repr() const override;  // "kernel_size=2, stride=2, padding=0"
  MaxUnpool1dOptions options;
};
LEANGRAD_MODULE(MaxUnpool1d);

class MaxUnpool2dImpl : public Module {
 public:
  explicit MaxUnpool2dImpl(const MaxUnpool2dOptions& options)
      : Module("MaxUnpool2d"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& indices,
                 std::optional<Size2> output_size = std::nullopt);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, std::optional<Size2>);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(std::optional<Size2>())})
  std::string extra_repr() const override;  // "kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)"
  MaxUnpool2dOptions options;
};
LEANGRAD_MODULE(MaxUnpool2d);

class MaxUnpool3dImpl : public Module {
 public:
  explicit MaxUnpool3dImpl(const MaxUnpool3dOptions& options)
      : Module("MaxUnpool3d"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& indices,
                 std::optional<Size3> output_size = std::nullopt);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, std::optional<Size3>);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(std::optional<Size3>())})
  std::string extra_repr() const override;
  MaxUnpool3dOptions options;
};
LEANGRAD_MODULE(MaxUnpool3d);

// size, alpha, beta and k of LibTorch's CrossMapLRN2d (k a double here, an int64 there).
class CrossMapLRN2dOptions {
 public:
  /* implicit */ CrossMapLRN2dOptions(std::int64_t size) : size_(size) {}
  LG_ARG(std::int64_t, size);
  LG_ARG(double, alpha) = 1e-4;
  LG_ARG(double, beta) = 0.75;
  LG_ARG(double, k) = 1.0;
};

// cross_map_lrn2d over (N, C, H, W), LibTorch's legacy layer (its window is not
// LocalResponseNorm's: autograd/composed_layers.h).
class CrossMapLRN2dImpl : public Module {
 public:
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // "3, alpha=0.0001, beta=0.75, k=1"
  CrossMapLRN2dOptions options;
};
LEANGRAD_MODULE(CrossMapLRN2d);

class Softmax2dImpl : public Module {
 public:
  Softmax2dImpl() : Module("Softmax2d") {}
  // softmax over dim -3 of (N, C, H, W) or (C, H, W).
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Softmax2d);

}  // namespace leangrad::nn
