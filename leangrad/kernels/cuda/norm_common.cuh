// What GroupNorm's and LayerNorm's CUDA kernels share (kernels/cuda/group_norm.cu,
// kernels/cuda/layer_norm.cu): the Welford merge as a block-reduction functor, the per-channel
// (per-feature) weight and bias gradient pair of their column reductions, and the choice between
// 16-byte vector loads and scalar ones.
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
