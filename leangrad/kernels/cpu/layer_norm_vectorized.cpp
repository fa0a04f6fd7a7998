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
//     bfloat16 rows are widened (kernels/cpu/half_convert.h) into float buffers on the stack,
//     the whole row when it has at most kPiece elements, else kPiece at a time in each pass (a
//     multiple of the lane count, so element i still lands in lane i mod 32), run through the
//     float32 loops and narrowed once: 16-bit LayerNorm is float32 LayerNorm of the widened
//     input, rounded once, bit for bit
//     (LayerNormVectorized.SixteenBitIsFloat32OfTheWidenedInput). No row-sized buffer is
//     allocated, however long the row.
//   - Threads: the forward over rows when each thread gets at least kRowsPerThread of them,
//     else over (row, 2048-element chunk) tasks (each chunk's statistics, merged per row in
//     order, then each chunk normalised: the same bits either way); the backward over row
//     blocks only, so a few very long rows' backward runs on a few threads. This file is compiled
//     with -ffp-contract=off, so the vector body and the scalar tail round alike.
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
// The forward splits rows over threads when each gets at least this many, else chunks of rows.
constexpr std::int64_t kRowsPerThread = 8;
// 16-bit elements widened at a time: 32 KiB per float buffer on the stack (two in the
// backward), a multiple of kLanes; rows up to this long are widened once.
constexpr std::int64_t kPiece = 8192;
static_assert(kPiece % kLanes == 0);

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

// y = ((x - mean) rstd) w + b over n elements; y may be x.
template <typename U>
void normalise(U* y, const U* x, std::int64_t n, U mean, U rstd, const U* w, const U* b) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i)
    y[i] = std::fma((x[i] - mean) * rstd, w[i], b[i]);
}

// The backward's row sums a = sum w dy and b = sum w dy (x - mean), element i of the row in lane
// i mod kLanes.
template <typename U>
struct RowSums {
  U a[kLanes] = {};
  U b[kLanes] = {};
};

// Adds n elements to the sums; they start the row or follow a multiple of kLanes elements.
template <typename U>
void add_row_sums(RowSums<U>& s, const U* dy, const U* x, const U* w, std::int64_t n, U mean) {
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const U g = w[i + l] * dy[i + l];
      s.a[l] += g;
      s.b[l] = std::fma(g, x[i + l] - mean, s.b[l]);
    }
  for (int l = 0; i + l < n; ++l) {
    const U g = w[i + l] * dy[i + l];
    s.a[l] += g;
    s.b[l] = std::fma(g, x[i + l] - mean, s.b[l]);
  }
}

// dx = rstd w dy + x_coef (x - mean) + constant over n elements (unless dx is null), and each
// element's dy (x - mean) rstd and dy added to the block's partials pw and pb (unless null), in
// one pass when all three are wanted. dx may be dy.
template <typename U>
void input_grad(U* dx, const U* dy, const U* x, std::int64_t n, U mean, U rstd, const U* w,
                U x_coef, U constant, U* pw, U* pb) {
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

// One row of T's forward: mean, rstd and y (Note [Vectorised LayerNorm]).
template <typename T, typename Acc>
void forward_row(const T* x, T* y, std::int64_t n, Acc eps, const Acc* w, const Acc* b,
                 Acc* mean_out, Acc* rstd_out) {
  if constexpr (!kWidened<T>) {
    const WelfordState<Acc> s = run_statistics<T, Acc>(x, n);
    const Acc rs = welford_rstd(s, eps);
    *mean_out = s.mean;
    *rstd_out = rs;
    normalise(y, x, n, s.mean, rs, w, b);
  } else if (n <= kPiece) {
    float wide[kPiece];
    widen(x, wide, n);
    forward_row<float, float>(wide, wide, n, eps, w, b, mean_out, rstd_out);
    narrow(wide, y, n);
  } else {
    const WelfordState<float> s = run_statistics<T, float>(x, n);
    const float rs = welford_rstd(s, eps);
    *mean_out = s.mean;
    *rstd_out = rs;
    float wide[kPiece];
    for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
      const std::int64_t p = std::min(kPiece, n - i0);
      widen(x + i0, wide, p);
      normalise(wide, wide, p, s.mean, rs, w + i0, b + i0);
      narrow(wide, y + i0, p);
    }
  }
}

// The input-gradient coefficients of a row from its sums (in double).
template <typename U>
GroupInputGradCoefs<U> coefficients(RowSums<U>& s, U rstd, std::int64_t n) {
  const GroupInputGradCoefs<double> k =
      group_norm_input_grad_coefs_centred<double>(rstd, sum_of_lanes(s.a), sum_of_lanes(s.b), n);
  return {static_cast<U>(k.x_coef), static_cast<U>(k.const_coef)};
}

