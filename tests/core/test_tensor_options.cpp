// TensorOptions (core/tensor_options.h): which fields were set, merge_in, and the functions that
// merge given options into a tensor's own, as LibTorch's: Tensor::new_* and the *_like functions.
#include <gtest/gtest.h>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/tensor_options.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {
namespace {

TEST(TensorOptions, RemembersWhichFieldsWereSet) {
  const TensorOptions none;
  EXPECT_FALSE(none.has_dtype());
  EXPECT_FALSE(none.has_device());
  EXPECT_FALSE(none.has_requires_grad());
  EXPECT_FALSE(none.has_pinned_memory());
  // The defaults where nothing was set: float32 on the CPU, no grad, not pinned.
  EXPECT_EQ(none.dtype(), kFloat32);
  EXPECT_EQ(none.device(), Device::cpu());
  EXPECT_FALSE(none.requires_grad());
  EXPECT_FALSE(none.dtype_opt().has_value());
  // Setting a field to its default still counts as set.
  const TensorOptions float32 = TensorOptions(kFloat32);
  EXPECT_TRUE(float32.has_dtype());
  EXPECT_FALSE(float32.has_device());
  EXPECT_TRUE(TensorOptions(kCPU).has_device());
  EXPECT_TRUE(requires_grad(false).has_requires_grad());
  EXPECT_TRUE(TensorOptions().pinned_memory(false).has_pinned_memory());
}

TEST(TensorOptions, MergeInTakesTheFieldsSet) {
  const TensorOptions base = TensorOptions(kFloat64).device(Device::cuda(1)).requires_grad(true);
  const TensorOptions merged = base.merge_in(TensorOptions(kInt64));
  EXPECT_EQ(merged.dtype(), kInt64);
  EXPECT_EQ(merged.device(), Device::cuda(1));  // not set in the argument: base's
  EXPECT_TRUE(merged.requires_grad());
  const TensorOptions cleared = base.merge_in(requires_grad(false).device(kCPU));
  EXPECT_EQ(cleared.dtype(), kFloat64);
  EXPECT_EQ(cleared.device(), Device::cpu());
  EXPECT_FALSE(cleared.requires_grad());
  EXPECT_EQ(base.merge_in(TensorOptions()).device(), Device::cuda(1));
}

TEST(TensorOptions, NewAndLikeKeepWhatOptionsDoNotSet) {
  const Tensor x = ones({2, 3}, kFloat64);
  // Only requires_grad given: x's dtype stays (it was float32 before options were merged).
  const Tensor z = x.new_zeros({4}, requires_grad());
  EXPECT_EQ(z.dtype(), kFloat64);
  EXPECT_TRUE(z.requires_grad());
  EXPECT_EQ(x.new_empty({1}, kInt32).dtype(), kInt32);
  EXPECT_EQ(x.new_full({2}, 3.0, TensorOptions()).dtype(), kFloat64);
  EXPECT_TRUE(x.new_ones({2}, kInt64).equal(ones({2}, kInt64)));
  // The *_like functions: x's shape, and its dtype and device unless options set them.
  EXPECT_EQ(zeros_like(x).dtype(), kFloat64);
  EXPECT_EQ(zeros_like(x, kInt64).dtype(), kInt64);
  EXPECT_EQ(zeros_like(x, kInt64).shape(), x.shape());
  EXPECT_TRUE(ones_like(x, requires_grad()).requires_grad());
  EXPECT_EQ(ones_like(x, requires_grad()).dtype(), kFloat64);
  EXPECT_TRUE(full_like(x, 2.0, kInt32).equal(full({2, 3}, 2.0, kInt32)));
  EXPECT_EQ(empty_like(x, kFloat16).dtype(), kFloat16);
  EXPECT_EQ(rand_like(x, kFloat32).dtype(), kFloat32);
  EXPECT_EQ(randn_like(x).dtype(), kFloat64);
  EXPECT_EQ(randint_like(x, 5, kInt64).dtype(), kInt64);
  EXPECT_EQ(randint_like(x, 2, 5).dtype(), kFloat64);
  EXPECT_THROW(zeros_like(Tensor(), kInt64), Error);
  EXPECT_THROW(rand_like(Tensor()), Error);
}

// x.new_zeros(s, dtype) on a CUDA x stays on x's device, as LibTorch's. SKIPPED without a CUDA
// device.
TEST(TensorOptionsCuda, NewAndLikeStayOnTheDevice) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = ones({2}, TensorOptions().device(kCUDA));
  EXPECT_TRUE(x.new_zeros({3}, kFloat64).device().is_cuda());
  EXPECT_TRUE(zeros_like(x, kInt64).device().is_cuda());
  EXPECT_TRUE(x.new_zeros({3}, TensorOptions(kCPU)).device().is_cpu());
}

}  // namespace
}  // namespace leangrad
