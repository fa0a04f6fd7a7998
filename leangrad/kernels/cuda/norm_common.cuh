// What the normalizations' CUDA kernels share (kernels/cuda/group_norm.cu, layer_norm.cu,
// batch_norm.cu): the Welford merge as a block-reduction functor, the backward's sums of dy and
// dy (x - mean) with theirs, the per-channel (per-feature) weight and bias gradient pair of
// their column reductions, and the choice between 16-byte vector loads and scalar ones.
#pragma once

#include <cstdint>

#include <leangrad/kernels/group_norm_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

struct WelfordMerge {
  template <typename Acc>
  __device__ WelfordState<Acc> operator()(const WelfordState<Acc>& a,
                                          const WelfordState<Acc>& b) const {
    return welford_merge(a, b);
  }
};

// The backward's sums over a run of one group's or channel's values: sum dy and
// sum dy (x - mean) (Note [GroupNorm layout and math], Note [BatchNorm layout and math]).
template <typename Acc>
struct DySums {
  Acc dy = Acc(0);
  Acc dy_centred = Acc(0);
};

struct DySumsMerge {
  template <typename Acc>
  __device__ DySums<Acc> operator()(const DySums<Acc>& a, const DySums<Acc>& b) const {
    return {a.dy + b.dy, a.dy_centred + b.dy_centred};
  }
};

// One channel's (feature's) weight and bias gradients over a chunk of the batch (rows).
template <typename Acc>
struct WeightBiasGrad {
  Acc weight;
  Acc bias;
};

// Calls f.template operator()<kWidth>() with the 16-byte vector width of T when runs of `length`
// elements are whole vectors and the pointers are aligned (`aligned`), else with width 1.
template <typename T, typename F>
void with_vector_width(std::int64_t length, bool aligned, const F& f) {
  constexpr int kWidth = kVectorWidth<T>;
  if (aligned && length % kWidth == 0) {
    f.template operator()<kWidth>();
  } else {
    f.template operator()<1>();
  }
}

}  // namespace leangrad::kernels::cuda
