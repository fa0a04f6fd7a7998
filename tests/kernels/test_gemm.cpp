// Tests of the CPU's one matrix product, kernels/cpu/gemm.h, against a loop in double, for each
// backend this build has (Eigen always, oneDNN with LEANGRAD_WITH_ONEDNN), float and double: every
// combination of transposes, leading dimensions past the row length, alpha and beta (beta = 0
// never reads c, which starts as NaN there), k = 0, odd sizes, 1 and 2 threads; oneDNN's product
// with b transposed first, in panels of every width it takes; the backend
// setting (ops::set_cpu_gemm_backend and its guard); and products that keep their results and
// the heap while signals arrive (Note [Signals and oneDNN's GEMM kernels]).
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/core/parallel.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/ops.h>
#include "testing/sanitized.h"

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
//
// panel_bytes > 0 (float, trans_b) runs oneDNN's sgemm_b_transposed_first with that panel bound
// in place of gemm.
template <typename T>
void expect_gemm_matches(const Problem& p, std::uint32_t seed, std::int64_t panel_bytes = 0) {
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
  if constexpr (std::is_same_v<T, float>) {
    if (panel_bytes > 0) {
      ASSERT_TRUE(p.trans_b);
      kernels::cpu::onednn::sgemm_b_transposed_first(
          p.trans_a, p.m, p.n, p.k, static_cast<T>(p.alpha), a.data(), lda, b.data(), ldb,
          static_cast<T>(p.beta), c.data(), ldc, panel_bytes);
    }
  }
  if (panel_bytes == 0) {
    gemm<T>(p.trans_a, p.trans_b, p.m, p.n, p.k, static_cast<T>(p.alpha), a.data(), lda, b.data(),
            ldb, static_cast<T>(p.beta), c.data(), ldc);
  }

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
  // 4 x 4 x 1 to 16 x 16 x 32 take Note [Tiny products]'s loop (up to its 8192 multiply-adds;
  // 27 columns: a block of 16, one of 8 and 3 left over; b plain and transposed), 16 x 16 x 33
  // the libraries just above it.
  const std::int64_t sizes[][3] = {{1, 1, 1},    {3, 5, 7},   {4, 4, 1},     {8, 8, 8},
                                   {4, 27, 8},   {1, 64, 64}, {64, 64, 1},   {16, 16, 32},
                                   {16, 16, 33}, {17, 33, 9}, {64, 10, 128}, {65, 127, 33}};
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

// Runs f() under each backend at 1 and 2 threads (traced), until f fails fatally; then puts the
// thread count back.
template <typename F>
void at_each_backend_and_thread_count(const F& f) {
  const int saved = get_num_threads();
  for (ops::CpuGemmBackend backend : backends()) {
    SCOPED_TRACE(name(backend));
    const ops::CpuGemmBackendGuard guard(backend);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      set_num_threads(threads);
      f();
      if (::testing::Test::HasFatalFailure()) break;
    }
    if (::testing::Test::HasFatalFailure()) break;
  }
  set_num_threads(saved);
}

// The last two are products gemm copies b^T for first where oneDNN generates AVX-512 code (b of at
// least 512K elements, 16 to 64 rows of a; Note [oneDNN's sgemm with b transposed]), here through
// gemm and its choice.
TEST(Gemm, LargeProductsMatchAtOneAndTwoThreads) {
  at_each_backend_and_thread_count([] {
    expect_gemm_matches<float>({false, true, 200, 310, 257, 0, 0, 0, 1.0, 0.0}, 40);
    expect_gemm_matches<float>({true, false, 129, 64, 784, 0, 0, 0, 1.0, 1.0}, 43);
    expect_gemm_matches<float>({false, true, 32, 1030, 520, 0, 3, 2, 1.0, 0.5}, 46);
    expect_gemm_matches<float>({true, true, 20, 1030, 512, 1, 0, 0, -1.0, 0.0}, 49);
  });
}

