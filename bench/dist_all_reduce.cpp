// dist_all_reduce: the Gloo process group's all_reduce (float32, sum) timed against message size,
// and the fixed cost of one collective (a barrier: the progress records of entering and
// completing it and the signature exchange, no data). One rank of a job: start it with a launcher,
// e.g.
//   build/tools/leangrad-run --nproc-per-node 2 build/bench/dist_all_reduce
// Rank 0 prints the table: median and minimum time of `repeats` calls, algorithm bandwidth
// (bytes / median time) and bus bandwidth as nccl-tests defines it for all-reduce
// (algbw * 2 (n - 1) / n: what each link carries), which is comparable across rank counts.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/kernels/creation.h>

namespace dist = leangrad::distributed;

namespace {

double median_seconds(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

double min_seconds(const std::vector<double>& samples) {
  return *std::min_element(samples.begin(), samples.end());
}

}  // namespace

int main() {
  dist::init_process_group(dist::Backend::Gloo);
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  using Clock = std::chrono::steady_clock;

  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) {
    dist::barrier();
    const auto start = Clock::now();
    dist::barrier();
    samples.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (rank == 0) {
    std::printf(
        "ranks %d, barrier (progress records + signature all-gather): median %.1f us, "
        "min %.1f us\n\n",
        size, median_seconds(samples) * 1e6, min_seconds(samples) * 1e6);
    std::printf("%12s %12s %12s %12s %12s\n", "bytes", "median (us)", "min (us)", "algbw (GB/s)",
                "busbw (GB/s)");
  }
  for (std::int64_t bytes = 4; bytes <= (std::int64_t{64} << 20); bytes *= 4) {
    leangrad::Tensor t = leangrad::ones({bytes / 4});
    const int repeats = bytes <= (1 << 20) ? 50 : 10;
    samples.clear();
    dist::all_reduce(t);  // warm-up
    for (int i = 0; i < repeats; ++i) {
      dist::barrier();
      const auto start = Clock::now();
      dist::all_reduce(t);
      samples.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    const double seconds = median_seconds(samples);
    const double algbw = static_cast<double>(bytes) / seconds / 1e9;
    if (rank == 0) {
      std::printf("%12lld %12.1f %12.1f %12.3f %12.3f\n", static_cast<long long>(bytes),
                  seconds * 1e6, min_seconds(samples) * 1e6, algbw,
                  algbw * 2.0 * (size - 1) / size);
    }
  }
  dist::destroy_process_group();
  return 0;
}
