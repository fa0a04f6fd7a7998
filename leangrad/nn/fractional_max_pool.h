// nn::FractionalMaxPool2d and nn::FractionalMaxPool3d, as LibTorch's: fractional max pooling
// (autograd/fractional_max_pool.h) to an output_size or by an output_ratio, exactly one set.
// Without _random_samples each forward draws new windows; with them (LibTorch's option of that
// name, (N, C, 2) or (N, C, 3) in [0, 1)) every forward uses the same ones.
//   nn::FractionalMaxPool2d pool(nn::FractionalMaxPool2dOptions(3).output_size(13));
//   nn::FractionalMaxPool2d half(nn::FractionalMaxPool2dOptions(2).output_ratio(0.5));
//   auto [y, indices] = pool->forward_with_indices(x);
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// kernel_size, output_size and output_ratio of a fractional max pool, one value per spatial dim
// (N = 2 or 3); a single value sets every dim, as LibTorch's ExpandingArray.
template <std::size_t N>
class FractionalMaxPoolOptions {
 public:
  using Sizes = std::array<std::int64_t, N>;
  using Ratios = std::array<double, N>;
  /* implicit */ FractionalMaxPoolOptions(std::int64_t kernel_size)
      : kernel_size_(detail::every_dim<Sizes>(kernel_size)) {}
  /* implicit */ FractionalMaxPoolOptions(Sizes kernel_size) : kernel_size_(kernel_size) {}
  FractionalMaxPoolOptions& output_size(std::int64_t size) {
    return output_size(detail::every_dim<Sizes>(size));
  }
  FractionalMaxPoolOptions& output_ratio(double ratio) {
    return output_ratio(detail::every_dim<Ratios>(ratio));
  }
  LG_ARG(Sizes, kernel_size);
  LG_ARG(std::optional<Sizes>, output_size) = std::nullopt;
  LG_ARG(std::optional<Ratios>, output_ratio) = std::nullopt;
  LG_ARG(Tensor, _random_samples);
};
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

class FractionalMaxPool2dImpl : public Module {
 public:
  // Checks the options as LibTorch's reset(): exactly one of output_size and output_ratio, each
  // ratio in (0, 1).
  explicit FractionalMaxPool2dImpl(const FractionalMaxPool2dOptions& options);
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  // "kernel_size=(3, 3), output_size=(13, 13)" or "..., output_ratio=(0.5, 0.5)"
  std::string extra_repr() const override;
  FractionalMaxPool2dOptions options;
};
LEANGRAD_MODULE(FractionalMaxPool2d);

class FractionalMaxPool3dImpl : public Module {
 public:
  explicit FractionalMaxPool3dImpl(const FractionalMaxPool3dOptions& options);
  Tensor forward(const Tensor& input) override;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  FractionalMaxPool3dOptions options;
};
LEANGRAD_MODULE(FractionalMaxPool3d);

}  // namespace leangrad::nn
