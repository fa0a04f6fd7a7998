// LayerNorm's CPU launchers (kernels/backend.h, "LayerNorm"): statistics in SIMD lanes, one fused
// normalise + affine pass, a two-pass backward that also gathers the weight and bias gradients,
// threaded over rows. The second CPU kernel beside the reference loops of
// kernels/cpu/layer_norm.cpp, which stay the specification:
// tests/kernels/test_layer_norm_vectorized.cpp checks these against them.
//
// Note [Vectorised LayerNorm]
//   Layout and formulas: Note [LayerNorm layout and math] (kernels/group_norm_math.h). A row is
//   M contiguous elements, normalized with its own statistics; the affine map is per feature m.
//   - Forward, per row: the statistics by chunks of 2048 elements (kernels/cpu/norm_statistics.h,
//     GroupNorm's: a two-pass variance per chunk in 32 partial sums, chunks merged with Chan's
//     formula), then y = ((x - mean) rstd) w[m] + b[m] (a multiply and a fused multiply-add)
//     while the row is in cache: x read from memory once, y written once. Before this kernel,
//     LayerNorm ran GroupNorm's kernel on (R, 1, M) and then an elementwise mul and add: three
//     passes over memory, and the normalized output saved for mul's backward (a second copy of
//     the activation kept for backward).
//   - Backward, per row: a = sum w dy and b = sum w dy (x - mean) in 32 partial sums (centred,
//     as GroupNorm's kernel: no cancellation when the mean is far from 0), the coefficients in
//     double (group_norm_input_grad_coefs_centred), then dx = (rstd w[m]) dy + x_coef (x - mean)
//     + c0, and, while dy and x are in cache, each feature's dy (x - mean) rstd and dy added to
//     the partial sums of the row's block. dweight and dbias sum the blocks' partials in order,
//     in double.
//   - Blocks: the rows are cut into blocks of at least kMinBlockRows rows, at most kMaxBlocks of
//     them and at most kPartialValues / M (the partials' memory: 2 kPartialValues values): a
//     cut fixed by R and M alone. Threads take whole blocks, and each block sums its rows in
//     order, so the gradients are the same bits at any thread count. (PyTorch's CPU kernel keeps
//     a partial per thread, so its dweight depends on the thread count.)
//   - Accumulation in opmath_t<T> (float for float32/16/bf16, double for float64). float16 and
//     bfloat16 rows are widened into a float buffer per task (kernels/cpu/half_convert.h), run
//     through the float32 loops and narrowed once: 16-bit LayerNorm is float32 LayerNorm of the
//     widened input, rounded once, bit for bit
//     (LayerNormVectorized.SixteenBitIsFloat32OfTheWidenedInput).
//   - Threads over rows (forward) or blocks (backward) only: a few very long rows run on a few
//     threads. This file is compiled with -ffp-contract=off, so the vector body and the scalar
//     tail round alike.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/lane_sums.h>
#include <leangrad/kernels/cpu/norm_statistics.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu {

namespace {

constexpr int kLanes = kStatisticsLanes;
// The backward's row blocks (Note [Vectorised LayerNorm]).
constexpr std::int64_t kMinBlockRows = 8;
constexpr std::int64_t kMaxBlocks = 256;
constexpr std::int64_t kPartialValues = std::int64_t{1} << 21;

// Rows go through float buffers (Note [Vectorised LayerNorm]).
template <typename T>
constexpr bool kWidened = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The affine parameters as Acc values: the tensor itself for float and double, widened otherwise;
// ones (weight) or zeros (bias) when there is none, which give the same bits as no affine map
// (x * 1 + 0 = x, exactly).
template <typename T, typename Acc>
class Parameter {
 public:
  Parameter(const void* p, std::int64_t features, Acc absent) {
    if constexpr (!kWidened<T>) {
      if (p != nullptr) {
        data_ = static_cast<const Acc*>(p);
        return;
      }
    }
    storage_.assign(static_cast<std::size_t>(features), absent);
    if constexpr (kWidened<T>) {
      if (p != nullptr) widen(static_cast<const T*>(p), storage_.data(), features);
    }
    data_ = storage_.data();
  }
  const Acc* data() const { return data_; }