// One row of T's backward: dx (unless null) and the row's terms added to the block's partials pw
// and pb (unless null).
template <typename T, typename Acc>
void backward_row(T* dx, const T* dy, const T* x, std::int64_t n, Acc mean, Acc rstd, const Acc* w,
                  Acc* pw, Acc* pb) {
  if constexpr (!kWidened<T>) {
    GroupInputGradCoefs<Acc> k{0, 0};
    if (dx != nullptr) {
      RowSums<Acc> sums;
      add_row_sums(sums, dy, x, w, n, mean);
      k = coefficients(sums, rstd, n);
    }
    input_grad(dx, dy, x, n, mean, rstd, w, k.x_coef, k.const_coef, pw, pb);
  } else {
    float wide_dy[kPiece];
    float wide_x[kPiece];
    // Piece [i0, i0 + p) of dy and x widened; a row of one piece only once.
    auto load = [&](std::int64_t i0, std::int64_t p, bool again) {
      if (again && n <= kPiece) return;
      widen(dy + i0, wide_dy, p);
      widen(x + i0, wide_x, p);
    };
    GroupInputGradCoefs<float> k{0, 0};
    if (dx != nullptr) {
      RowSums<float> sums;
      for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
        const std::int64_t p = std::min(kPiece, n - i0);
        load(i0, p, false);
        add_row_sums(sums, wide_dy, wide_x, w + i0, p, mean);
      }
      k = coefficients(sums, rstd, n);
    }
    for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
      const std::int64_t p = std::min(kPiece, n - i0);
      load(i0, p, dx != nullptr);
      input_grad(dx != nullptr ? wide_dy : nullptr, wide_dy, wide_x, p, mean, rstd, w + i0,
                 k.x_coef, k.const_coef, pw != nullptr ? pw + i0 : nullptr,
                 pb != nullptr ? pb + i0 : nullptr);
      if (dx != nullptr) narrow(wide_dy, dx + i0, p);
    }
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
    if (rows >= kRowsPerThread * max_threads() || features <= kStatisticsChunk) {
      parallel_for(rows, grain_for(features), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r)
          forward_row(in + r * features, y + r * features, features, static_cast<Acc>(eps),
                      w.data(), b.data(), mean_out + r, rstd_out + r);
      });
      return;
    }
    // Few long rows: threads within them, over (row, chunk) tasks. Each chunk's statistics,
    // merged per row left to right from an empty state (what run_statistics does), then each
    // chunk normalised: the same operations on the same values as forward_row, so the same bits.
    const std::int64_t chunks = (features + kStatisticsChunk - 1) / kStatisticsChunk;
    std::vector<WelfordState<Acc>> parts(static_cast<std::size_t>(rows * chunks));
    struct Chunk {
      std::int64_t feature;  // of its first element
      std::int64_t offset;   // of its first element in x and y
      std::int64_t size;
    };
    auto chunk_of = [&](std::int64_t t) {
      const std::int64_t feature = (t % chunks) * kStatisticsChunk;
      return Chunk{feature, (t / chunks) * features + feature,
                   std::min(kStatisticsChunk, features - feature)};
    };
    parallel_for(rows * chunks, grain_for(kStatisticsChunk),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t t = begin; t < end; ++t) {
                     const Chunk c = chunk_of(t);
                     parts[t] = chunk_statistics<T, Acc>(in + c.offset, c.size);
                   }
                 });
    for (std::int64_t r = 0; r < rows; ++r) {
      WelfordState<Acc> total;
      for (std::int64_t k = 0; k < chunks; ++k)
        total = welford_merge(total, parts[r * chunks + k]);
      mean_out[r] = total.mean;
      rstd_out[r] = welford_rstd(total, static_cast<Acc>(eps));
    }
    parallel_for(rows * chunks, grain_for(kStatisticsChunk),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t t = begin; t < end; ++t) {
                     const Chunk c = chunk_of(t);
                     const Acc row_mean = mean_out[t / chunks];
                     const Acc row_rstd = rstd_out[t / chunks];
                     const Acc* wc = w.data() + c.feature;
                     const Acc* bc = b.data() + c.feature;
                     if constexpr (kWidened<T>) {
                       float wide[kStatisticsChunk];
                       widen(in + c.offset, wide, c.size);
                       normalise(wide, wide, c.size, row_mean, row_rstd, wc, bc);
                       narrow(wide, y + c.offset, c.size);
                     } else {
                       normalise(y + c.offset, in + c.offset, c.size, row_mean, row_rstd, wc, bc);
                     }
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

    parallel_for(blocks.count, grain_for(blocks.rows_per_block * features),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t block = begin; block < end; ++block) {
                     Acc* pw = partial_w.empty() ? nullptr : partial_w.data() + block * features;
                     Acc* pb = partial_b.empty() ? nullptr : partial_b.data() + block * features;
                     const std::int64_t r0 = block * blocks.rows_per_block;
                     const std::int64_t r1 = std::min(rows, r0 + blocks.rows_per_block);
                     for (std::int64_t r = r0; r < r1; ++r) {
                       const std::int64_t offset = r * features;
                       backward_row(dx != nullptr ? dx + offset : nullptr, dy + offset, in + offset,
                                    features, mean_in[r], rstd_in[r], w.data(), pw, pb);
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
