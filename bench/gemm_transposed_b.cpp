// oneDNN's sgemm on c = a b^T with b^T read in place, beside the same product with b^T copied
// into panels first (Note [oneDNN's sgemm with b transposed] in kernels/onednn/onednn_gemm.cpp):
// the grid of b's shapes and a's rows behind the rule that picks between them. Each time is the
// median of 5 batches of at least 100 products, at the thread count of OMP_NUM_THREADS.
//   OMP_NUM_THREADS=2 build/bench/gemm_transposed_b
// Prints a markdown table. Built only with oneDNN.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <leangrad/core/parallel.h>
#include <leangrad/kernels/cpu/gemm.h>

namespace {

template <typename F>
double median_us(const F& product, std::int64_t flops) {
  const std::int64_t reps = std::max<std::int64_t>(100, 300'000'000 / (flops + 1));
  for (int i = 0; i < 3; ++i)
    product();
  std::vector<double> batches;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < reps; ++i)
      product();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    batches.push_back(took.count() / static_cast<double>(reps));
  }
  std::sort(batches.begin(), batches.end());
  return batches[2];
}

}  // namespace

int main() {
  const std::int64_t shapes[][2] = {{2048, 512}, {512, 2048}, {1024, 1024}, {4096, 1024},
                                    {512, 784},  {256, 256},  {128, 784},   {10, 512}};
  const std::int64_t rows[] = {8, 16, 32, 64, 128, 256, 512};
  std::printf("%d thread(s), oneDNN %d.%d.%d\n\n", leangrad::get_num_threads(),
              dnnl_version()->major, dnnl_version()->minor, dnnl_version()->patch);
  std::printf("| b (n, k) | m | b^T in place (us) | copied first (us) | in place / copied |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  for (const auto& shape : shapes) {
    const std::int64_t n = shape[0], k = shape[1];
    for (const std::int64_t m : rows) {
      std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(n * k)),
          c(static_cast<std::size_t>(m * n));
      for (std::size_t i = 0; i < a.size(); ++i)
        a[i] = static_cast<float>(i % 13) * 0.1f;
      for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<float>(i % 7) * 0.1f;
      const std::int64_t flops = 2 * m * n * k;
      const double in_place = median_us(
          [&] { dnnl_sgemm('N', 'T', m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n); },
          flops);
      const double copied = median_us(
          [&] {
            leangrad::kernels::cpu::onednn::sgemm_b_transposed_first(false, m, n, k, 1.0f, a.data(),
                                                                     k, b.data(), k, 0.0f, c.data(),
                                                                     n, std::int64_t{256} << 10);
          },
          flops);
      std::printf("| (%lld, %lld) | %lld | %.1f | %.1f | %.2f |\n", static_cast<long long>(n),
                  static_cast<long long>(k), static_cast<long long>(m), in_place, copied,
                  in_place / copied);
    }
  }
}