 private:
  std::vector<Acc> storage_;
  const Acc* data_ = nullptr;
};

// y = ((x - mean) rstd) w + b over one row of n elements; y may be x.
template <typename U>
void normalise_row(U* y, const U* x, std::int64_t n, U mean, U rstd, const U* w, const U* b) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i)
    y[i] = std::fma((x[i] - mean) * rstd, w[i], b[i]);
}

// One row's backward (Note [Vectorised LayerNorm]): dx (unless null) and the row's terms added to
// the block's partials pw and pb (unless null). dx may be dy. The sums of dx's coefficients
// first, then one pass that writes dx and adds the partials.
template <typename U>
void backward_row(U* dx, const U* dy, const U* x, std::int64_t n, U mean, U rstd, const U* w, U* pw,
                  U* pb) {
  U x_coef = 0;
  U constant = 0;
  if (dx != nullptr) {
    U a[kLanes] = {};
    U b[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const U g = w[i + l] * dy[i + l];
        a[l] += g;
        b[l] = std::fma(g, x[i + l] - mean, b[l]);
      }
    for (int l = 0; i + l < n; ++l) {
      const U g = w[i + l] * dy[i + l];
      a[l] += g;
      b[l] = std::fma(g, x[i + l] - mean, b[l]);
    }
    const GroupInputGradCoefs<double> k =
        group_norm_input_grad_coefs_centred<double>(rstd, sum_of_lanes(a), sum_of_lanes(b), n);
    x_coef = static_cast<U>(k.x_coef);
    constant = static_cast<U>(k.const_coef);
  }
  if (dx != nullptr && pw != nullptr && pb != nullptr) {  // training with an affine map
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i) {
      const U g = dy[i];
      const U centred = x[i] - mean;
      pw[i] = std::fma(g, centred * rstd, pw[i]);
      pb[i] += g;
      dx[i] = std::fma(rstd * w[i], g, std::fma(x_coef, centred, constant));
    }
    return;
  }
  if (pw != nullptr) {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i)
      pw[i] = std::fma(dy[i], (x[i] - mean) * rstd, pw[i]);
  }
  if (pb != nullptr) {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i)
      pb[i] += dy[i];
  }
  if (dx != nullptr) {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i)
      dx[i] = std::fma(rstd * w[i], dy[i], std::fma(x_coef, x[i] - mean, constant));
  }
}

// The backward's cut of `rows` rows into blocks (Note [Vectorised LayerNorm]).
struct RowBlocks {
  std::int64_t rows_per_block;
  std::int64_t count;
};
RowBlocks row_blocks(std::int64_t rows, std::int64_t features) {
  const std::int64_t wanted =
      std::max<std::int64_t>(1, std::min({(rows + kMinBlockRows - 1) / kMinBlockRows, kMaxBlocks,
                                          kPartialValues / std::max<std::int64_t>(features, 1)}));
  const std::int64_t per_block = (rows + wanted - 1) / wanted;
  return {per_block, (rows + per_block - 1) / per_block};
}

}  // namespace

void layer_norm_forward(DType dtype, std::int64_t rows, std::int64_t features, void* out,
                        void* mean, void* rstd, const void* x, const void* weight, const void* bias,
                        double eps) {
  dispatch_floating(dtype, "layer_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* in = static_cast<const T*>(x);
    T* y = static_cast<T*>(out);
    Acc* mean_out = static_cast<Acc*>(mean);
    Acc* rstd_out = static_cast<Acc*>(rstd);
    const Parameter<T, Acc> w(weight, features, Acc(1));
    const Parameter<T, Acc> b(bias, features, Acc(0));
    parallel_for(rows, grain_for(features), [&](std::int64_t begin, std::int64_t end) {
      std::vector<Acc> wide(kWidened<T> ? static_cast<std::size_t>(features) : 0);
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t offset = r * features;
        const Acc* row = nullptr;
        Acc* result = nullptr;
        if constexpr (kWidened<T>) {
          widen(in + offset, wide.data(), features);
          row = wide.data();
          result = wide.data();
        } else {
          row = in + offset;
          result = y + offset;
        }
        const WelfordState<Acc> s = run_statistics<Acc, Acc>(row, features);
        const Acc rs = welford_rstd(s, static_cast<Acc>(eps));
        mean_out[r] = s.mean;
        rstd_out[r] = rs;
        normalise_row(result, row, features, s.mean, rs, w.data(), b.data());
        if constexpr (kWidened<T>) narrow(wide.data(), y + offset, features);
      }
    });
  });
}

