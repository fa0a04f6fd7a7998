// The CPU's float -> int32 and uint8 cast in lanes (kernels/cpu/float_to_int.h, Note [float to
// int32 in lanes]) against cast_value, Note [Defined integer semantics]'s definition that CUDA
// runs: every one of the 2^32 floats through the cast of a contiguous tensor (under a sanitizer
// every test::kSweepStride-th chunk), and the edges of its ranges through contiguous,
// transposed and stepped ones.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/ops.h>

#include "testing/float_sweep.h"
#include "testing/sanitized.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// Through the CPU cast itself (the loop as the library compiles it, in lanes), a chunk at a time.
TEST(FloatToInt, EveryFloatGivesCastValuesInt32AndUInt8) {
  constexpr std::uint64_t kChunk = 8192;
  auto check = [](std::uint64_t first, std::uint64_t n, test::SweepFailures& failures) {
    Tensor in = empty({static_cast<std::int64_t>(n)});
    auto* floats = static_cast<float*>(in.data_ptr());
    for (std::uint64_t i = 0; i < n; ++i)
      floats[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
    const Tensor as_int32 = ops::cast(in, kInt32);
    const Tensor as_uint8 = ops::cast(in, kUInt8);
    const auto* got32 = static_cast<const std::int32_t*>(as_int32.data_ptr());
    const auto* got8 = static_cast<const std::uint8_t*>(as_uint8.data_ptr());
    for (std::uint64_t i = 0; i < n; ++i) {
      if (got32[i] != kernels::cast_value<std::int32_t>(floats[i]) ||
          got8[i] != kernels::cast_value<std::uint8_t>(floats[i]))
        failures.add(std::bit_cast<std::uint32_t>(floats[i]));
    }
  };
  test::expect_float_sweep(std::uint64_t{1} << 32, kChunk, test::kSweepStride, check);
}

// The tensor cast takes it in every layout: the edges of each range (2^31, 2^32, 2^63, the
// infinities, NaN, both zeros, halves) and their neighbours, against cast_value element by element.
TEST(FloatToInt, TensorCastsOfEveryLayout) {
  std::vector<float> values;
  for (float edge : {0.0f, 0.5f, 1.0f, 0x1p31f, 0x1p32f, 0x1p40f, 0x1p63f, 0x1p64f, 3e9f, 1e20f}) {
    for (float v : {edge, std::nextafter(edge, 0.0f), std::nextafter(edge, INFINITY)}) {
      values.push_back(v);
      values.push_back(-v);
    }
  }
  values.insert(values.end(), {INFINITY, -INFINITY, NAN, -NAN});
  while (values.size() % 8 != 0)
    values.push_back(7.75f);
  const auto n = static_cast<std::int64_t>(values.size());
  Tensor dense = empty({n});
  std::memcpy(dense.data_ptr(), values.data(), values.size() * sizeof(float));
  const Tensor spaced = zeros({n, 2});
  spaced.select(1, 0).copy_(dense);
  const Tensor transposed = dense.reshape({8, n / 8}).t().contiguous().t();
  for (const Tensor& x : {dense, spaced.select(1, 0), transposed}) {
    const std::vector<double> got32 = test::to_vector(ops::cast(x, kInt32));
    const std::vector<double> got8 = test::to_vector(ops::cast(x, kUInt8));
    const std::vector<double> floats = test::to_vector(x);
    for (std::size_t i = 0; i < floats.size(); ++i) {
      const auto v = static_cast<float>(floats[i]);
      EXPECT_EQ(got32[i], kernels::cast_value<std::int32_t>(v)) << v;
      EXPECT_EQ(got8[i], kernels::cast_value<std::uint8_t>(v)) << v;
    }
  }
}

}  // namespace
}  // namespace leangrad
