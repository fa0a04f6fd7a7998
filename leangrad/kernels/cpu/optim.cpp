// The reference loops of the CPU optimizer steps (kernels/cpu/optim_reference.h): for each tensor,
// its scalars for this launch (resolve_step: the host's, or computed from its step net of skipped
// ones, or none when found_inf skips the step; Note [Gated step]), then parallel_for over its
// elements, gathering the streams of one element into registers, calling the shared update
// functor of kernels/optim_math.h and scattering the results. Adam8bit goes block by block
// (kernels/quantization_math.h). Deliberately plain: these loops are the specification the
// vectorised CPU kernels (kernels/cpu/optim_vectorized.cpp, the launchers the library runs) and
// the CUDA kernels are tested against. Then the launchers of clip_grad_norm_ and of the gradient
// scaling of amp::GradScaler, which have only this one CPU kernel.
#include <leangrad/kernels/cpu/optim_reference.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/quantization_math.h>

namespace leangrad::kernels::cpu {

QuantMaps::QuantMaps() {
  for (int c = 0; c < kQuantCodes; ++c) {
    signed_map[c] = dynamic_map_value(c, true);
    unsigned_map[c] = dynamic_map_value(c, false);
  }
  for (int c = 0; c + 1 < kQuantCodes; ++c) {
    signed_thresholds[c] = midpoint_threshold(signed_map[c], signed_map[c + 1]);
    unsigned_thresholds[c] = midpoint_threshold(unsigned_map[c], unsigned_map[c + 1]);
  }
}

const QuantMaps& quant_maps() {
  static const QuantMaps maps;
  return maps;
}

namespace reference {
namespace {

// Every element of every tensor through `update` (none when found_inf skips the step); returns
// true when an element was skipped for its non-finite gradient (or second moment).
template <typename Update>
bool apply_update(const Update& update, const std::vector<OptimTensor<Update>>& tensors,
                  const int* found_inf) {
  constexpr int kStreams = Update::kNumStreams;
  using T = typename Update::Scalar;
  using M = typename Update::Math;
  std::atomic<bool> skipped{false};
  for (const OptimTensor<Update>& t : tensors) {
    typename Update::TensorScalars scalars;
    if (!resolve_step(update, t, found_inf, /*owner=*/true, &scalars)) continue;
    parallel_for(t.numel, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
      bool local_skipped = false;
      for (std::int64_t i = begin; i < end; ++i) {
        M x[kStreams];
        for (int k = 0; k < kStreams; ++k)
          x[k] = t.data[k] != nullptr ? static_cast<M>(t.data[k][i]) : M(0);
        local_skipped |= !update(scalars, x);
        for (int k = 0; k < kStreams; ++k)
          if (k != kGradSlot && t.data[k] != nullptr) t.data[k][i] = static_cast<T>(x[k]);
      }
      if (local_skipped) skipped.store(true, std::memory_order_relaxed);
    });
  }
  return skipped.load();
}

// One block of Adam8bit: elements [begin, end) of t, block index `block`. A skipped (NaN/Inf
// gradient) element keeps its parameter and the dequantised moments, which are requantised with
// the block's new absmax like every other element.
bool adam8bit_block(const AdamUpdate& update, const AdamUpdate::TensorScalars& scalars,
                    const Adam8bitTensor& t, std::int64_t block, const QuantMaps& maps) {
  const std::int64_t begin = block * kQuantBlockSize;
  const int count = static_cast<int>(std::min<std::int64_t>(kQuantBlockSize, t.numel - begin));
  const float old_absmax1 = t.absmax1[block];
  const float old_absmax2 = t.absmax2[block];
  float m[kQuantBlockSize];
  float v[kQuantBlockSize];
  float new_absmax1 = 0.0f;
  float new_absmax2 = 0.0f;
  bool skipped = false;
  for (int j = 0; j < count; ++j) {
    const std::int64_t i = begin + j;
    float x[AdamUpdate::kNumStreams] = {
        t.param[i], t.grad[i], dequantize_state(maps.signed_map.data(), t.state1[i], old_absmax1),
        dequantize_state(maps.unsigned_map.data(), t.state2[i], old_absmax2), 0.0f};
    skipped |= !update(scalars, x);
    t.param[i] = x[kParamSlot];
    m[j] = x[2];
    v[j] = x[3];
    new_absmax1 = std::max(new_absmax1, std::fabs(m[j]));
    new_absmax2 = std::max(new_absmax2, v[j]);
  }
  t.absmax1[block] = new_absmax1;
  t.absmax2[block] = new_absmax2;
  const float inv1 = inverse_absmax(new_absmax1);
  const float inv2 = inverse_absmax(new_absmax2);
  for (int j = 0; j < count; ++j) {
    t.state1[begin + j] = quantize_state(maps.signed_thresholds.data(), m[j], inv1, true);
    t.state2[begin + j] = quantize_state(maps.unsigned_thresholds.data(), v[j], inv2, false);
  }
  return skipped;
}

void flag_nonfinite(bool skipped, int* skipped_nonfinite) {
  if (skipped && skipped_nonfinite != nullptr) *skipped_nonfinite = 1;
}

}  // namespace

template <typename T>
void sgd_step(const SgdUpdateOf<T>& update, const std::vector<OptimTensor<SgdUpdateOf<T>>>& tensors,
              const int* found_inf) {
  apply_update(update, tensors, found_inf);
}

template <typename T>
void adam_step(const AdamUpdateOf<T>& update,
               const std::vector<OptimTensor<AdamUpdateOf<T>>>& tensors, const int* found_inf,
               int* skipped_nonfinite) {
  flag_nonfinite(apply_update(update, tensors, found_inf), skipped_nonfinite);
}

template <typename T>
void radam_step(const RAdamUpdateOf<T>& update,
                const std::vector<OptimTensor<RAdamUpdateOf<T>>>& tensors, const int* found_inf) {
  apply_update(update, tensors, found_inf);
}

#define LG_INSTANTIATE_REFERENCE_STEPS(T)                                                         \
  template void sgd_step<T>(const SgdUpdateOf<T>&,                                                \
                            const std::vector<OptimTensor<SgdUpdateOf<T>>>&, const int*);         \
  template void adam_step<T>(const AdamUpdateOf<T>&,                                              \
                             const std::vector<OptimTensor<AdamUpdateOf<T>>>&, const int*, int*); \
  template void radam_step<T>(const RAdamUpdateOf<T>&,                                            \
                              const std::vector<OptimTensor<RAdamUpdateOf<T>>>&, const int*);
LG_INSTANTIATE_REFERENCE_STEPS(float)
LG_INSTANTIATE_REFERENCE_STEPS(double)
LG_INSTANTIATE_REFERENCE_STEPS(Half)
LG_INSTANTIATE_REFERENCE_STEPS(BFloat16)
#undef LG_INSTANTIATE_REFERENCE_STEPS

void adam8bit_step(const AdamUpdate& update, const std::vector<Adam8bitTensor>& tensors,
                   const int* found_inf, int* skipped_nonfinite) {
  const QuantMaps& maps = quant_maps();
  std::atomic<bool> skipped{false};
  for (const Adam8bitTensor& t : tensors) {
    AdamUpdate::TensorScalars scalars;
    if (!resolve_step(update, t, found_inf, /*owner=*/true, &scalars)) continue;
    const std::int64_t num_blocks = (t.numel + kQuantBlockSize - 1) / kQuantBlockSize;
    const std::int64_t grain = kElementwiseGrain / kQuantBlockSize;
    parallel_for(num_blocks, grain, [&](std::int64_t begin, std::int64_t end) {
      bool local_skipped = false;
      for (std::int64_t b = begin; b < end; ++b)
        local_skipped |= adam8bit_block(update, scalars, t, b, maps);
      if (local_skipped) skipped.store(true, std::memory_order_relaxed);
    });
  }
  flag_nonfinite(skipped.load(), skipped_nonfinite);
}

}  // namespace reference

