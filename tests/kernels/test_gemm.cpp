// Tests of the CPU's one matrix product, kernels/cpu/gemm.h, against a loop in double, for each
// backend this build has (Eigen always, oneDNN with LEANGRAD_WITH_ONEDNN), float and double: every
// combination of transposes, leading dimensions past the row length, alpha and beta (beta = 0
// never reads c, which starts as NaN there), k = 0, odd sizes, 1 and 2 threads; then the backend
// setting (ops::set_cpu_gemm_backend and its guard).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/core/parallel.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {
namespace {

using kernels::cpu::gemm;

std::vector<ops::CpuGemmBackend> backends() {
  std::vector<ops::CpuGemmBackend> b = {ops::CpuGemmBackend::Eigen};
  if (kernels::cpu::onednn::built()) b.push_back(ops::CpuGemmBackend::OneDnn);
  return b;
}

const char* name(ops::CpuGemmBackend b) {
  return b == ops::CpuGemmBackend::OneDnn ? "onednn" : "eigen";
}

struct Problem {
  bool trans_a, trans_b;
  std::int64_t m, n, k;
  std::int64_t pad_a, pad_b, pad_c;  // leading dimension = row length + pad
  double alpha, beta;
};

template <typename T>
std::vector<T> random_values(std::int64_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(count));
  for (T& x : v)
    x = static_cast<T>(dist(gen));
  return v;
}

// Runs one problem with the current backend and checks every output against the double loop.
// Bound: a sum of k products, each rounded, and the alpha and beta terms, in any order and with or
// without fused multiply-adds, is within (k + 2) u (|alpha| sum |a||b| + |beta| |c|) of the exact
// value, u the unit roundoff of T (Higham, Accuracy and Stability, 3.1); the reference loop in
// double is exact to far below that for float and adds its own (k + 2) u for double.
template <typename T>
void expect_gemm_matches(const Problem& p, std::uint32_t seed) {
  SCOPED_TRACE(std::string("trans_a=") + (p.trans_a ? "T" : "N") +
               " trans_b=" + (p.trans_b ? "T" : "N") + " m=" + std::to_string(p.m) +
               " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
               " alpha=" + std::to_string(p.alpha) + " beta=" + std::to_string(p.beta));
  // Stored shapes: a (m, k) or (k, m), b (k, n) or (n, k).
  const std::int64_t a_rows = p.trans_a ? p.k : p.m, a_cols = p.trans_a ? p.m : p.k;
  const std::int64_t b_rows = p.trans_b ? p.n : p.k, b_cols = p.trans_b ? p.k : p.n;
  const std::int64_t lda = a_cols + p.pad_a, ldb = b_cols + p.pad_b, ldc = p.n + p.pad_c;
  const std::vector<T> a = random_values<T>(std::max<std::int64_t>(a_rows * lda, 1), seed);
  const std::vector<T> b = random_values<T>(std::max<std::int64_t>(b_rows * ldb, 1), seed + 1);
  std::vector<T> c = random_values<T>(std::max<std::int64_t>(p.m * ldc, 1), seed + 2);
  if (p.beta == 0) {
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j)
        c[i * ldc + j] = std::numeric_limits<T>::quiet_NaN();  // must not be read
    }
  }
  const std::vector<T> c0 = c;
  gemm<T>(p.trans_a, p.trans_b, p.m, p.n, p.k, static_cast<T>(p.alpha), a.data(), lda, b.data(),
          ldb, static_cast<T>(p.beta), c.data(), ldc);

  const double u = std::numeric_limits<T>::epsilon() / 2;
  auto at = [](const std::vector<T>& x, std::int64_t ld, bool trans, std::int64_t i,
               std::int64_t j) {
    return static_cast<double>(trans ? x[j * ld + i] : x[i * ld + j]);
  };
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      double sum = 0, magnitude = 0;
      for (std::int64_t q = 0; q < p.k; ++q) {
        const double prod = at(a, lda, p.trans_a, i, q) * at(b, ldb, p.trans_b, q, j);
        sum += prod;
        magnitude += std::abs(prod);
      }
      const double c_in = p.beta == 0 ? 0.0 : static_cast<double>(c0[i * ldc + j]);
      const double expected = p.alpha * sum + p.beta * c_in;
      const double bound = (static_cast<double>(p.k) + 2) * u *
                               (std::abs(p.alpha) * magnitude + std::abs(p.beta) * std::abs(c_in)) +
                           std::numeric_limits<T>::denorm_min();
      const double got = c[i * ldc + j];
      ASSERT_LE(std::abs(got - expected), bound) << "at (" << i << ", " << j << ")";
    }
  }
  // Nothing outside the m x n window of c is written.
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = p.n; j < ldc; ++j)
      ASSERT_EQ(std::memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof(T)), 0);
  }
}

