// sum_of_lanes: the sum of a vectorised kernel's running lanes, in one fixed order (a tree of
// halves), so that a kernel's result does not depend on the vector width the compiler chose
// (GroupNorm's statistics, softmax's sums: Note [Vectorised GroupNorm], Note [Vectorised
// softmax]). The lanes are overwritten.
#pragma once

namespace leangrad::kernels::cpu {

template <typename Acc, int N>
Acc sum_of_lanes(Acc (&lanes)[N]) {
  static_assert(N > 0 && (N & (N - 1)) == 0, "a power of two lanes");
  for (int width = N / 2; width >= 1; width /= 2)
    for (int l = 0; l < width; ++l)
      lanes[l] += lanes[l + width];
  return lanes[0];
}

}  // namespace leangrad::kernels::cpu
