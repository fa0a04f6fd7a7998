// Tensor basics: creation functions, metadata, item, dtype conversion, printing, from_blob,
// copies between dtypes, and the errors of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

TEST(Tensor, CreationFunctions) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), kFloat32);
  EXPECT_EQ(z.device(), Device::cpu());
  EXPECT_TRUE(test::all_close(z, std::vector<double>(6, 0.0)));
  EXPECT_TRUE(test::all_close(ones({4}, kInt32), {1, 1, 1, 1}));
  EXPECT_TRUE(test::all_close(full({2}, -2.5, kFloat64), {-2.5, -2.5}));
  EXPECT_TRUE(test::all_close(arange(5), {0, 1, 2, 3, 4}));
  EXPECT_TRUE(test::all_close(arange(1, 2, 0.25, kFloat64), {1, 1.25, 1.5, 1.75}));
  EXPECT_TRUE(test::all_close(arange(5, 0, -2, kInt64), {5, 3, 1}));
  EXPECT_EQ(arange(3, kInt64).dtype(), kInt64);
  EXPECT_THROW(arange(0, 5, 0), Error);
  EXPECT_THROW(arange(0, 5, -1), Error);
  Tensor e = empty({0, 7});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.is_contiguous());
  Tensor scalar = full({}, 3.0);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.item<float>(), 3.0f);
  EXPECT_THROW(zeros({2, -1}), ShapeError);
}

TEST(Tensor, FromVectorAndBlob) {
  Tensor t = tensor(std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.dtype(), kInt64);
  EXPECT_EQ(t.strides(), (Strides{3, 1}));
  EXPECT_EQ(t.select(1, 2).select(0, 1).item<std::int64_t>(), 6);
  EXPECT_EQ(tensor(std::vector<bool>{true, false}).dtype(), kBool);
  EXPECT_THROW(tensor(std::vector<float>{1, 2, 3}, {2, 2}), ShapeError);

  float data[6] = {1, 2, 3, 4, 5, 6};
  bool deleted = false;
  {
    Tensor b = from_blob(data, {3, 2}, kFloat32, [&](void* p) { deleted = p == data; });
    b.mul_(2.0);  // writes through to the caller's memory
    EXPECT_EQ(b.data_ptr<float>(), data);
  }
  EXPECT_TRUE(deleted);
  EXPECT_EQ(data[5], 12.0f);
}

TEST(Tensor, ItemAndDataPtrCheckTheirArguments) {
  Tensor t = zeros({2});
  EXPECT_THROW(t.item<float>(), ShapeError);
  EXPECT_THROW(t.data_ptr<double>(), DTypeError);
  EXPECT_THROW(Tensor().shape(), Error);
  EXPECT_EQ(tensor(std::vector<std::int32_t>{-7}).item<double>(), -7.0);
}