std::vector<Problem> problems() {
  std::vector<Problem> out;
  const std::int64_t sizes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 10, 128}, {65, 127, 33}};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const auto& s : sizes) {
        out.push_back({ta, tb, s[0], s[1], s[2], 0, 0, 0, 1.0, 0.0});
        out.push_back({ta, tb, s[0], s[1], s[2], 3, 1, 2, 1.0, 1.0});  // ld > row, accumulate
        out.push_back({ta, tb, s[0], s[1], s[2], 0, 2, 5, -0.5, 0.25});
      }
    }
  }
  return out;
}

TEST(Gemm, EveryLayoutAlphaAndBetaMatchesTheReferenceLoop) {
  for (ops::CpuGemmBackend backend : backends()) {
    SCOPED_TRACE(name(backend));
    const ops::CpuGemmBackendGuard guard(backend);
    std::uint32_t seed = 1;
    for (const Problem& p : problems()) {
      expect_gemm_matches<float>(p, seed);
      expect_gemm_matches<double>(p, seed);
      seed += 3;
    }
  }
}

TEST(Gemm, EmptySumScalesOrZeroesTheOutput) {
  for (ops::CpuGemmBackend backend : backends()) {
    SCOPED_TRACE(name(backend));
    const ops::CpuGemmBackendGuard guard(backend);
    std::vector<float> c = {1, 2, 3, 4, 5, 6};
    gemm<float>(false, false, 2, 3, 0, 1.0f, nullptr, 1, nullptr, 3, 0.5f, c.data(), 3);
    EXPECT_EQ(c, (std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3}));
    std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
    gemm<float>(false, false, 2, 3, 0, 1.0f, nullptr, 1, nullptr, 3, 0.0f, c.data(), 3);
    EXPECT_EQ(c, std::vector<float>(6, 0.0f));
    gemm<float>(false, false, 0, 3, 4, 1.0f, nullptr, 4, nullptr, 3, 0.0f, nullptr, 3);  // no-op
  }
}

TEST(Gemm, LargeProductsMatchAtOneAndTwoThreads) {
  const int saved = get_num_threads();
  for (ops::CpuGemmBackend backend : backends()) {
    SCOPED_TRACE(name(backend));
    const ops::CpuGemmBackendGuard guard(backend);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      set_num_threads(threads);
      expect_gemm_matches<float>({false, true, 200, 310, 257, 0, 0, 0, 1.0, 0.0}, 40);
      expect_gemm_matches<float>({true, false, 129, 64, 784, 0, 0, 0, 1.0, 1.0}, 43);
    }
  }
  set_num_threads(saved);
}

TEST(Gemm, BackendSettingAndGuard) {
  const ops::CpuGemmBackend before = ops::cpu_gemm_backend();
  EXPECT_EQ(before, kernels::cpu::onednn::built() ? ops::CpuGemmBackend::OneDnn
                                                  : ops::CpuGemmBackend::Eigen)
      << "the build's default (LEANGRAD_CPU_GEMM is not set in the test environment)";
  {
    const ops::CpuGemmBackendGuard guard(ops::CpuGemmBackend::Eigen);
    EXPECT_EQ(ops::cpu_gemm_backend(), ops::CpuGemmBackend::Eigen);
    EXPECT_EQ(ops::cpu_gemm_library().rfind("Eigen 3.", 0), 0u) << ops::cpu_gemm_library();
  }
  EXPECT_EQ(ops::cpu_gemm_backend(), before);
  if (kernels::cpu::onednn::built()) {
    const ops::CpuGemmBackendGuard guard(ops::CpuGemmBackend::OneDnn);
    EXPECT_EQ(ops::cpu_gemm_library().rfind("oneDNN ", 0), 0u) << ops::cpu_gemm_library();
    EXPECT_FALSE(kernels::cpu::onednn::version().empty());
  } else {
    try {
      ops::set_cpu_gemm_backend(ops::CpuGemmBackend::OneDnn);
      FAIL() << "choosing oneDNN in a build without it must throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("built without oneDNN"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ops::cpu_gemm_backend(), ops::CpuGemmBackend::Eigen);
  }
}

}  // namespace
}  // namespace leangrad