void layer_norm_backward(DType dtype, std::int64_t rows, std::int64_t features, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "layer_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    T* dx = static_cast<T*>(grad_input);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    const Parameter<T, Acc> w(weight, features, Acc(1));
    const RowBlocks blocks = row_blocks(rows, features);
    const auto partial_size = static_cast<std::size_t>(
        grad_weight != nullptr || grad_bias != nullptr ? blocks.count * features : 0);
    std::vector<Acc> partial_w(grad_weight != nullptr ? partial_size : 0);
    std::vector<Acc> partial_b(grad_bias != nullptr ? partial_size : 0);

    parallel_for(
        blocks.count, grain_for(blocks.rows_per_block * features),
        [&](std::int64_t begin, std::int64_t end) {
          const std::size_t wide_size = kWidened<T> ? static_cast<std::size_t>(features) : 0;
          std::vector<Acc> wide_dy(wide_size);
          std::vector<Acc> wide_x(wide_size);
          for (std::int64_t block = begin; block < end; ++block) {
            Acc* pw = partial_w.empty() ? nullptr : partial_w.data() + block * features;
            Acc* pb = partial_b.empty() ? nullptr : partial_b.data() + block * features;
            const std::int64_t r0 = block * blocks.rows_per_block;
            const std::int64_t r1 = std::min(rows, r0 + blocks.rows_per_block);
            for (std::int64_t r = r0; r < r1; ++r) {
              const std::int64_t offset = r * features;
              if constexpr (kWidened<T>) {
                widen(dy + offset, wide_dy.data(), features);
                widen(in + offset, wide_x.data(), features);
                backward_row(dx != nullptr ? wide_dy.data() : nullptr, wide_dy.data(),
                             wide_x.data(), features, mean_in[r], rstd_in[r], w.data(), pw, pb);
                if (dx != nullptr) narrow(wide_dy.data(), dx + offset, features);
              } else {
                backward_row(dx != nullptr ? dx + offset : nullptr, dy + offset, in + offset,
                             features, mean_in[r], rstd_in[r], w.data(), pw, pb);
              }
            }
          }
        });

    // dweight, dbias: the blocks' partials in order, in double; each task a range of columns,
    // block after block (contiguous reads).
    if (partial_size == 0) return;
    parallel_for(features, grain_for(blocks.count), [&](std::int64_t begin, std::int64_t end) {
      const auto width = static_cast<std::size_t>(end - begin);
      std::vector<double> dw(grad_weight != nullptr ? width : 0);
      std::vector<double> db(grad_bias != nullptr ? width : 0);
      for (std::int64_t block = 0; block < blocks.count; ++block) {
        const std::int64_t offset = block * features + begin;
        for (std::size_t j = 0; j < dw.size(); ++j)
          dw[j] += static_cast<double>(partial_w[offset + j]);
        for (std::size_t j = 0; j < db.size(); ++j)
          db[j] += static_cast<double>(partial_b[offset + j]);
      }
      for (std::size_t j = 0; j < dw.size(); ++j)
        static_cast<T*>(grad_weight)[begin + j] = static_cast<T>(dw[j]);
      for (std::size_t j = 0; j < db.size(); ++j)
        static_cast<T*>(grad_bias)[begin + j] = static_cast<T>(db[j]);
    });
  });
}

}  // namespace leangrad::kernels::cpu