// item<T>() converts as LibTorch's (c10::checked_convert): a value T cannot hold is a DTypeError
// naming both types and the value, where a plain cast of NaN or of an out-of-range float to an
// integer is undefined behaviour (and gave INT64_MIN, or 44 for 300 as uint8).
TEST(Tensor, ItemRefusesValuesTheTypeCannotHold) {
  const auto refused = [](const auto& call, const std::vector<std::string>& words) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one with " << words.front();
    } catch (const DTypeError& e) {
      for (const std::string& word : words)
        EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  refused([&] { full({}, nan).item<std::int64_t>(); }, {"item<int64>", "nan", "float32"});
  refused([&] { full({}, inf).item<std::int32_t>(); }, {"item<int32>", "inf"});
  refused([&] { full({}, 1e30).item<std::int32_t>(); }, {"int32"});
  refused([&] { full({}, 300.0).item<std::uint8_t>(); }, {"item<uint8>", "300"});
  refused([&] { full({}, -1.0).item<std::uint8_t>(); }, {"uint8", "-1"});
  refused([&] { full({}, 1e300, kFloat64).item<float>(); }, {"item<float32>", "float64"});
  refused([&] { full({}, 300, kInt64).item<std::uint8_t>(); }, {"300", "int64"});
  refused([&] { full({}, -256, kInt64).item<std::uint8_t>(); }, {"-256"});
  refused([&] { full({}, 3e9, kFloat64).item<std::int32_t>(); }, {"int32"});
  refused([&] { full({}, std::ldexp(1.0, 63), kFloat64).item<std::int64_t>(); }, {"int64"});
  refused([&] { full({}, std::ldexp(1.0, 31), kInt64).item<std::int32_t>(); }, {"2147483648"});
  // What fits converts: the ends of each range, truncation toward zero, infinities and NaN
  // between floating types, anything to bool, and a negative integer's wrap to uint8.
  EXPECT_EQ(full({}, -std::ldexp(1.0, 63), kFloat64).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(full({}, std::ldexp(1.0, 62), kFloat32).item<std::int64_t>(), std::int64_t{1} << 62);
  EXPECT_EQ(full({}, -2147483648.0, kFloat64).item<std::int32_t>(), -2147483647 - 1);
  EXPECT_EQ(full({}, 2147483647.9, kFloat64).item<std::int32_t>(), 2147483647);
  EXPECT_EQ(full({}, 255.5).item<std::uint8_t>(), 255);
  EXPECT_EQ(full({}, -2.7).item<std::int64_t>(), -2);
  EXPECT_TRUE(std::isinf(full({}, inf, kFloat64).item<float>()));
  EXPECT_TRUE(std::isnan(full({}, nan, kFloat16).item<double>()));
  EXPECT_EQ(full({}, 65504.0, kFloat16).item<std::int32_t>(), 65504);
  EXPECT_TRUE(full({}, nan).item<bool>());
  EXPECT_FALSE(full({}, 0.0).item<bool>());
  EXPECT_EQ(full({}, -1, kInt64).item<std::uint8_t>(), 255);
  EXPECT_EQ(full({}, -255, kInt32).item<std::uint8_t>(), 1);
  EXPECT_EQ(full({}, true, kBool).item<std::uint8_t>(), 1);
  EXPECT_EQ(full({}, 255, kUInt8).item<std::int32_t>(), 255);
  EXPECT_EQ(full({}, std::numeric_limits<std::int64_t>::max(), kInt64).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::max());
}

TEST(Tensor, ConversionsRoundToNearestEven) {
  // 1 + 2^-11 is halfway between two float16 values: rounds to the even one (1.0).
  // 1 + 3 * 2^-11 is halfway too: rounds up to 1 + 2^-9 (even mantissa).
  Tensor x = test::make_tensor(
      {1 + std::ldexp(1.0, -11), 1 + 3 * std::ldexp(1.0, -11), 65520.0, -0.0, 1e-8}, {5}, kFloat32);
  const auto h = test::to_vector(x.to(kFloat16));
  EXPECT_EQ(h[0], 1.0);
  EXPECT_EQ(h[1], 1 + std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isinf(h[2]));  // 65520 rounds up past the largest half (65504)
  EXPECT_EQ(h[3], 0.0);
  EXPECT_TRUE(std::signbit(h[3]));  // -0 stays -0
  EXPECT_EQ(h[4], 0.0);             // below half the smallest subnormal
  // bfloat16 keeps 8 bits of mantissa: 1 + 2^-8 is halfway, ties to even (1.0).
  Tensor y = test::make_tensor({1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8)}, {2});
  const auto b = test::to_vector(y.to(kBFloat16));
  EXPECT_EQ(b[0], 1.0);
  EXPECT_EQ(b[1], 1 + std::ldexp(1.0, -6));
  // Float to integer truncates toward zero; to bool is x != 0.
  Tensor f = test::make_tensor({-2.7, -0.5, 0.0, 0.5, 2.7}, {5});
  EXPECT_TRUE(test::all_close(f.to(kInt32), {-2, 0, 0, 0, 2}));
  EXPECT_TRUE(test::all_close(f.to(kBool), {1, 1, 0, 1, 1}));
  EXPECT_TRUE(f.to(kFloat32).is_same(f));  // same dtype: no copy
}

