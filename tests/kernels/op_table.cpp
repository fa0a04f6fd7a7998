// The rows of the device op table (see op_table.h): every elementwise family, casts, fills and
// copies, broadcasting and strided layouts, cat/stack, reductions, matmul and the random fills,
// each through the public API. Sections follow kernels/ops.h. Shapes are odd on purpose (33 x 65,
// 1001): vector loads leave tails, blocks are partly filled.
#include "kernels/op_table.h"

#include <utility>

#include "autograd/functions.h"
#include "core/creation.h"
#include "core/error.h"
#include "core/generator.h"
#include "kernels/ops.h"

namespace leangrad::test {
namespace {

constexpr Layout kTransposed = Layout::Transposed;
constexpr Layout kStepSliced = Layout::StepSliced;
constexpr Layout kOffset = Layout::Offset;
constexpr Layout kExpanded = Layout::Expanded;

// Options for a tensor created inside a row, on the device the row runs on.
TensorOptions on_device_of(const Tensor& t, DType dtype) {
  return TensorOptions(dtype).device(t.device());
}

std::vector<OpCase> make_cases() {
  std::vector<OpCase> c;
  const Shape kMatrix = {33, 65};  // 2145 elements: not a multiple of the vector width

  // ---- Binary, tensor op tensor --------------------------------------------------------------
  c.push_back({"add_f32",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input(kMatrix), input(kMatrix)},
               kTolF32});
  c.push_back({"sub_f32",
               [](const Inputs& x) { return Outputs{x[0] - x[1]}; },
               {input(kMatrix), input(kMatrix)},
               kTolF32});
  c.push_back({"mul_f32",
               [](const Inputs& x) { return Outputs{x[0] * x[1]}; },
               {input(kMatrix), input(kMatrix)},
               kTolF32});
  c.push_back({"div_f32",
               [](const Inputs& x) { return Outputs{x[0] / x[1]}; },
               {input(kMatrix), input(kMatrix, kFloat32, 0.5, 2.0)},
               kTolF32});
  c.push_back({"pow_f32",
               [](const Inputs& x) { return Outputs{pow(x[0], x[1])}; },
               {input(kMatrix, kFloat32, 0.5, 2.0), input(kMatrix, kFloat32, -2.0, 2.0)},
               kTolF32});
  c.push_back({"maximum_f32",
               [](const Inputs& x) { return Outputs{maximum(x[0], x[1])}; },
               {input(kMatrix), input(kMatrix)},
               kTolExact});
  c.push_back({"minimum_f32",
               [](const Inputs& x) { return Outputs{minimum(x[0], x[1])}; },
               {input(kMatrix), input(kMatrix)},
               kTolExact});
  c.push_back({"add_f64",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input(kMatrix, kFloat64), input(kMatrix, kFloat64)},
               kTolF64});
  c.push_back({"div_f64",
               [](const Inputs& x) { return Outputs{x[0] / x[1]}; },
               {input(kMatrix, kFloat64), input(kMatrix, kFloat64, 0.5, 2.0)},
               kTolF64});
  c.push_back({"pow_f64",
               [](const Inputs& x) { return Outputs{pow(x[0], x[1])}; },
               {input(kMatrix, kFloat64, 0.5, 2.0), input(kMatrix, kFloat64, -2.0, 2.0)},
               kTolF64});
  c.push_back({"add_f16",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input(kMatrix, kFloat16), input(kMatrix, kFloat16)},
               kTolF16});
  c.push_back({"mul_f16",
               [](const Inputs& x) { return Outputs{x[0] * x[1]}; },
               {input(kMatrix, kFloat16), input(kMatrix, kFloat16)},
               kTolF16});
  c.push_back({"div_f16",
               [](const Inputs& x) { return Outputs{x[0] / x[1]}; },
               {input(kMatrix, kFloat16), input(kMatrix, kFloat16, 0.5, 2.0)},
               kTolF16});
  c.push_back({"pow_f16",
               [](const Inputs& x) { return Outputs{pow(x[0], x[1])}; },
               {input(kMatrix, kFloat16, 0.5, 2.0), input(kMatrix, kFloat16, -2.0, 2.0)},
               kTolF16});
  c.push_back({"add_bf16",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input(kMatrix, kBFloat16), input(kMatrix, kBFloat16)},
               kTolBF16});
  c.push_back({"sub_bf16",
               [](const Inputs& x) { return Outputs{x[0] - x[1]}; },
               {input(kMatrix, kBFloat16), input(kMatrix, kBFloat16)},
               kTolBF16});
  c.push_back({"maximum_bf16",
               [](const Inputs& x) { return Outputs{maximum(x[0], x[1])}; },
               {input(kMatrix, kBFloat16), input(kMatrix, kBFloat16)},
               kTolExact});
  c.push_back({"add_i32",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input(kMatrix, kInt32, -1000, 1000), input(kMatrix, kInt32, -1000, 1000)},
               kTolExact});
  c.push_back({"sub_i64",
               [](const Inputs& x) { return Outputs{x[0] - x[1]}; },
               {input(kMatrix, kInt64, -1e9, 1e9), input(kMatrix, kInt64, -1e9, 1e9)},
               kTolExact});
  c.push_back({"mul_i64",
               [](const Inputs& x) { return Outputs{x[0] * x[1]}; },
               {input(kMatrix, kInt64, -1e5, 1e5), input(kMatrix, kInt64, -1e5, 1e5)},
               kTolExact});
  c.push_back({"mul_u8_wraps",
               [](const Inputs& x) { return Outputs{x[0] * x[1]}; },
               {input(kMatrix, kUInt8, 0, 255), input(kMatrix, kUInt8, 0, 255)},
               kTolExact});
  c.push_back({"pow_i64",
               [](const Inputs& x) { return Outputs{pow(x[0], x[1])}; },
               {input(kMatrix, kInt64, -4, 5), input(kMatrix, kInt64, 0, 6)},
               kTolExact});
  c.push_back({"maximum_i32",
               [](const Inputs& x) { return Outputs{maximum(x[0], x[1])}; },
               {input(kMatrix, kInt32, -50, 50), input(kMatrix, kInt32, -50, 50)},
               kTolExact});
  c.push_back({"minimum_u8",
               [](const Inputs& x) { return Outputs{minimum(x[0], x[1])}; },
               {input(kMatrix, kUInt8, 0, 255), input(kMatrix, kUInt8, 0, 255)},
               kTolExact});
  // Integer division is true division in float32.
  c.push_back({"div_i32",
               [](const Inputs& x) { return Outputs{x[0] / x[1]}; },
               {input(kMatrix, kInt32, -100, 100), input(kMatrix, kInt32, 1, 10)},
               kTolF32});

  // ---- Binary, tensor op scalar --------------------------------------------------------------
  c.push_back({"add_scalar_f32",
               [](const Inputs& x) { return Outputs{x[0] + 0.5}; },
               {input(kMatrix)},
               kTolF32});
  c.push_back({"rsub_scalar_f32",
               [](const Inputs& x) { return Outputs{2.0 - x[0]}; },
               {input(kMatrix)},
               kTolF32});
  c.push_back({"rdiv_scalar_f32",
               [](const Inputs& x) { return Outputs{1.0 / x[0]}; },
               {input(kMatrix, kFloat32, 0.5, 2.0)},
               kTolF32});
  c.push_back({"pow_scalar_f32",
               [](const Inputs& x) { return Outputs{pow(x[0], 2.5)}; },
               {input(kMatrix, kFloat32, 0.1, 2.0)},
               kTolF32});
  c.push_back({"mul_scalar_f16",
               [](const Inputs& x) { return Outputs{x[0] * 3.0}; },
               {input(kMatrix, kFloat16)},
               kTolF16});
  c.push_back({"sub_scalar_bf16",
               [](const Inputs& x) { return Outputs{x[0] - 0.3}; },
               {input(kMatrix, kBFloat16)},
               kTolBF16});
  c.push_back({"add_scalar_i32",
               [](const Inputs& x) { return Outputs{x[0] + 3.0}; },
               {input(kMatrix, kInt32, -100, 100)},
               kTolExact});
  c.push_back({"mul_scalar_i64_fractional",
               [](const Inputs& x) { return Outputs{x[0] * 0.5}; },
               {input(kMatrix, kInt64, -100, 100)},
               kTolF32});

  // ---- Broadcasting ---------------------------------------------------------------------------
  c.push_back({"add_broadcast_3d",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({4, 1, 6}), input({5, 1})},
               kTolF32});
  c.push_back({"mul_broadcast_outer",
               [](const Inputs& x) { return Outputs{x[0] * x[1]}; },
               {input({31, 1}), input({1, 43})},
               kTolF32});
  c.push_back({"sub_broadcast_0d",
               [](const Inputs& x) { return Outputs{x[0] - x[1]}; },
               {input({}), input({7})},
               kTolF32});
  c.push_back({"add_broadcast_row_f16",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({8, 16}, kFloat16), input({16}, kFloat16)},
               kTolF16});
  c.push_back({"add_0d_0d",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({}), input({})},
               kTolF32});
  c.push_back({"add_empty",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({0, 3}), input({3})},
               kTolExact});

  // ---- Non-contiguous and misaligned inputs ---------------------------------------------------
  c.push_back({"add_transposed",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({48, 40}, kFloat32, -1, 1, kTransposed), input({48, 40})},
               kTolF32});
  c.push_back({"mul_step_sliced",
               [](const Inputs& x) { return Outputs{x[0] * x[1]}; },
               {input({20, 30}, kFloat32, -1, 1, kStepSliced),
                input({20, 30}, kFloat32, -1, 1, kTransposed)},
               kTolF32});
  c.push_back({"add_offset_1d",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({1001}, kFloat32, -1, 1, kOffset), input({1001})},
               kTolF32});
  c.push_back({"add_expanded",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({6, 50}, kFloat32, -1, 1, kExpanded), input({6, 50})},
               kTolF32});
  c.push_back({"add_transposed_4d",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({2, 3, 8, 5}, kFloat32, -1, 1, kTransposed), input({3, 1, 5})},
               kTolF32});
  c.push_back({"exp_step_sliced",
               [](const Inputs& x) { return Outputs{exp(x[0])}; },
               {input({17, 19}, kFloat32, -3, 3, kStepSliced)},
               kTolF32});
  c.push_back({"sub_offset_f16",
               [](const Inputs& x) { return Outputs{x[0] - x[1]}; },
               {input({9, 7}, kFloat16, -1, 1, kOffset), input({7}, kFloat16)},
               kTolF16});

  // ---- Large (grid-stride loops run several rounds) -------------------------------------------
  c.push_back({"add_large_f32",
               [](const Inputs& x) { return Outputs{x[0] + x[1]}; },
               {input({(1 << 22) + 3}), input({(1 << 22) + 3})},
               kTolF32});

  // ---- In place -------------------------------------------------------------------------------
  c.push_back({"add_inplace_f32",
               [](const Inputs& x) {
                 Tensor t = x[0].clone();
                 t.add_(x[1]);
                 return Outputs{t};
               },
               {input(kMatrix), input(kMatrix)},
               kTolF32});
  c.push_back({"add_inplace_broadcast",
               [](const Inputs& x) {
                 Tensor t = x[0].clone();
                 t.add_(x[1]);
                 return Outputs{t};
               },
               {input({4, 5}), input({5})},
               kTolF32});
  c.push_back({"mul_inplace_scalar_f16",
               [](const Inputs& x) {
                 Tensor t = x[0].clone();
                 t.mul_(0.5);
                 return Outputs{t};
               },
               {input(kMatrix, kFloat16)},
               kTolF16});
  c.push_back({"add_inplace_into_view",
               [](const Inputs& x) {
                 Tensor t = x[0].clone();
                 t.transpose(0, 1).add_(x[1]);
                 return Outputs{t};
               },
               {input({6, 9}), input({9, 6})},
               kTolF32});

  // ---- Unary ----------------------------------------------------------------------------------
  const Shape kVector = {1001};
  c.push_back(
      {"neg_f32", [](const Inputs& x) { return Outputs{neg(x[0])}; }, {input(kVector)}, kTolExact});
  c.push_back(
      {"abs_f32", [](const Inputs& x) { return Outputs{abs(x[0])}; }, {input(kVector)}, kTolExact});
  c.push_back({"exp_f32",
               [](const Inputs& x) { return Outputs{exp(x[0])}; },
               {input(kVector, kFloat32, -3, 3)},
               kTolF32});
  c.push_back({"log_f32",
               [](const Inputs& x) { return Outputs{log(x[0])}; },
               {input(kVector, kFloat32, 0.1, 10)},
               kTolF32});
  c.push_back({"sqrt_f32",
               [](const Inputs& x) { return Outputs{sqrt(x[0])}; },
               {input(kVector, kFloat32, 0.01, 10)},
               kTolF32});
  c.push_back({"tanh_f32",
               [](const Inputs& x) { return Outputs{tanh(x[0])}; },
               {input(kVector, kFloat32, -3, 3)},
               kTolF32});
  c.push_back({"sigmoid_f32",
               [](const Inputs& x) { return Outputs{sigmoid(x[0])}; },
               {input(kVector, kFloat32, -8, 8)},
               kTolF32});
  c.push_back({"relu_f32",
               [](const Inputs& x) { return Outputs{relu(x[0])}; },
               {input(kVector)},
               kTolExact});
  c.push_back({"tanh_f32_3d",
               [](const Inputs& x) { return Outputs{x[0].tanh()}; },
               {input({5, 7, 11}, kFloat32, -3, 3)},
               kTolF32});
  c.push_back({"exp_f64",
               [](const Inputs& x) { return Outputs{exp(x[0])}; },
               {input(kVector, kFloat64, -3, 3)},
               kTolF64});
  c.push_back({"log_f64",
               [](const Inputs& x) { return Outputs{log(x[0])}; },
               {input(kVector, kFloat64, 0.1, 10)},
               kTolF64});
  c.push_back({"sigmoid_f64",
               [](const Inputs& x) { return Outputs{sigmoid(x[0])}; },
               {input(kVector, kFloat64, -8, 8)},
               kTolF64});
  c.push_back({"exp_f16",
               [](const Inputs& x) { return Outputs{exp(x[0])}; },
               {input(kVector, kFloat16, -3, 3)},
               kTolF16});
  c.push_back({"log_f16",
               [](const Inputs& x) { return Outputs{log(x[0])}; },
               {input(kVector, kFloat16, 0.1, 10)},
               kTolF16});
  c.push_back({"tanh_f16",
               [](const Inputs& x) { return Outputs{tanh(x[0])}; },
               {input(kVector, kFloat16, -3, 3)},
               kTolF16});
  c.push_back({"sigmoid_f16",
               [](const Inputs& x) { return Outputs{sigmoid(x[0])}; },
               {input(kVector, kFloat16, -8, 8)},
               kTolF16});
  c.push_back({"sqrt_bf16",
               [](const Inputs& x) { return Outputs{sqrt(x[0])}; },
               {input(kVector, kBFloat16, 0.01, 10)},
               kTolBF16});
  c.push_back({"exp_bf16",
               [](const Inputs& x) { return Outputs{exp(x[0])}; },
               {input(kVector, kBFloat16, -3, 3)},
               kTolBF16});
  c.push_back({"relu_bf16",
               [](const Inputs& x) { return Outputs{relu(x[0])}; },
               {input(kVector, kBFloat16)},
               kTolExact});
  c.push_back({"abs_bf16",
               [](const Inputs& x) { return Outputs{abs(x[0])}; },
               {input(kVector, kBFloat16)},
               kTolExact});
  c.push_back({"neg_i64",
               [](const Inputs& x) { return Outputs{neg(x[0])}; },
               {input(kVector, kInt64, -1e6, 1e6)},
               kTolExact});
  c.push_back({"abs_i32",
               [](const Inputs& x) { return Outputs{abs(x[0])}; },
               {input(kVector, kInt32, -1e6, 1e6)},
               kTolExact});
  c.push_back({"relu_i32",
               [](const Inputs& x) { return Outputs{relu(x[0])}; },
               {input(kVector, kInt32, -100, 100)},
               kTolExact});
  c.push_back({"relu_u8",
               [](const Inputs& x) { return Outputs{relu(x[0])}; },
               {input(kVector, kUInt8, 0, 255)},
               kTolExact});
  // Floating ops of integers compute in float32.
  c.push_back({"exp_i64",
               [](const Inputs& x) { return Outputs{exp(x[0])}; },
               {input(kVector, kInt64, -5, 5)},
               kTolF32});
  c.push_back({"sqrt_i32",
               [](const Inputs& x) { return Outputs{sqrt(x[0])}; },
               {input(kVector, kInt32, 0, 100)},
               kTolF32});

  // ---- Compare --------------------------------------------------------------------------------
  c.push_back({"gt_f32",
               [](const Inputs& x) { return Outputs{gt(x[0], x[1])}; },
               {input(kMatrix), input(kMatrix)},
               kTolExact});
  c.push_back({"lt_f32",
               [](const Inputs& x) { return Outputs{lt(x[0], x[1])}; },
               {input(kMatrix), input(kMatrix)},
               kTolExact});
  // Integer-valued floats, so that equal pairs are common.
  c.push_back({"ge_f32_ties",
               [](const Inputs& x) { return Outputs{ge(x[0].to(kFloat32), x[1].to(kFloat32))}; },
               {input(kMatrix, kInt32, 0, 3), input(kMatrix, kInt32, 0, 3)},
               kTolExact});
  c.push_back({"le_f16_ties",
               [](const Inputs& x) { return Outputs{le(x[0].to(kFloat16), x[1].to(kFloat16))}; },
               {input(kMatrix, kInt32, 0, 3), input(kMatrix, kInt32, 0, 3)},
               kTolExact});
  c.push_back({"eq_i32",
               [](const Inputs& x) { return Outputs{eq(x[0], x[1])}; },
               {input(kMatrix, kInt32, 0, 3), input(kMatrix, kInt32, 0, 3)},
               kTolExact});
  c.push_back({"ne_i64",
               [](const Inputs& x) { return Outputs{ne(x[0], x[1])}; },
               {input(kMatrix, kInt64, 0, 3), input(kMatrix, kInt64, 0, 3)},
               kTolExact});
  c.push_back({"eq_bool",
               [](const Inputs& x) { return Outputs{eq(x[0], x[1])}; },
               {input(kMatrix, kBool), input(kMatrix, kBool)},
               kTolExact});
  c.push_back({"gt_broadcast_bf16",
               [](const Inputs& x) { return Outputs{gt(x[0], x[1])}; },
               {input({12, 9}, kBFloat16), input({9}, kBFloat16)},
               kTolExact});
  c.push_back({"gt_scalar_f32",
               [](const Inputs& x) { return Outputs{gt(x[0], 0.25)}; },
               {input(kMatrix)},
               kTolExact});
  c.push_back({"le_scalar_f16",
               [](const Inputs& x) { return Outputs{le(x[0], 0.1)}; },
               {input(kMatrix, kFloat16)},
               kTolExact});
  c.push_back({"eq_scalar_i64",
               [](const Inputs& x) { return Outputs{eq(x[0], 2.0)}; },
               {input(kMatrix, kInt64, 0, 4)},
               kTolExact});
  c.push_back({"ne_scalar_bf16",
               [](const Inputs& x) { return Outputs{ne(x[0], 0.5)}; },
               {input(kMatrix, kBFloat16, 0, 2)},
               kTolExact});
  c.push_back({"lt_scalar_u8",
               [](const Inputs& x) { return Outputs{lt(x[0], 100.0)}; },
               {input(kMatrix, kUInt8, 0, 255)},
               kTolExact});
  c.push_back({"ge_scalar_transposed",
               [](const Inputs& x) { return Outputs{ge(x[0], 0.0)}; },
               {input({30, 20}, kFloat32, -1, 1, kTransposed)},
               kTolExact});

  // ---- Where ----------------------------------------------------------------------------------
  c.push_back({"where_f32",
               [](const Inputs& x) { return Outputs{where(x[0], x[1], x[2])}; },
               {input({4, 5}, kBool), input({4, 5}), input({5})},
               kTolExact});
  c.push_back({"where_f16_broadcast_cond",
               [](const Inputs& x) { return Outputs{where(x[0], x[1], x[2])}; },
               {input({7, 1}, kBool), input({7, 9}, kFloat16), input({7, 9}, kFloat16)},
               kTolExact});
  c.push_back({"where_i64_strided",
               [](const Inputs& x) { return Outputs{where(x[0], x[1], x[2])}; },
               {input({10, 12}, kBool, -1, 1, kExpanded),
                input({10, 12}, kInt64, -100, 100, kTransposed), input({}, kInt64, -100, 100)},
               kTolExact});
  c.push_back({"where_large",
               [](const Inputs& x) { return Outputs{where(x[0], x[1], x[2])}; },
               {input({100003}, kBool), input({100003}), input({100003})},
               kTolExact});

  // ---- Cast (Tensor::to(DType)): one shared conversion function, so results are identical -----
  struct CastRow {
    const char* name;
    DType from, to;
    double low, high;
  };
  const CastRow casts[] = {
      {"cast_f32_to_f16", kFloat32, kFloat16, -70000, 70000},  // overflows to inf at the ends
      {"cast_f16_to_f32", kFloat16, kFloat32, -100, 100},
      {"cast_f32_to_bf16", kFloat32, kBFloat16, -1e5, 1e5},
      {"cast_bf16_to_f32", kBFloat16, kFloat32, -100, 100},
      {"cast_f16_to_bf16", kFloat16, kBFloat16, -100, 100},
      {"cast_f64_to_f16", kFloat64, kFloat16, -1, 1},
      {"cast_f64_to_f32", kFloat64, kFloat32, -1e3, 1e3},
      {"cast_f32_to_f64", kFloat32, kFloat64, -1e3, 1e3},
      {"cast_f32_to_i32", kFloat32, kInt32, -1000, 1000},
      {"cast_f32_to_u8_wraps", kFloat32, kUInt8, -300, 300},
      {"cast_f16_to_i64", kFloat16, kInt64, -1000, 1000},
      {"cast_i64_to_f32", kInt64, kFloat32, -1e9, 1e9},
      {"cast_i64_to_f16", kInt64, kFloat16, -1e5, 1e5},
      {"cast_i32_to_i64", kInt32, kInt64, -1e9, 1e9},
      {"cast_i64_to_i32_wraps", kInt64, kInt32, -1e12, 1e12},
      {"cast_u8_to_i64", kUInt8, kInt64, 0, 255},
      {"cast_i32_to_bool", kInt32, kBool, -2, 3},
      {"cast_f32_to_bool", kFloat32, kBool, -1, 1},
      {"cast_bool_to_f32", kBool, kFloat32, 0, 1},
      {"cast_bool_to_i64", kBool, kInt64, 0, 1},
  };
  for (const CastRow& row : casts) {
    const DType to = row.to;
    c.push_back({row.name,
                 [to](const Inputs& x) { return Outputs{x[0].to(to)}; },
                 {input(kMatrix, row.from, row.low, row.high)},
                 kTolExact});
  }
  c.push_back({"cast_transposed_f32_to_f16",
               [](const Inputs& x) { return Outputs{x[0].to(kFloat16)}; },
               {input({40, 24}, kFloat32, -10, 10, kTransposed)},
               kTolExact});

  // ---- Fill -----------------------------------------------------------------------------------
  struct FillRow {
    const char* name;
    DType dtype;
    double value;
  };
  const FillRow fills[] = {{"fill_f32", kFloat32, 2.5}, {"fill_f64", kFloat64, -1.25},
                           {"fill_f16", kFloat16, 0.1}, {"fill_bf16", kBFloat16, 3.3},
                           {"fill_i64", kInt64, -7},    {"fill_i32", kInt32, 123456},
                           {"fill_u8", kUInt8, 200},    {"fill_bool", kBool, 1}};
  for (const FillRow& row : fills) {
    const double value = row.value;
    c.push_back({row.name,
                 [value](const Inputs& x) {
                   Tensor t = x[0].clone();
                   t.fill_(value);
                   return Outputs{t};
                 },
                 {input(kMatrix, row.dtype)},
                 kTolExact});
  }
  c.push_back({"fill_transposed_view",
               [](const Inputs& x) {
                 Tensor t = x[0].clone();
                 t.transpose(0, 1).fill_(3.0);
                 return Outputs{t};
               },
               {input({13, 17})},
               kTolExact});
  c.push_back({"fill_step_sliced_view",
               [](const Inputs& x) {
                 Tensor t = x[0].clone();
                 t.slice(1, 0, 17, 2).fill_(-1.0);
                 return Outputs{t};
               },
               {input({13, 17}, kFloat16)},
               kTolExact});

  // ---- Copy -----------------------------------------------------------------------------------
  c.push_back({"contiguous_of_transposed",
               [](const Inputs& x) { return Outputs{x[0].contiguous()}; },
               {input({64, 48}, kFloat32, -1, 1, kTransposed)},
               kTolExact});
  c.push_back({"clone_step_sliced_i64",
               [](const Inputs& x) { return Outputs{x[0].clone()}; },
               {input({9, 31}, kInt64, -100, 100, kStepSliced)},
               kTolExact});
  c.push_back({"copy_broadcast",
               [](const Inputs& x) {
                 Tensor dst = zeros({4, 5}, on_device_of(x[0], kFloat32));
                 dst.copy_(x[0]);
                 return Outputs{dst};
               },
               {input({5})},
               kTolExact});
  c.push_back({"copy_cast_into_transposed_view",
               [](const Inputs& x) {
                 Tensor dst = zeros({6, 8}, on_device_of(x[0], kFloat16));
                 dst.transpose(0, 1).copy_(x[0]);
                 return Outputs{dst};
               },
               {input({8, 6})},
               kTolExact});

  // ---- cat, stack -----------------------------------------------------------------------------
  c.push_back({"cat_dim0",
               [](const Inputs& x) {
                 return Outputs{cat({x[0], x[1]}, 0)};
               },
               {input({3, 5}), input({4, 5})},
               kTolExact});
  c.push_back({"cat_dim1_three",
               [](const Inputs& x) {
                 return Outputs{cat({x[0], x[1], x[2]}, 1)};
               },
               {input({3, 2}), input({3, 7}), input({3, 1})},
               kTolExact});
  c.push_back({"cat_f16_transposed",
               [](const Inputs& x) {
                 return Outputs{cat({x[0], x[1]}, 1)};
               },
               {input({6, 4}, kFloat16, -1, 1, kTransposed), input({6, 3}, kFloat16)},
               kTolExact});
  c.push_back({"cat_i64_3d_last",
               [](const Inputs& x) {
                 return Outputs{cat({x[0], x[1]}, 2)};
               },
               {input({2, 3, 4}, kInt64, -9, 9), input({2, 3, 5}, kInt64, -9, 9)},
               kTolExact});
  c.push_back({"stack_dim0",
               [](const Inputs& x) {
                 return Outputs{stack({x[0], x[1], x[2]}, 0)};
               },
               {input({3, 4}), input({3, 4}), input({3, 4})},
               kTolExact});
  c.push_back({"stack_dim2",
               [](const Inputs& x) {
                 return Outputs{stack({x[0], x[1]}, 2)};
               },
               {input({3, 4}, kBFloat16), input({3, 4}, kBFloat16, -1, 1, kTransposed)},
               kTolExact});

  // ---- Reductions -----------------------------------------------------------------------------
  const Shape kReduceShape = {37, 129};
  c.push_back({"sum_dim0",
               [](const Inputs& x) { return Outputs{x[0].sum({0})}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"sum_dim1",
               [](const Inputs& x) { return Outputs{x[0].sum({1})}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"sum_all",
               [](const Inputs& x) { return Outputs{x[0].sum()}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"sum_dim1_keepdim",
               [](const Inputs& x) { return Outputs{x[0].sum({1}, true)}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"sum_dims02_3d",
               [](const Inputs& x) {
                 return Outputs{x[0].sum({0, 2})};
               },
               {input({6, 7, 8})},
               kTolF32Sum});
  c.push_back({"sum_transposed",
               [](const Inputs& x) { return Outputs{x[0].sum({1})}; },
               {input({50, 40}, kFloat32, -1, 1, kTransposed)},
               kTolF32Sum});
  c.push_back({"sum_i32_to_i64",
               [](const Inputs& x) { return Outputs{x[0].sum({1})}; },
               {input(kReduceShape, kInt32, -1000, 1000)},
               kTolExact});
  c.push_back({"sum_f16",
               [](const Inputs& x) { return Outputs{x[0].sum({1})}; },
               {input({16, 100}, kFloat16)},
               kTolF16});
  c.push_back({"sum_f64_all",
               [](const Inputs& x) { return Outputs{x[0].sum()}; },
               {input(kReduceShape, kFloat64)},
               kTolF64});
  c.push_back({"sum_large",
               [](const Inputs& x) { return Outputs{x[0].sum()}; },
               {input({1 << 22}, kFloat32, 0, 1)},
               kTolF32Sum});
  c.push_back({"mean_dim1",
               [](const Inputs& x) { return Outputs{x[0].mean({1})}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"mean_all",
               [](const Inputs& x) { return Outputs{x[0].mean()}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"mean_dim0_keepdim",
               [](const Inputs& x) { return Outputs{x[0].mean({0}, true)}; },
               {input(kReduceShape)},
               kTolF32Sum});
  c.push_back({"mean_large",
               [](const Inputs& x) { return Outputs{x[0].mean()}; },
               {input({1 << 22}, kFloat32, 0, 1)},
               kTolF32Sum});
  c.push_back({"max_dim0",
               [](const Inputs& x) { return Outputs{x[0].max({0})}; },
               {input(kReduceShape)},
               kTolExact});
  c.push_back({"max_dim1_keepdim",
               [](const Inputs& x) { return Outputs{x[0].max({1}, true)}; },
               {input(kReduceShape)},
               kTolExact});
  c.push_back({"max_all",
               [](const Inputs& x) { return Outputs{x[0].max()}; },
               {input(kReduceShape)},
               kTolExact});
  c.push_back({"max_i64_dim1",
               [](const Inputs& x) { return Outputs{x[0].max({1})}; },
               {input(kReduceShape, kInt64, -1e6, 1e6)},
               kTolExact});
  c.push_back({"max_bf16_all",
               [](const Inputs& x) { return Outputs{x[0].max()}; },
               {input({1000}, kBFloat16)},
               kTolExact});
  c.push_back({"argmax_dim1",
               [](const Inputs& x) { return Outputs{x[0].argmax(1)}; },
               {input(kReduceShape)},
               kTolExact});
  c.push_back({"argmax_dim0_keepdim",
               [](const Inputs& x) { return Outputs{x[0].argmax(0, true)}; },
               {input(kReduceShape)},
               kTolExact});
  c.push_back({"argmax_all",
               [](const Inputs& x) { return Outputs{x[0].argmax()}; },
               {input(kReduceShape)},
               kTolExact});
  c.push_back({"argmax_3d_dim1",
               [](const Inputs& x) { return Outputs{x[0].argmax(1)}; },
               {input({5, 33, 7})},
               kTolExact});
  // Many ties: the first maximum wins on both devices.
  c.push_back({"argmax_ties_i32",
               [](const Inputs& x) { return Outputs{x[0].argmax(1)}; },
               {input({40, 50}, kInt32, 0, 3)},
               kTolExact});

  // ---- Matmul (f32; TF32 is off by default) ---------------------------------------------------
  c.push_back({"matmul_2d",
               [](const Inputs& x) { return Outputs{matmul(x[0], x[1])}; },
               {input({64, 96}), input({96, 80})},
               kTolF32Gemm});
  c.push_back({"matmul_2d_odd",
               [](const Inputs& x) { return Outputs{matmul(x[0], x[1])}; },
               {input({33, 17}), input({17, 45})},
               kTolF32Gemm});
  c.push_back({"matmul_3d",
               [](const Inputs& x) { return Outputs{matmul(x[0], x[1])}; },
               {input({4, 32, 48}), input({4, 48, 24})},
               kTolF32Gemm});
  c.push_back({"matmul_3d_2d",
               [](const Inputs& x) { return Outputs{matmul(x[0], x[1])}; },
               {input({3, 20, 30}), input({30, 10})},
               kTolF32Gemm});
  c.push_back({"matmul_transposed_operands",
               [](const Inputs& x) { return Outputs{matmul(x[0], x[1])}; },
               {input({40, 50}, kFloat32, -1, 1, kTransposed),
                input({50, 30}, kFloat32, -1, 1, kTransposed)},
               kTolF32Gemm});

  // ---- Random: the same seed gives the same numbers on every device ----------------------------
  // The input only tells the row which device it runs on.
  struct RandomRow {
    const char* name;
    bool normal;
    DType dtype;
    Tolerance tolerance;
  };
  const RandomRow randoms[] = {
      {"rand_f32", false, kFloat32, kTolExact},
      {"randn_f32", true, kFloat32, kTolExact},
      {"rand_f64", false, kFloat64, kTolExact},
      {"rand_f16", false, kFloat16, kTolExact},
      {"randn_bf16", true, kBFloat16, kTolExact},
      // Box-Muller in double: log/sin/cos may differ by an ulp between libm and CUDA.
      {"randn_f64", true, kFloat64, {1e-14, 1e-15}},
  };
  for (const RandomRow& row : randoms) {
    const bool normal = row.normal;
    const DType dtype = row.dtype;
    c.push_back({row.name,
                 [normal, dtype](const Inputs& x) {
                   manual_seed(1234);
                   const TensorOptions options = on_device_of(x[0], dtype);
                   return Outputs{normal ? randn({1001, 3}, options) : rand({1001, 3}, options)};
                 },
                 {input({1})},
                 row.tolerance});
  }
  c.push_back({"rand_then_randn_offsets",
               [](const Inputs& x) {
                 manual_seed(99);
                 Tensor a = rand({37}, on_device_of(x[0], kFloat32));
                 Tensor b = randn({5, 11}, on_device_of(x[0], kFloat32));
                 Tensor d = rand({3}, on_device_of(x[0], kFloat64));
                 return Outputs{a, b, d};
               },
               {input({1})},
               kTolExact});
  return c;
}

}  // namespace

InputSpec input(Shape shape, DType dtype, double low, double high, Layout layout) {
  return InputSpec{std::move(shape), dtype, low, high, layout};
}

const std::vector<OpCase>& device_op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all = make_cases();
    for (auto family : {activation_norm_op_cases, conv_op_cases, layer_op_cases}) {
      for (OpCase& c : family())
        all.push_back(std::move(c));
    }
    return all;
  }();
  return cases;
}

namespace {

// The shape of the contiguous data behind the layout's view.
Shape storage_shape(const InputSpec& spec) {
  Shape shape = spec.shape;
  const std::size_t ndim = shape.size();
  LG_CHECK(spec.layout == Layout::Contiguous || ndim >= 1,
           "op table: a 0-d input must be contiguous");
  switch (spec.layout) {
    case Layout::Contiguous:
      break;
    case Layout::Transposed:
      LG_CHECK(ndim >= 2, "op table: a transposed input needs 2 or more dims, got ", spec.shape);
      std::swap(shape[ndim - 2], shape[ndim - 1]);
      break;
    case Layout::StepSliced:
      shape[ndim - 1] *= 2;
      break;
    case Layout::Offset:
      shape[ndim - 1] += 1;
      break;
    case Layout::Expanded:
      shape[0] = 1;
      break;
  }
  return shape;
}

}  // namespace

Tensor make_input_storage(const InputSpec& spec, std::uint64_t seed) {
  Generator generator(seed);
  Tensor values = empty(storage_shape(spec), TensorOptions(kFloat64));
  ops::uniform_(values, spec.low, spec.high, generator);
  if (spec.dtype == kBool) return lt(values, (spec.low + spec.high) / 2);
  return values.to(spec.dtype);
}

Tensor apply_layout(const Tensor& storage, const InputSpec& spec) {
  const std::int64_t last = storage.dim() - 1;
  switch (spec.layout) {
    case Layout::Contiguous:
      return storage;
    case Layout::Transposed:
      return storage.transpose(last - 1, last);
    case Layout::StepSliced:
      return storage.slice(last, 0, storage.size(last), 2);
    case Layout::Offset:
      return storage.slice(last, 1, storage.size(last));
    case Layout::Expanded:
      return storage.expand(spec.shape);
  }
  LG_THROW(Error, "op table: unknown layout");
}

}  // namespace leangrad::test
