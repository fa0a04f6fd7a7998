// Tests of the matrix product (kernels/ops_linalg.cpp, kernels/cpu/linalg.cpp) against a plain
// triple loop in double: 2-D, batched and broadcast 3-D, 1-D operands, odd sizes, transposed and
// sliced (non-contiguous) operands, float32/float64/float16/bfloat16 under each CPU GEMM backend
// (Eigen, and oneDNN in builds with it), empty products, the errors bad input raises, and CUDA
// against the CPU when a GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/parallel.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::make_tensor;
using test::to_vector;

std::vector<double> random_values(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v)
    x = dist(gen);
  return v;
}

Tensor random_tensor(const Shape& shape, DType dtype, std::uint32_t seed) {
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  return make_tensor(random_values(n, seed), shape, dtype);
}

// The reference: torch.matmul semantics for 1-3 dims, in double, from the operands' own values.
struct Expected {
  Shape shape;
  std::vector<double> values;
};

Expected reference_matmul(const Tensor& a, const Tensor& b) {
  const std::vector<double> va = to_vector(a), vb = to_vector(b);
  // (batch, rows, cols) views, a 1-D a as (1, K), a 1-D b as (K, 1); batch 1 broadcasts.
  auto dims3 = [](const Tensor& t, bool left) -> std::vector<std::int64_t> {
    const Shape& s = t.shape();
    if (t.dim() == 1)
      return left ? std::vector<std::int64_t>{1, 1, s[0]} : std::vector<std::int64_t>{1, s[0], 1};
    if (t.dim() == 2) return {1, s[0], s[1]};
    return {s[0], s[1], s[2]};
  };
  const auto da = dims3(a, true), db = dims3(b, false);
  const std::int64_t batch = da[0] == 1 ? db[0] : da[0], m = da[1], k = da[2], n = db[2];
  Expected e;
  if (a.dim() == 3 || b.dim() == 3) e.shape.push_back(batch);
  if (a.dim() >= 2) e.shape.push_back(m);
  if (b.dim() >= 2) e.shape.push_back(n);
  for (std::int64_t p = 0; p < batch; ++p) {
    const std::int64_t pa = da[0] == 1 ? 0 : p, pb = db[0] == 1 ? 0 : p;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t q = 0; q < k; ++q) {
          acc += va[(pa * m + i) * k + q] * vb[(pb * k + q) * n + j];
        }
        e.values.push_back(acc);
      }
    }
  }
  return e;
}

double rtol_for(DType dtype) {
  switch (dtype) {
    case kFloat64:
      return 1e-12;
    case kFloat32:
      return 1e-5;
    default:
      return test::tolerance_for(dtype).rtol;
  }
}

void expect_matmul_matches(const Tensor& a, const Tensor& b) {
  SCOPED_TRACE(shape_str(a.shape()) + " @ " + shape_str(b.shape()) + " " + dtype_name(a.dtype()) +
               (a.is_contiguous() ? "" : " (a strided)") +
               (b.is_contiguous() ? "" : " (b strided)"));
  const Expected e = reference_matmul(a, b);
  const Tensor c = ops::matmul(a, b);
  EXPECT_EQ(c.shape(), e.shape);
  EXPECT_EQ(c.dtype(), a.dtype());
  EXPECT_TRUE(c.is_contiguous());
  // Values are in [-1, 1]: each output is a sum of K products of magnitude <= 1.
  const double k = static_cast<double>(a.shape().back());
  const double rtol = rtol_for(a.dtype());
  EXPECT_TRUE(all_close(c, e.values, rtol, rtol * std::max(1.0, k)));
}

// Runs body once per CPU GEMM backend this build has (Eigen; oneDNN with LEANGRAD_WITH_ONEDNN).
template <typename F>
void for_each_cpu_gemm_backend(const F& body) {
  std::vector<ops::CpuGemmBackend> backends = {ops::CpuGemmBackend::Eigen};
  if (kernels::cpu::onednn::built()) backends.push_back(ops::CpuGemmBackend::OneDnn);
  for (ops::CpuGemmBackend backend : backends) {
    SCOPED_TRACE(backend == ops::CpuGemmBackend::OneDnn ? "onednn" : "eigen");
    const ops::CpuGemmBackendGuard guard(backend);
    body();
  }
}

// ---- Shapes ------------------------------------------------------------------------------------

TEST(Matmul, TwoDimensional) {
  for_each_cpu_gemm_backend([&] {
    const std::vector<std::array<std::int64_t, 3>> sizes = {
        {1, 1, 1}, {2, 3, 4}, {17, 33, 9}, {1, 64, 1}, {64, 1, 64}, {65, 127, 33}, {128, 96, 160}};
    for (DType dtype : {kFloat32, kFloat64}) {
      for (const auto& [m, k, n] : sizes) {
        expect_matmul_matches(random_tensor({m, k}, dtype, 1), random_tensor({k, n}, dtype, 2));
      }
    }
  });
}

