// nn::Unfold and nn::Fold, as LibTorch's: every kernel-sized block of an image as a column, and
// the columns summed back into an image (autograd/fold_functions.h).
//   nn::Unfold unfold(nn::UnfoldOptions(3).padding(1));          // (N, C, H, W) -> (N, 9 C, H W)
//   nn::Fold fold(nn::FoldOptions({H, W}, 3).padding(1));        // and back, overlaps summed
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/autograd/fold_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// Setters take one value for both dims, or (height, width).
class UnfoldOptions {
 public:
  /* implicit */ UnfoldOptions(std::int64_t kernel_size)
      : kernel_size_({kernel_size, kernel_size}) {}
  /* implicit */ UnfoldOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}
  UnfoldOptions& dilation(std::int64_t d) { return dilation(Size2{d, d}); }
  UnfoldOptions& padding(std::int64_t p) { return padding(Size2{p, p}); }
  UnfoldOptions& stride(std::int64_t s) { return stride(Size2{s, s}); }

  LG_ARG(Size2, kernel_size);
  LG_ARG(Size2, dilation) = {1, 1};
  LG_ARG(Size2, padding) = {0, 0};
  LG_ARG(Size2, stride) = {1, 1};
};

class FoldOptions {
 public:
  FoldOptions(Size2 output_size, std::int64_t kernel_size)
      : output_size_(output_size), kernel_size_({kernel_size, kernel_size}) {}
  FoldOptions(Size2 output_size, Size2 kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  FoldOptions& dilation(std::int64_t d) { return dilation(Size2{d, d}); }
  FoldOptions& padding(std::int64_t p) { return padding(Size2{p, p}); }
  FoldOptions& stride(std::int64_t s) { return stride(Size2{s, s}); }

  LG_ARG(Size2, output_size);
  LG_ARG(Size2, kernel_size);
  LG_ARG(Size2, dilation) = {1, 1};
  LG_ARG(Size2, padding) = {0, 0};
  LG_ARG(Size2, stride) = {1, 1};
};

class UnfoldImpl : public Module {
 public:
  explicit UnfoldImpl(const UnfoldOptions& options);
  // (N, C, H, W) or (C, H, W) -> (N, C kH kW, L) or (C kH kW, L).
  Tensor forward(const Tensor& input) override;
  // "kernel_size=(3, 3), dilation=(1, 1), padding=(1, 1), stride=(1, 1)".
  std::string extra_repr() const override;
  UnfoldOptions options;
};
LEANGRAD_MODULE(Unfold);

class FoldImpl : public Module {
 public:
  explicit FoldImpl(const FoldOptions& options);
  // (N, C kH kW, L) or (C kH kW, L) -> (N, C, output_size) or (C, output_size).
  Tensor forward(const Tensor& input) override;
  // "output_size=(4, 5), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1)".
  std::string extra_repr() const override;
  FoldOptions options;
};
LEANGRAD_MODULE(Fold);

}  // namespace leangrad::nn
