// The padding modules, as LibTorch's: ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, ZeroPad2d and
// ConstantPad1d/2d/3d, each a thin wrapper over leangrad::pad (autograd/indexing_functions.h).
// The padding is one amount for every side, or (left, right) for 1d, (left, right, top, bottom)
// for 2d and (left, right, top, bottom, front, back) for 3d, as PyTorch's:
//   nn::ReflectionPad2d pad(1);  nn::ReplicationPad2d(nn::ReplicationPad2dOptions({1, 1, 2, 0}));
//   nn::ConstantPad1d(nn::ConstantPad1dOptions(2, 3.5));
// Reflection and replication take a batched or unbatched input of D spatial dims ((N, C, H, W)
// or (C, H, W) for 2d), as PyTorch's; the constant pads any input with at least D dims.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// The 2 D amounts of D padded dims, last dim first.
template <std::size_t D>
using PadAmounts = std::array<std::int64_t, 2 * D>;

// The padding of D dims.
template <std::size_t D>
class PadOptions {
 public:
  PadOptions(std::int64_t padding) { padding_.fill(padding); }     // NOLINT: implicit, as LibTorch
  PadOptions(const PadAmounts<D>& padding) : padding_(padding) {}  // NOLINT
  LG_ARG(PadAmounts<D>, padding);
};
using ReflectionPad1dOptions = PadOptions<1>;
using ReflectionPad2dOptions = PadOptions<2>;
using ReflectionPad3dOptions = PadOptions<3>;
using ReplicationPad1dOptions = PadOptions<1>;
using ReplicationPad2dOptions = PadOptions<2>;
using ReplicationPad3dOptions = PadOptions<3>;
using ZeroPad2dOptions = PadOptions<2>;

// The padding of D dims and the value of the new elements.
template <std::size_t D>
class ConstantPadOptions {
 public:
  ConstantPadOptions(std::int64_t padding, double value) : value_(value) { padding_.fill(padding); }
  ConstantPadOptions(const PadAmounts<D>& padding, double value)
      : padding_(padding), value_(value) {}
  LG_ARG(PadAmounts<D>, padding);
  LG_ARG(double, value);
};
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;

// What every padding module is: a name, a mode, D, the amounts and the value.
class PadImplBase : public Module {
 public:
  // pad(input, padding, mode, value); an input of the wrong rank throws ShapeError naming it.
  Tensor forward(const Tensor& input) override;
  // "(1, 1, 2, 0)", or "padding=(2, 2), value=3.5" for the constant pads, as PyTorch prints them.
  std::string extra_repr() const override;
  PadMode mode() const { return mode_; }
  const std::vector<std::int64_t>& padding() const { return padding_; }
  double value() const { return value_; }

 protected:
  PadImplBase(const char* name, PadMode mode, std::size_t dims, std::vector<std::int64_t> padding,
              double value, bool print_value);

 private:
  PadMode mode_;
  std::size_t dims_;
  std::vector<std::int64_t> padding_;
  double value_;
  bool print_value_;
};

#define LEANGRAD_PAD_MODULE(Name, Mode, D)                                                       \
  class Name##Impl : public PadImplBase {                                                        \
   public:                                                                                       \
    explicit Name##Impl(const PadOptions<D>& options)                                            \
        : PadImplBase(#Name, Mode, D, {options.padding().begin(), options.padding().end()}, 0.0, \
                      false) {}                                                                  \
  };                                                                                             \
  LEANGRAD_MODULE(Name)

LEANGRAD_PAD_MODULE(ReflectionPad1d, kReflect, 1);
LEANGRAD_PAD_MODULE(ReflectionPad2d, kReflect, 2);
LEANGRAD_PAD_MODULE(ReflectionPad3d, kReflect, 3);
LEANGRAD_PAD_MODULE(ReplicationPad1d, kReplicate, 1);
LEANGRAD_PAD_MODULE(ReplicationPad2d, kReplicate, 2);
LEANGRAD_PAD_MODULE(ReplicationPad3d, kReplicate, 3);
LEANGRAD_PAD_MODULE(ZeroPad2d, kConstant, 2);
#undef LEANGRAD_PAD_MODULE

#define LEANGRAD_CONSTANT_PAD_MODULE(Name, D)                                                    \
  class Name##Impl : public PadImplBase {                                                        \
   public:                                                                                       \
    explicit Name##Impl(const ConstantPadOptions<D>& options)                                    \
        : PadImplBase(#Name, kConstant, D, {options.padding().begin(), options.padding().end()}, \
                      options.value(), true) {}                                                  \
  };                                                                                             \
  LEANGRAD_MODULE(Name)

LEANGRAD_CONSTANT_PAD_MODULE(ConstantPad1d, 1);
LEANGRAD_CONSTANT_PAD_MODULE(ConstantPad2d, 2);
LEANGRAD_CONSTANT_PAD_MODULE(ConstantPad3d, 3);
#undef LEANGRAD_CONSTANT_PAD_MODULE

}  // namespace leangrad::nn