// oneDNN's product with b transposed into panels first (Note [oneDNN's sgemm with b transposed]
// in kernels/onednn/onednn_gemm.cpp), called directly, so it runs on every CPU and not only where
// gemm takes it: panels of 16 columns (the smallest), of 32, and as wide as a thread's share of
// n, the last one narrower, some wider than n; with a transposed, leading dimensions past the
// rows, alpha and beta; at 1 and 2 threads.
TEST(Gemm, OneDnnWithBTransposedFirstMatchesInEveryPanelWidth) {
  if (!kernels::cpu::onednn::built()) GTEST_SKIP() << "built without oneDNN";
  const int saved = get_num_threads();
  std::uint32_t seed = 300;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    set_num_threads(threads);
    for (bool ta : {false, true}) {
      for (const auto& s :
           {std::array<std::int64_t, 3>{40, 100, 64}, std::array<std::int64_t, 3>{17, 75, 300},
            std::array<std::int64_t, 3>{20, 5, 7}}) {
        const std::int64_t k = s[2];
        // panel bounds: the smallest panel (16 columns), 32 columns, a thread's share of n.
        for (std::int64_t panel_bytes : {std::int64_t{1}, 32 * k * 4, std::int64_t{1} << 22}) {
          SCOPED_TRACE("panel_bytes=" + std::to_string(panel_bytes));
          expect_gemm_matches<float>({ta, true, s[0], s[1], k, 0, 0, 0, 1.0, 0.0}, seed,
                                     panel_bytes);
          expect_gemm_matches<float>({ta, true, s[0], s[1], k, 3, 1, 2, 1.0, 1.0}, seed + 1,
                                     panel_bytes);
          expect_gemm_matches<float>({ta, true, s[0], s[1], k, 0, 2, 5, -0.5, 0.25}, seed + 2,
                                     panel_bytes);
          seed += 3;
          if (::testing::Test::HasFatalFailure()) break;
        }
      }
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

std::atomic<long> g_signals_handled{0};

extern "C" void count_signal(int /*signal_number*/) {
  g_signals_handled.fetch_add(1, std::memory_order_relaxed);
}

// While another thread sends SIGUSR1 to the process without pause (a handler installed, as
// leangrad-train's Ctrl-C handler or a sampling profiler installs one), products of changing
// shapes and transposes run on this thread at 1 and 2 threads, each backend. oneDNN 2.6.3's
// generated kernels corrupt the heap when a signal is handled inside them (Note [Signals and
// oneDNN's GEMM kernels]): without gemm()'s signal mask this aborts within a few hundred products
// ("corrupted size vs. prev_size"). Operands of 0.5 and 0.25 make every entry 0.125 k exactly,
// in any summation order; the storm must have reached the process.
TEST(GemmUnderSignals, ProductsKeepTheirResultsAndTheHeap) {
  struct sigaction action {};
  struct sigaction previous {};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ASSERT_EQ(::sigaction(SIGUSR1, &action, &previous), 0);
  g_signals_handled = 0;
  std::atomic<bool> stop{false};
  const pthread_t runner = pthread_self();
  std::thread sender([&] {
    for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      if (i % 2 == 0) {
        ::kill(::getpid(), SIGUSR1);  // to the process: any thread that does not block it
      } else {
        pthread_kill(runner, SIGUSR1);  // to the thread running the products
      }
    }
  });
  // Under a sanitizer (testing/sanitized.h) 120 products each, at -O1 with every access checked.
  constexpr std::int64_t kProducts = test::kSanitized ? 120 : 600;
  at_each_backend_and_thread_count([] {
    for (std::int64_t it = 0; it < kProducts; ++it) {
      const std::int64_t m = 1 + it * 37 % 400, n = 1 + it * 11 % 200, k = 1 + it * 53 % 300;
      const bool trans_b = it % 2 == 1;
      const std::vector<float> a(static_cast<std::size_t>(m * k), 0.5f);
      const std::vector<float> b(static_cast<std::size_t>(k * n), 0.25f);
      std::vector<float> c(static_cast<std::size_t>(m * n), NAN);
      gemm<float>(false, trans_b, m, n, k, 1.0f, a.data(), k, b.data(), trans_b ? k : n, 0.0f,
                  c.data(), n);
      const float expected = 0.125f * static_cast<float>(k);
      for (std::size_t i = 0; i < c.size(); ++i)
        ASSERT_EQ(c[i], expected) << "m=" << m << " n=" << n << " k=" << k << " at " << i;
    }
  });
  // The sender stops however the products went (a failed ASSERT leaves only the lambda).
  stop = true;
  sender.join();
  ::sigaction(SIGUSR1, &previous, nullptr);
  EXPECT_GT(g_signals_handled.load(), 100) << "the signals did not arrive";
}

}  // namespace
}  // namespace leangrad