TEST(Matmul, Batched) {
  for_each_cpu_gemm_backend([&] {
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor a = random_tensor({4, 17, 33}, dtype, 3);
      const Tensor b = random_tensor({4, 33, 9}, dtype, 4);
      expect_matmul_matches(a, b);
      expect_matmul_matches(a, random_tensor({33, 9}, dtype, 5));      // 2-D right broadcast
      expect_matmul_matches(random_tensor({17, 33}, dtype, 6), b);     // 2-D left broadcast
      expect_matmul_matches(random_tensor({1, 17, 33}, dtype, 7), b);  // batch 1 broadcasts
      expect_matmul_matches(a, random_tensor({1, 33, 9}, dtype, 8));
    }
  });
}

TEST(Matmul, BatchesRunInParallelOrNotWithTheSameResult) {
  for_each_cpu_gemm_backend([&] {
    const int saved_threads = get_num_threads();
    const Tensor a = random_tensor({6, 40, 50}, kFloat32, 9);
    const Tensor b = random_tensor({6, 50, 30}, kFloat32, 10);
    set_num_threads(1);
    const std::vector<double> serial = to_vector(ops::matmul(a, b));
    set_num_threads(2);
    const std::vector<double> parallel = to_vector(ops::matmul(a, b));
    set_num_threads(saved_threads);
    EXPECT_EQ(serial, parallel);
    expect_matmul_matches(a, b);
  });
}

TEST(Matmul, OneDimensionalOperands) {
  for_each_cpu_gemm_backend([&] {
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor v = random_tensor({7}, dtype, 11);
      expect_matmul_matches(v, random_tensor({7}, dtype, 12));        // dot: 0-d
      expect_matmul_matches(v, random_tensor({7, 5}, dtype, 13));     // (N)
      expect_matmul_matches(random_tensor({5, 7}, dtype, 14), v);     // (M)
      expect_matmul_matches(random_tensor({3, 5, 7}, dtype, 15), v);  // (B, M)
      expect_matmul_matches(v, random_tensor({3, 7, 5}, dtype, 16));  // (B, N)
    }
  });
}

// ---- Layouts ------------------------------------------------------------------------------------

TEST(Matmul, TransposedAndSlicedOperands) {
  for_each_cpu_gemm_backend([&] {
    for (DType dtype : {kFloat32, kFloat64}) {
      const Tensor at = views::transpose(random_tensor({33, 17}, dtype, 17), 0, 1);  // (17, 33)
      const Tensor bt = views::transpose(random_tensor({9, 33}, dtype, 18), 0, 1);   // (33, 9)
      const Tensor a = random_tensor({17, 33}, dtype, 19);
      const Tensor b = random_tensor({33, 9}, dtype, 20);
      expect_matmul_matches(at, b);
      expect_matmul_matches(a, bt);
      expect_matmul_matches(at, bt);
      // Every other row: row stride 2 * cols, used in place.
      expect_matmul_matches(views::slice(random_tensor({34, 33}, dtype, 21), 0, 0, 34, 2), b);
      // Every other column: no unit stride, copied first.
      expect_matmul_matches(a, views::slice(random_tensor({33, 18}, dtype, 22), 1, 0, 18, 2));
      // A column of a matrix as a 1-D operand (stride 9), and an expanded operand (stride 0).
      expect_matmul_matches(a, views::select(random_tensor({33, 9}, dtype, 23), 1, 4));
      expect_matmul_matches(views::expand(random_tensor({1, 33}, dtype, 24), {17, 33}), b);
      // Batched with the batch dim last in memory.
      const Tensor pa = views::permute(random_tensor({17, 33, 4}, dtype, 25), {2, 0, 1});
      const Tensor pb = views::permute(random_tensor({9, 4, 33}, dtype, 26), {1, 2, 0});
      expect_matmul_matches(pa, pb);
    }
  });
}

TEST(Matmul, HalfPrecisionOnTheCpu) {
  for_each_cpu_gemm_backend([&] {
    for (DType dtype : {kFloat16, kBFloat16}) {
      expect_matmul_matches(random_tensor({17, 33}, dtype, 27), random_tensor({33, 9}, dtype, 28));
      expect_matmul_matches(random_tensor({2, 5, 8}, dtype, 29), random_tensor({8, 3}, dtype, 30));
    }
  });
}

