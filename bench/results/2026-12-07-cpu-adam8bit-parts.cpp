// What bounds Adam8bit's CPU step (issue 17's target: no slower than float32 Adam): the parts of
// kernels/cpu/optim_vectorized.cpp's permute kernel (adam8bit_blocks_permute) timed alone and
// together on one block of 256 elements that stays in L1, one thread, ns per element:
//   update    Adam's update of 256 elements (kernels/optim_math.h's functor in 16-float lanes, the
//             block maxima kept, as update_quarter), in four quarters of 64, the maxima taken in
//             the update's loop or in a second loop;
//   divisions the update's sqrt, divide, add, divide chain alone (its other ops dropped);
//   lookups   the four byte-permute lookups of kernels/cpu/quant_permute.h (quantise m and v of
//             one block, dequantise m and v of another);
//   update + lookups, divisions + lookups: both, in the kernel's order (a quarter of the update,
//             then one lookup, four times).
// If the divider were what the update waits for, the lookups would run beside it (the kernel
// interleaves them for that); the sums show how much does. The note beside this file has the
// numbers (2026-12-07-cpu-adam8bit-parts-zen4-2core.md). The compile flags are the library's for
// kernels/cpu/optim_vectorized.cpp; AVX-512 VBMI is required (the lookups' byte permutes).
//   g++ -O3 -march=x86-64-v3 -ffp-contract=off -fno-trapping-math -fno-math-errno -std=c++20 \
//     -I. -Ibuild/generated -Ibench/results bench/results/2026-12-07-cpu-adam8bit-parts.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/adam8bit-parts && /tmp/adam8bit-parts
#include <leangrad/kernels/cpu/quant_permute.h>
#include <leangrad/kernels/optim_math.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "best_of.h"

