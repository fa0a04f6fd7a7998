// The table of op cases that drives the device tests: each row applies one op
// through the public API to seeded random inputs; test_device_ops.cpp runs every row on the CPU
// (the reference) and on CUDA and compares. Adding an op means adding a row in op_table.cpp:
//   {"add_broadcast_3d", [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
//    {input({4, 1, 6}), input({5, 1})}, kTolF32}
// or, for an elementwise op, one entry in a grid there that crosses it with every dtype.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {

using Inputs = std::vector<Tensor>;
using Outputs = std::vector<Tensor>;

// How an input is laid out in memory. The data is made contiguous on the CPU, copied to each
// device as is, and only then turned into the view, so the CUDA kernels see the same strides
// as the CPU ones (a copy to another device is always contiguous).
enum class Layout {
  Contiguous,
  Transposed,  // the last two dims swapped: a transpose of a contiguous tensor
  StepSliced,  // every other element along the last dim: slice(step = 2)
  Offset,      // starts one element into its storage: misaligned for vector loads
  Expanded,    // dim 0 broadcast from size 1 (stride 0)
};

struct InputSpec {
  Shape shape;  // the shape the op sees (after the layout's view)
  DType dtype = kFloat32;
  // Values are uniform in [low, high) (integer dtypes truncate toward zero; Bool is
  // value < (low + high) / 2). Keep ranges away from domain edges: log and sqrt positive.
  double low = -1.0;
  double high = 1.0;
  Layout layout = Layout::Contiguous;
};

InputSpec input(Shape shape, DType dtype = kFloat32, double low = -1.0, double high = 1.0,
                Layout layout = Layout::Contiguous);

// Tolerances are testing/tensor_testing.h's {rtol, atol}; both 0 means identical results.
// Outputs agree when |cuda - cpu| <= atol + rtol * |cpu| element by element.
inline constexpr Tolerance kTolExact{0.0, 0.0};
inline constexpr Tolerance kTolF64{1e-12, 1e-14};
inline constexpr Tolerance kTolF32{1e-5, 1e-6};
// One or two ulps of the 16-bit formats: the float math before the rounding may differ by an
// ulp of float between libm and CUDA's math library, which can flip one rounding.
inline constexpr Tolerance kTolF16{2e-3, 1e-5};
inline constexpr Tolerance kTolBF16{1.6e-2, 1e-4};
// Reductions sum in a different order on each device: for thousands of terms in [-1, 1] the
// difference is ~1e-6 absolute, which a sum near 0 cannot hide in a relative tolerance.
inline constexpr Tolerance kTolF32Sum{1e-5, 1e-4};
// The same sums in float64: kTolF32Sum's atol scaled by the ratio of the unit roundoffs,
// 2^-53 / 2^-24 = 2^-29 (the same count of roundings, each 2^29 times smaller).
inline constexpr Tolerance kTolF64Sum{1e-12, 1e-4 / (1 << 29)};
// K <= 96 with inputs in [-1, 1]: order-of-summation differences stay near 1e-6; TF32 (which
// must be off by default) would miss this by an order of magnitude.
inline constexpr Tolerance kTolF32Gemm{1e-4, 1e-4};

// The floating dtypes, which the tables cross elementwise ops with.
inline constexpr DType kFloatingDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16};
// The tolerance of an elementwise result computed in `dtype`: kTolF32, kTolF64, kTolF16 or
// kTolBF16; kTolExact for the integer dtypes and bool.
Tolerance elementwise_tolerance(DType dtype);
// How row names spell a dtype: "f32", "f64", "f16", "bf16", "i64", "i32", "u8", "bool".
const char* dtype_suffix(DType dtype);

struct OpCase {
  std::string name;  // unique; letters, digits and '_' (a GoogleTest parameter name)
  std::function<Outputs(const Inputs&)> fn;
  std::vector<InputSpec> inputs;
  Tolerance tolerance;
};

// Outputs {y, dy/dx_i for each input that is floating}: x leaves are re-made so that they
// require grad on whatever device the row runs on, and y is back-propagated with a fixed
// upstream gradient (magnitudes in [0.5, 1.5), signs varying, never constant over a row) so
// every output element matters.
// Defined in op_table_layers.cpp.
Outputs with_grads(const Inputs& x, const std::function<Tensor(const Inputs&)>& fn);
// The row function that returns with_grads(x, fn): the output and the input gradients.
std::function<Outputs(const Inputs&)> grads_of(std::function<Tensor(const Inputs&)> fn);

// Every row; each name appears once. The rows of the foundation ops are in op_table.cpp; each
// family of neural-network ops keeps its rows in its own file (op_table_<family>.cpp).
const std::vector<OpCase>& device_op_cases();
std::vector<OpCase> tanhexp_group_norm_op_cases();  // op_table_tanhexp_group_norm.cpp: TanhExp,
                                                    // GroupNorm, gelu, silu, mish
std::vector<OpCase> conv_op_cases();                // op_table_conv.cpp: conv2d
std::vector<OpCase> layer_op_cases();  // op_table_layers.cpp: pooling, dropout, losses, ...
// op_table_nn_layers.cpp: LayerNorm, BatchNorm, Embedding, ConvTranspose2d, interpolate
std::vector<OpCase> nn_layer_op_cases();

// The contiguous CPU tensor behind input `spec` (the data before the layout's view); `seed`
// makes it reproducible.
Tensor make_input_storage(const InputSpec& spec, std::uint64_t seed);
// The view of `storage` (on any device) that the op sees, of shape spec.shape.
Tensor apply_layout(const Tensor& storage, const InputSpec& spec);

}  // namespace leangrad::test
