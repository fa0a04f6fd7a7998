// test::expect_float_sweep: the exhaustive sweeps over float bit patterns (every float through a
// kernel and its plain reference), on every core, each thread reporting the first failure it
// found.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <ios>
#include <thread>
#include <vector>

namespace leangrad::test {

// The failures one thread of a sweep found: how many, and the bit pattern of the first.
struct SweepFailures {
  std::int64_t count = 0;
  std::uint32_t first = 0;
  void add(std::uint32_t bits) {
    if (count++ == 0) first = bits;
  }
};

// Indices [0, count) in runs of `run` consecutive indices (the last may be shorter), one run in
// every `stride` (test::kSweepStride: all of them, or a subset under a sanitizer), split into one
// contiguous range of runs per hardware thread: check(first, n, failures) for each run, which
// adds the bit pattern of each failing value to `failures`. Then expects that no thread found a
// failure, naming the first float each one found. The caller maps an index to its bit pattern
// (the identity over all 2^32 floats).
template <typename Check>
void expect_float_sweep(std::uint64_t count, std::uint64_t run, std::uint64_t stride,
                        const Check& check) {
  const unsigned num_threads = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t runs = (count + run - 1) / run;
  std::vector<SweepFailures> failures(num_threads);
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < num_threads; ++w) {
    workers.emplace_back([&, w] {
      for (std::uint64_t r = runs * w / num_threads; r < runs * (w + 1) / num_threads;
           r += stride) {
        const std::uint64_t first = r * run;
        check(first, std::min(run, count - first), failures[w]);
      }
    });
  }
  for (std::thread& t : workers)
    t.join();
  for (const SweepFailures& f : failures)
    EXPECT_EQ(f.count, 0) << "first at x = " << std::bit_cast<float>(f.first) << " (bits "
                          << std::hex << f.first << ")";
}

}  // namespace leangrad::test