namespace {

using leangrad::kernels::AdamUpdate;
using leangrad::kernels::cpu::QuantPermuteTables;
namespace qp = leangrad::kernels::cpu::quant_permute;

constexpr int kBlock = 256;
constexpr int kLanes = 16;
constexpr int kRepeats = 4096;  // blocks per timed call

struct Block {
  alignas(64) float param[kBlock], grad[kBlock], m[kBlock], v[kBlock];
  // The lookups' operands: moments to quantise (codes out), codes to dequantise (moments out).
  alignas(64) float m_in[kBlock], v_in[kBlock], m_out[kBlock], v_out[kBlock];
  alignas(64) std::uint8_t codes_m[kBlock], codes_v[kBlock], codes_m_in[kBlock], codes_v_in[kBlock];
  alignas(64) float max_m[kLanes], max_v[kLanes];
};

#define PARTS_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))

// A quarter of the update, as update_quarter: Adam's functor with the kernel's constant options
// (no amsgrad, no weight decay, NaN/Inf skipping), the maxima of |m| and v per lane, taken in the
// update's loop (kApart false: the kernel's way) or in a second loop over the quarter's new m and
// v (kApart true: tried in the kernel, where it gained nothing measurable; see the note).
template <bool kApart>
PARTS_TARGET inline int update_quarter(AdamUpdate update, AdamUpdate::TensorScalars scalars,
                                       Block& b, int first) {
  update.amsgrad = false;
  update.decoupled_weight_decay = false;
  update.skip_nonfinite = true;
  scalars.weight_decay = 0.0f;
  float max1[kLanes], max2[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    max1[l] = b.max_m[l];
    max2[l] = b.max_v[l];
  }
  int skipped = 0;
  for (int j0 = first; j0 < first + kBlock / 4; j0 += kLanes) {
#pragma GCC ivdep
    for (int l = 0; l < kLanes; ++l) {
      const int j = j0 + l;
      float x[AdamUpdate::kNumStreams] = {b.param[j], b.grad[j], b.m[j], b.v[j], 0.0f};
      skipped |= update(scalars, x) ? 0 : 1;
      b.param[j] = x[0];
      b.m[j] = x[2];
      b.v[j] = x[3];
      if constexpr (!kApart) {
        const float a = std::fabs(x[2]);
        max1[l] = max1[l] < a ? a : max1[l];
        max2[l] = max2[l] < x[3] ? x[3] : max2[l];
      }
    }
  }
  if constexpr (kApart) {
    for (int j0 = first; j0 < first + kBlock / 4; j0 += kLanes) {
#pragma GCC unroll 1
      for (int l = 0; l < kLanes; ++l) {
        const float a = std::fabs(b.m[j0 + l]);
        max1[l] = max1[l] < a ? a : max1[l];
        max2[l] = max2[l] < b.v[j0 + l] ? b.v[j0 + l] : max2[l];
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    b.max_m[l] = max1[l];
    b.max_v[l] = max2[l];
  }
  return skipped;
}

// The update's chain of long-latency operations alone: sqrt(v) / c + eps, then m / that.
PARTS_TARGET inline void divisions_quarter(Block& b, int first) {
  const float c = 0.0316f, eps = 1e-8f;
#pragma GCC ivdep
  for (int j = first; j < first + kBlock / 4; ++j)
    b.param[j] = b.m[j] / (std::sqrt(b.v[j]) / c + eps);
}

PARTS_TARGET inline void lookup(const QuantPermuteTables& t, Block& b, int which) {
  switch (which) {
    case 0:
      qp::quantize_signed(t, b.m_in, 1.0f, b.codes_m);
      break;
    case 1:
      qp::quantize_unsigned(t, b.v_in, 1.0f, b.codes_v);
      break;
    case 2:
      qp::dequantize_signed(t, b.codes_m_in, 0.5f, b.m_out);
      break;
    default:
      qp::dequantize_unsigned(t, b.codes_v_in, 0.5f, b.v_out);
      break;
  }
}

enum class Part {
  Update,
  UpdateApart,
  Divisions,
  Lookups,
  UpdateAndLookups,
  UpdateApartAndLookups,
  DivisionsAndLookups
};

PARTS_TARGET int run(Part part, const AdamUpdate& update, const AdamUpdate::TensorScalars& s,
                     const QuantPermuteTables& t, Block& b) {
  int skipped = 0;
  for (int r = 0; r < kRepeats; ++r) {
    for (int q = 0; q < 4; ++q) {
      if (part == Part::Update || part == Part::UpdateAndLookups)
        skipped |= update_quarter<false>(update, s, b, q * kBlock / 4);
      if (part == Part::UpdateApart || part == Part::UpdateApartAndLookups)
        skipped |= update_quarter<true>(update, s, b, q * kBlock / 4);
      if (part == Part::Divisions || part == Part::DivisionsAndLookups)
        divisions_quarter(b, q * kBlock / 4);
      if (part == Part::Lookups || part == Part::UpdateAndLookups ||
          part == Part::UpdateApartAndLookups || part == Part::DivisionsAndLookups)
        lookup(t, b, q);
    }
    // The update's moments stay bounded: the kernel requantises them every step.
    if (r % 64 == 63) {
      for (int j = 0; j < kBlock; ++j) {
        b.m[j] = b.m_in[j];
        b.v[j] = b.v_in[j];
      }
    }
  }
  return skipped;
}

}  // namespace

int main() {
  if (!leangrad::kernels::cpu::quant_permute_supported()) {
    std::printf("this CPU has no AVX-512 VBMI: the permute kernel does not run here\n");
    return 0;
  }
  static Block b;
  for (int j = 0; j < kBlock; ++j) {
    b.param[j] = 0.01f * static_cast<float>(j % 17) - 0.08f;
    b.grad[j] = 0.001f * static_cast<float>(j % 23) - 0.011f;
    b.m_in[j] = b.m[j] = 0.0001f * static_cast<float>(j % 29) - 0.0014f;
    b.v_in[j] = b.v[j] = 1e-7f * static_cast<float>(j % 31);
    b.codes_m_in[j] = static_cast<std::uint8_t>(j * 7 % 256);
    b.codes_v_in[j] = static_cast<std::uint8_t>(j * 11 % 256);
  }
  const AdamUpdate update = AdamUpdate::make(0.9, 0.999, 1e-8, false, false, true);
  const AdamUpdate::TensorScalars scalars = update.scalars_at(1e-3, 0.0, 1);
  const QuantPermuteTables& tables = leangrad::kernels::cpu::quant_permute_tables();
  const struct {
    const char* name;
    Part part;
  } parts[] = {{"update, maxima in its loop", Part::Update},
               {"update, maxima in a second loop", Part::UpdateApart},
               {"divisions", Part::Divisions},
               {"lookups", Part::Lookups},
               {"update (maxima in its loop) + lookups", Part::UpdateAndLookups},
               {"update (maxima in a second loop) + lookups", Part::UpdateApartAndLookups},
               {"divisions + lookups", Part::DivisionsAndLookups}};
  int skipped = 0;
  std::printf("| part (one block of 256 in L1, 1 thread) | ns per element |\n| --- | ---: |\n");
  for (const auto& p : parts) {
    const double ms =
        best_of_ms(15, 3, [&] { skipped |= run(p.part, update, scalars, tables, b); });
    std::printf("| %s | %.3f |\n", p.name, ms * 1e6 / (static_cast<double>(kRepeats) * kBlock));
  }
  return skipped;  // 0: every element was finite
}
