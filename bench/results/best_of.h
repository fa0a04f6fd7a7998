// The timing of the results programs (bench/results/*.cpp), leangrad's sides and LibTorch's
// alike, so that both are measured the same way: the least wall time, in ms, of `calls` calls of
// f, after `warm_up` calls that are not counted. Included by its own path ("best_of.h"), so the
// compile commands in the programs' headers need no include folder for it.
#pragma once

#include <algorithm>
#include <chrono>

template <typename F>
double best_of_ms(int calls, int warm_up, const F& f) {
  for (int i = 0; i < warm_up; ++i)
    f();
  double best = 1e300;
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
  }
  return best;
}