TEST(Matmul, EmptyProducts) {
  for_each_cpu_gemm_backend([&] {
    const Tensor zero_k = ops::matmul(empty({3, 0}, kFloat32), empty({0, 4}, kFloat32));
    EXPECT_EQ(zero_k.shape(), (Shape{3, 4}));
    EXPECT_TRUE(all_close(zero_k, std::vector<double>(12, 0.0), 0, 0));
    const Tensor zero_k_batched = ops::matmul(empty({2, 3, 0}, kFloat64), empty({0, 4}, kFloat64));
    EXPECT_EQ(zero_k_batched.shape(), (Shape{2, 3, 4}));
    EXPECT_TRUE(all_close(zero_k_batched, std::vector<double>(24, 0.0), 0, 0));
    EXPECT_EQ(ops::matmul(empty({0, 3}, kFloat32), empty({3, 4}, kFloat32)).shape(), (Shape{0, 4}));
    EXPECT_EQ(ops::matmul(empty({3, 3}, kFloat32), empty({3, 0}, kFloat32)).shape(), (Shape{3, 0}));
    EXPECT_EQ(ops::matmul(empty({0, 2, 3}, kFloat32), empty({3, 4}, kFloat32)).shape(),
              (Shape{0, 2, 4}));
    EXPECT_TRUE(all_close(ops::matmul(empty({0}, kFloat32), empty({0}, kFloat32)), {0}, 0, 0));
  });
}

// ---- Bad input ----------------------------------------------------------------------------------

TEST(Matmul, MismatchedShapesAreShapeErrors) {
  try {
    ops::matmul(empty({2, 3}, kFloat32), empty({4, 5}, kFloat32));
    ADD_FAILURE() << "did not throw";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.message(), "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
  }
  EXPECT_THROW(ops::matmul(empty({2, 3, 4}, kFloat32), empty({3, 4, 5}, kFloat32)), ShapeError);
  EXPECT_THROW(ops::matmul(empty({3}, kFloat32), empty({4}, kFloat32)), ShapeError);
  EXPECT_THROW(ops::matmul(empty({2, 2, 2, 2}, kFloat32), empty({2, 2}, kFloat32)), ShapeError);
  EXPECT_THROW(ops::matmul(empty({}, kFloat32), empty({2, 2}, kFloat32)), ShapeError);
  EXPECT_THROW(ops::matmul(Tensor(), empty({2, 2}, kFloat32)), Error);
}

TEST(Matmul, DtypeErrorsNameBothDtypes) {
  try {
    ops::matmul(empty({2, 3}, kFloat32), empty({3, 4}, kFloat64));
    ADD_FAILURE() << "did not throw";
  } catch (const DTypeError& e) {
    EXPECT_NE(e.message().find("float32"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("float64"), std::string::npos) << e.message();
  }
  EXPECT_THROW(ops::matmul(empty({2, 3}, kInt64), empty({3, 4}, kInt64)), DTypeError);
  EXPECT_THROW(ops::matmul(empty({2, 3}, kBool), empty({3, 4}, kBool)), DTypeError);
}

// ---- CUDA against the CPU -----------------------------------------------------------------------

TEST(Matmul, CudaMatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    Shape a, b;
    bool transpose_a = false, transpose_b = false;
  };
  const std::vector<Case> cases = {
      {{1, 1}, {1, 1}},
      {{17, 33}, {33, 9}},
      {{256, 512}, {512, 128}},
      {{33, 17}, {33, 9}, true},
      {{17, 33}, {9, 33}, false, true},
      {{4, 17, 33}, {4, 33, 9}},
      {{4, 17, 33}, {33, 9}},
      {{17, 33}, {4, 33, 9}},
      {{7}, {7, 5}},
      {{3, 0}, {0, 4}},
  };
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (const Case& c : cases) {
      Tensor a = random_tensor(c.a, dtype, 31), b = random_tensor(c.b, dtype, 32);
      if (c.transpose_a) a = views::transpose(a, -2, -1);
      if (c.transpose_b) b = views::transpose(b, -2, -1);
      SCOPED_TRACE(shape_str(a.shape()) + " @ " + shape_str(b.shape()) + " " + dtype_name(dtype));
      const Tensor expected = ops::matmul(a, b);
      const Tensor got = ops::matmul(a.to(Device::cuda()), b.to(Device::cuda()));
      EXPECT_EQ(got.shape(), expected.shape());
      // Both devices accumulate in float32 (float64 for float64; TF32 is off) and round the sum
      // to the dtype once (cuBLAS's reduced-precision split-K reductions are disallowed,
      // kernels/cuda/linalg.cu), in different orders. Each sum of k products is within
      // k u sum|a||b| <= k^2 u of the exact one (|a|, |b| < 1; u the accumulator's unit
      // roundoff), so the two within 2 k^2 u; a 16-bit rounding of the two can then part them by
      // one more unit in the last place: 2^-7 of the value in bfloat16, 2^-10 in float16.
      const double k = std::max(1.0, static_cast<double>(a.shape().back()));
      const double u = dtype == kFloat64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
      const double rtol = dtype == kBFloat16  ? std::ldexp(1.0, -7)
                          : dtype == kFloat16 ? std::ldexp(1.0, -10)
                                              : 0.0;
      EXPECT_TRUE(all_close(got, to_vector(expected), rtol, 2 * k * k * u));
    }
  }
}

}  // namespace
}  // namespace leangrad