TEST(Tensor, CopyBroadcastsAndConvertsIntoStridedViews) {
  Tensor dst = zeros({3, 4}, kFloat64);
  Tensor src = test::make_tensor({1, 2, 3, 4}, {4}, kInt32);
  dst.slice(0, 0, 3, 2).copy_(src);  // rows 0 and 2
  EXPECT_TRUE(test::all_close(dst, {1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4}));
  EXPECT_THROW(dst.copy_(zeros({5})), ShapeError);
  Tensor c = dst.clone();
  EXPECT_FALSE(c.shares_storage(dst));
  c.zero_();
  EXPECT_EQ(dst.sum().item<double>(), 20.0);
}

TEST(Tensor, PrintsLikePyTorch) {
  // The formatting rules are checked against PyTorch's repr in tests/core/test_ops_parity.cpp.
  EXPECT_EQ(test::make_tensor({1, 2.5, -3}, {3}).str(), "tensor([ 1.0000,  2.5000, -3.0000])");
  EXPECT_EQ(tensor(std::vector<std::int64_t>{1, 2, 3, 4}, {2, 2}).str(),
            "tensor([[1, 2],\n        [3, 4]])");
  EXPECT_EQ(test::make_tensor({1}, {1}, kFloat64).str(), "tensor([1.], dtype=float64)");
  EXPECT_EQ(tensor(std::vector<bool>{true, false}).str(), "tensor([ True, False])");
  EXPECT_EQ(Tensor().str(), "Tensor()");
  // Without elements, as PyTorch: no bracket per row, however many rows (10^12 here), the size
  // before the dtype, and no size for 1-D.
  EXPECT_EQ(empty({std::int64_t{1} << 40, 0}).str(), "tensor([], size=(1099511627776, 0))");
  EXPECT_EQ(empty({2, 0}, kFloat64).str(), "tensor([], size=(2, 0), dtype=float64)");
  EXPECT_EQ(empty({0}, kFloat64).str(), "tensor([], dtype=float64)");
  const std::string big = arange(2000).str();
  EXPECT_NE(big.find("..."), std::string::npos);
  EXPECT_LT(big.size(), 200u);
}

TEST(Tensor, RequiresGradOnlyForFloatingTensors) {
  Tensor x = zeros({2}, TensorOptions().requires_grad(true));
  EXPECT_TRUE(x.requires_grad());
  EXPECT_FALSE(x.detach().requires_grad());
  EXPECT_THROW(zeros({2}, kInt64).requires_grad_(), DTypeError);
}

// Sizes whose element or byte counts, strides or offsets do not fit in int64 are a ShapeError
// wherever they come from (each line a reproducer of an overflow that used to allocate too
// little, return a null pointer or report a wrong numel).
TEST(Tensor, SizesThatOverflowAreShapeErrors) {
  constexpr std::int64_t k2to31 = std::int64_t{1} << 31;
  constexpr std::int64_t k2to62 = std::int64_t{1} << 62;
  EXPECT_THROW(ones({k2to62 + 16}), ShapeError);                       // bytes wrapped to 64
  EXPECT_THROW(zeros({std::int64_t{1} << 61}, kFloat64), ShapeError);  // 2^64 bytes: null
  EXPECT_THROW(empty({k2to62 + 1}), ShapeError);                       // nbytes() was 4
  EXPECT_THROW(ones({1}).expand({k2to31, k2to31}) + 1.0, ShapeError);  // the output's bytes
  EXPECT_THROW(ones({1, 1}).expand({k2to62, k2to62}), ShapeError);     // numel() was 0
  EXPECT_THROW(empty({0, std::int64_t{1} << 32, std::int64_t{1} << 32}), ShapeError);  // strides
  EXPECT_THROW(ones({4}).view({-1, k2to62, k2to62}), ShapeError);                      // infer_size
  EXPECT_THROW(ones({4}).reshape({k2to62, k2to62, 0}), ShapeError);
  EXPECT_THROW(arange(0.0, 1e30), ShapeError);  // the count as int64
  // No elements, but the reduced size does not fit: refused, not wrapped.
  const Tensor empty_huge = zeros({0, 1, 1}).expand({0, std::int64_t{1} << 40, 1LL << 40});
  EXPECT_EQ(empty_huge.numel(), 0);
  EXPECT_THROW(empty_huge.sum({1, 2}), ShapeError);
}