template <typename T>
void grad_norm(const std::vector<GradSpanOf<T>>& grads, opmath_t<T> norm_type,
               opmath_t<T>* total_norm) {
  using M = opmath_t<T>;
  // Fixed chunks summed in a fixed order: the same total for any number of threads.
  constexpr std::int64_t kChunk = 16384;
  const bool inf_norm = std::isinf(norm_type);
  double total = 0.0;
  for (const GradSpanOf<T>& g : grads) {
    const std::int64_t num_chunks = (g.numel + kChunk - 1) / kChunk;
    std::vector<double> partial(static_cast<std::size_t>(num_chunks), 0.0);
    parallel_for(num_chunks, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t c = begin; c < end; ++c) {
        double acc = 0.0;
        const std::int64_t stop = std::min(g.numel, (c + 1) * kChunk);
        for (std::int64_t i = c * kChunk; i < stop; ++i) {
          const M x = static_cast<M>(g.data[i]);
          if (inf_norm) {
            acc = max_propagating_nan(acc, static_cast<double>(std::fabs(x)));
          } else {
            acc += norm_term(x, norm_type);
          }
        }
        partial[static_cast<std::size_t>(c)] = acc;
      }
    });
    for (double p : partial)
      total = inf_norm ? max_propagating_nan(total, p) : total + p;
  }
  *total_norm = static_cast<M>(inf_norm ? total : std::pow(total, 1.0 / norm_type));
}

template <typename T>
void clip_grads(const std::vector<GradSpanOf<T>>& grads, opmath_t<T> max_norm,
                const opmath_t<T>* total_norm) {
  using M = opmath_t<T>;
  const M coef = clip_coefficient(max_norm, *total_norm);
  for (const GradSpanOf<T>& g : grads) {
    parallel_for(g.numel, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        g.data[i] = static_cast<T>(static_cast<M>(g.data[i]) * coef);
    });
  }
}

#define LG_INSTANTIATE_CLIP(T)                                                              \
  template void grad_norm<T>(const std::vector<GradSpanOf<T>>&, opmath_t<T>, opmath_t<T>*); \
  template void clip_grads<T>(const std::vector<GradSpanOf<T>>&, opmath_t<T>, const opmath_t<T>*);
LG_INSTANTIATE_CLIP(float)
LG_INSTANTIATE_CLIP(double)
LG_INSTANTIATE_CLIP(Half)
LG_INSTANTIATE_CLIP(BFloat16)
#undef LG_INSTANTIATE_CLIP

void unscale_and_check_finite(const std::vector<GradSpan>& grads, const float* scale,
                              int* found_inf) {
  const float inv_scale = inverse_scale(*scale);
  std::atomic<bool> nonfinite{false};
  for (const GradSpan& g : grads) {
    parallel_for(g.numel, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
      bool local_nonfinite = false;
      for (std::int64_t i = begin; i < end; ++i)
        g.data[i] = unscale_element(g.data[i], inv_scale, &local_nonfinite);
      if (local_nonfinite) nonfinite.store(true, std::memory_order_relaxed);
    });
  }
  if (nonfinite.load()) *found_inf = 1;
}

void update_scale(float* scale, int* growth_tracker, const int* found_inf, double growth_factor,
                  double backoff_factor, int growth_interval) {
  update_scale_state(scale, growth_tracker, *found_inf, growth_factor, backoff_factor,
                     growth_interval);
}

}  // namespace leangrad::kernels::cpu
