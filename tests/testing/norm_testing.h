// What the normalization kernels' tests share (tests/kernels/test_group_norm_vectorized.cpp,
// test_layer_norm_vectorized.cpp, test_batch_norm.cpp): the size of one rounding to a dtype,
// seeded normal inputs about a chosen mean, the optional-tensor helpers of their launcher calls,
// the check that an entry refuses an input naming its op, and the comparison of every result at
// 1 to 4 threads.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/core/tensor.h>
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad::test {

// The spacing of a dtype's values relative to their size.
inline double relative_spacing(DType dtype) {
  switch (dtype) {
    case DType::Float64:
      return 0x1p-52;
    case DType::Float16:
      return 0x1p-10;
    case DType::BFloat16:
      return 0x1p-7;
    default:
      return 0x1p-23;
  }
}

// One rounding to the dtype of a value of size v (float16's subnormal step included).
inline double rounding(DType dtype, double v) {
  return relative_spacing(dtype) * std::fabs(v) + (dtype == kFloat16 ? 0x1p-24 : 0.0);
}

// Normal values of mean `offset` and standard deviation 1, rounded to the dtype.
inline Tensor random_tensor(const Shape& shape, double offset, DType dtype, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v)
    x = offset + normal(rng);
  return make_tensor(v, shape, dtype);
}

inline const void* data_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr() : nullptr;
}

// A gradient buffer for the launcher, or null when that gradient is not asked for.
inline void* output_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr() : nullptr;
}

// call() throws an Error whose message names `op`.
template <typename F>
void expect_error_naming(const F& call, const char* op) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

// The values of `tensors`, one after another.
inline std::vector<double> values_of(std::initializer_list<const Tensor*> tensors) {
  std::vector<double> all;
  for (const Tensor* t : tensors) {
    const std::vector<double> v = to_vector(*t);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

// run() (a kernel's results, flattened) gives the same bits at 1, 2, 3 and 4 threads. At most 4:
// ThreadCount (tests/testing/thread_count.h) says why.
template <typename F>
void expect_same_bits_on_1_to_4_threads(const F& run) {
  std::vector<std::vector<double>> results;
  for (int threads : {1, 2, 3, 4}) {
    const ThreadCount guard(threads);
    results.push_back(run());
  }
  for (std::size_t k = 1; k < results.size(); ++k)
    for (std::size_t i = 0; i < results[0].size(); ++i)
      ASSERT_EQ(results[k][i], results[0][i]) << "run " << k << ", value " << i;
}

inline Tensor to_device(const Tensor& t, const Device& device) {
  return t.defined() ? t.to(device) : Tensor();
}

}  // namespace leangrad::test