// Stride, padding, dilation and kernel sizes from a caller are bounded before any output size
// is computed from them (in + 2 padding could overflow).
TEST(Tensor, HugeConvAndPoolParametersAreShapeErrors) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  const Tensor x = ones({1, 1, 4, 4});
  EXPECT_THROW(conv2d(x, ones({1, 1, 3, 3}), Tensor(), {1, 1}, {kHuge, kHuge}), ShapeError);
  EXPECT_THROW(conv2d(x, ones({1, 1, 3, 3}), Tensor(), {kHuge, 1}), ShapeError);
  EXPECT_THROW(conv2d(x, ones({1, 1, 3, 3}), Tensor(), {1, 1}, {0, 0}, {kHuge, 1}), ShapeError);
  EXPECT_THROW(max_pool2d(x, {kHuge, kHuge}, {1, 1}, {kHuge / 2, kHuge / 2}), Error);
}

// A huge slice step is a one-element slice (its stride times the step would overflow).
TEST(Tensor, SliceWithAHugeStepKeepsOneElement) {
  const Tensor x = arange(10.0);
  const Tensor s = x.slice(0, 3, 10, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(s.shape(), (Shape{1}));
  EXPECT_EQ(s.item<float>(), 3.0f);
  EXPECT_EQ(x.slice(0, 0, 10, 4).shape(), (Shape{3}));
  EXPECT_EQ(x.slice(0, 5, 5, 3).shape(), (Shape{0}));
}

TEST(Tensor, CudaWithoutGpuThrowsDeviceError) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  try {
    zeros({2}, Device::cuda());
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
  EXPECT_THROW(zeros({2}).to(kCUDA), DeviceError);
}

}  // namespace
}  // namespace leangrad

namespace leangrad {
namespace {

TEST(DTypeNames, LibTorchAliasesNameTheSameDtypes) {
  EXPECT_EQ(zeros({2}, kFloat).dtype(), kFloat32);
  EXPECT_EQ(zeros({2}, kDouble).dtype(), kFloat64);
  EXPECT_EQ(zeros({2}, kHalf).dtype(), kFloat16);
  EXPECT_EQ(zeros({2}, kLong).dtype(), kInt64);
  EXPECT_EQ(zeros({2}, kInt).dtype(), kInt32);
  EXPECT_EQ(zeros({2}, kByte).dtype(), kUInt8);
}

TEST(DeviceText, ParsesLibTorchSpellingsAndRefusesTheRest) {
  EXPECT_EQ(Device("cpu"), Device::cpu());
  EXPECT_EQ(Device("cuda"), Device::cuda(0));
  EXPECT_EQ(Device(std::string("cuda:3")), Device::cuda(3));
  EXPECT_EQ(Device("cuda:12").index, 12);
  for (const char* bad : {"", "gpu", "cuda:", "cuda:-1", "cuda:1x", "CPU", "cuda: 1", "cuda:+1",
                          "cuda:99999999999"}) {
    try {
      Device d(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\" as " << d;
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("got \"") + bad + "\""), std::string::npos)
          << e.what();
    }
  }
  // A tensor's to() takes the text too (to the CPU here, which every machine has).
  const Tensor t = zeros({2}).to("cpu");
  EXPECT_TRUE(t.device().is_cpu());
}

}  // namespace
}  // namespace leangrad
