// Fused scaled dot-product attention on the CPU (kernels/cpu/attention.h): the weights computed
// a tile at a time and never stored, forward and backward.
//
// Note [Fused attention]
//   - Forward, per batch and block of kQueryBlock queries (the tasks run in parallel): the block's
//     queries are scaled once, then for each block of kKeyBlock keys
//       scores = q_block k_block^T          gemm (kernels/cpu/gemm.h), on this thread alone
//       scores = mask(scores)               -inf where a pair may not attend, or + the float mask
//       row maximum m' = max(m, this block's), p = e^(scores - m')
//       out_block = out_block e^(m - m') + dropout(p) v_block,  sum = sum e^(m - m') + sum of p
//     (the online softmax of Milakov & Gimelshein, as FlashAttention uses it); at the end
//     out = out_block / sum and logsumexp = m + log(sum). Memory: the output, (B, L) logsumexps
//     and per thread a few tiles, where the composed path keeps the (B, L, S) weights.
//   - A key block wholly beyond a causal block's last query is skipped. A row whose keys so far
//     are all out of reach keeps m = -inf and adds nothing (e^(-inf - -inf) would be NaN); if it
//     ends that way, sum = 0 and out = 0 / 0 = NaN, logsumexp = -inf: the composed path's NaN.
//   - Dropout keeps weight (b, i, j) as ops::dropout keeps element (b L + i) S + j of the
//     (B, L, S) weights for the same generator state (one Philox block per 4 weights of a row),
//     so the fused and composed paths drop the same weights; the sum is of the weights before
//     dropout, as softmax comes first.
//   - Backward, per batch (one task each: key and value gradients add up over every query
//     block, so a batch stays on one thread), recomputing each tile's weights from logsumexp
//     and dropout's mask from the seed:
//       p = e^(scores - logsumexp)                       (out of reach: 0)
//       d_value_block += dropout(p)^T d_out_block
//       d_p = dropout'(d_out_block v_block^T)            (the kept ones times 1 / (1 - p))
//       d_scores = p (d_p - D),  D = rowsum(d_out * out) (softmax's backward; out is made of the
//                                                        dropped weights, and D still equals
//                                                        sum_j p_ij d_p_ij; 0 for a row a bool
//                                                        mask keeps from every key, as the
//                                                        composed path's masked_fill gives)
//       d_q_block += d_scores k_block,  d_key_block += d_scores^T q_block
//     and d_query = d_q scale, since the product was of the scaled query.
//   - e^x is exp_polynomial for float (within 1.02 ulps, in SIMD lanes: Note [Polynomial exp]),
//     std::exp for double. Each gemm sums its products in an order of its own, so results agree
//     with the reference loops (attention_reference.h) to rounding, not bitwise.
#include <leangrad/kernels/cpu/attention.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/async_signals.h>
#include <leangrad/kernels/cpu/exp_polynomial.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/layers_math.h>

namespace leangrad::kernels::cpu {
namespace {

constexpr std::int64_t kQueryBlock = 64;
constexpr std::int64_t kKeyBlock = 128;

constexpr int kLanes = 8;  // running sums and maxima of a row: one per SIMD lane

// A tile's scratch, 64-byte aligned. Eigen's small products peel their loops to the alignment of
// their operands, so where a buffer lies changes the order of a product's sums and so its last
// bits: buffers at a fixed alignment (as the allocator gives every tensor) keep the kernel's
// results the same from call to call.
template <typename T>
class Scratch {
 public:
  explicit Scratch(std::int64_t n)
      : data_(static_cast<T*>(
            ::operator new[](static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T),
                             std::align_val_t{64}))) {
    std::fill(data_, data_ + n, T(0));
  }
  ~Scratch() { ::operator delete[](data_, std::align_val_t{64}); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* data() { return data_; }
  T& operator[](std::int64_t i) { return data_[i]; }
  T* begin() { return data_; }

 private:
  T* data_;
};

// Always inlined, as exp_polynomial is: GCC 12 kept this wrapper out of line, and the call left
// the row loops below scalar (a third of the forward's time went to a scalar exp).
template <typename T>
[[gnu::always_inline]] inline T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return exp_polynomial(x);
  } else {
    return std::exp(x);
  }
}

// The largest of row[0, n) (-inf when n == 0; a NaN is passed over: it makes its own e^x NaN),
// in kLanes running maxima that the compiler keeps in one vector.
template <typename T>
T row_max_of(const T* row, std::int64_t n) {
  T lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -std::numeric_limits<T>::infinity());
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] = lanes[l] < row[c + l] ? row[c + l] : lanes[l];
  for (; c < n; ++c)
    lanes[0] = lanes[0] < row[c] ? row[c] : lanes[0];
  T m = lanes[0];
  for (int l = 1; l < kLanes; ++l)
    m = m < lanes[l] ? lanes[l] : m;
  return m;
}

// row[c] = e^(row[c] - shift) for c in [0, n), returning their sum (kLanes running sums).
template <typename T>
T exp_shifted_sum(T* row, std::int64_t n, T shift) {
  T lanes[kLanes] = {};
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      row[c + l] = exp_of<T>(row[c + l] - shift);
      lanes[l] += row[c + l];
    }
  for (; c < n; ++c) {
    row[c] = exp_of<T>(row[c] - shift);
    lanes[0] += row[c];
  }
  T sum = 0;
  for (int l = 0; l < kLanes; ++l)
    sum += lanes[l];
  return sum;
}

// sum of a[x] b[x] for x in [0, n), in kLanes running sums.
template <typename T>
T dot_of(const T* a, const T* b, std::int64_t n) {
  T lanes[kLanes] = {};
  std::int64_t x = 0;
  for (; x + kLanes <= n; x += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += a[x + l] * b[x + l];
  for (; x < n; ++x)
    lanes[0] += a[x] * b[x];
  T sum = 0;
  for (int l = 0; l < kLanes; ++l)
    sum += lanes[l];
  return sum;
}

// Dropout applied to a tile of weights (rows [i0, i0 + rows), keys [j0, j0 + cols)) of batch b,
// in place: each kept weight times `keep_scale`, the others 0. `out` may be `weights` itself.
template <typename T>
void dropout_tile(const AttentionGeometry& g, std::int64_t b, std::int64_t i0, std::int64_t rows,
                  std::int64_t j0, std::int64_t cols, const T* weights, T* out, T keep_scale) {
  constexpr std::int64_t kLanes4 = layers_math::kDropoutPerCounter;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t first = ((b * g.l + i0 + r) * g.s + j0);  // the row's first weight
    const T* w = weights + r * cols;
    T* o = out + r * cols;
    std::int64_t c = 0;
    while (c < cols) {
      const std::int64_t index = first + c;
      const philox::Block block = philox::philox4x32_10(
          g.dropout_offset + static_cast<std::uint64_t>(index / kLanes4), g.dropout_seed);
      for (std::int64_t lane = index % kLanes4; lane < kLanes4 && c < cols; ++lane, ++c)
        o[c] = layers_math::dropout_keep_lane(block, static_cast<int>(lane), g.dropout_p)
                   ? w[c] * keep_scale
                   : T(0);
    }
  }
}

// The mask applied to a tile of scores (rows [i0, i0 + rows), keys [j0, j0 + cols)), in place.
template <typename T>
void mask_tile(const AttentionGeometry& g, const AttentionMask& mask, std::int64_t b,
               std::int64_t i0, std::int64_t rows, std::int64_t j0, std::int64_t cols, T* scores) {
  constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = scores + r * cols;
    const std::int64_t i = i0 + r;
    if (g.is_causal) {
      // Keys j > i are out of reach: from column i - j0 + 1 on.
      for (std::int64_t c = std::max<std::int64_t>(0, i - j0 + 1); c < cols; ++c)
        row[c] = kMinusInf;
    }
    if (mask.data == nullptr) continue;
    const std::int64_t base =
        mask.batch_offsets[static_cast<std::size_t>(b)] + i * mask.stride_l + j0 * mask.stride_s;
    if (mask.is_bool) {
      const bool* m = static_cast<const bool*>(mask.data) + base;
      for (std::int64_t c = 0; c < cols; ++c)
        if (!m[c * mask.stride_s]) row[c] = kMinusInf;
    } else {
      const T* m = static_cast<const T*>(mask.data) + base;
      for (std::int64_t c = 0; c < cols; ++c)
        row[c] += m[c * mask.stride_s];
    }
  }
}

// The masked scores of a tile, (rows, cols) with row stride cols: the block's scaled queries
// times keys [j0, j0 + cols) of this batch (k), then the mask; the same in forward and backward.
template <typename T>
void score_tile(const AttentionGeometry& g, const AttentionMask& mask, std::int64_t b,
                std::int64_t i0, std::int64_t rows, std::int64_t j0, std::int64_t cols,
                const T* q_scaled, const T* k, T* scores) {
  gemm<T>(false, true, rows, cols, g.e, T(1), q_scaled, g.e, k + j0 * g.e, g.e, T(0), scores, cols);
  mask_tile(g, mask, b, i0, rows, j0, cols, scores);
}

// The number of key columns of block [j0, j0 + kKeyBlock) that any query of [i0, i1) can
// reach: all of them without a causal mask; 0 when the block lies wholly beyond i1 - 1.
std::int64_t reachable_cols(const AttentionGeometry& g, std::int64_t i1, std::int64_t j0) {
  const std::int64_t cols = std::min(kKeyBlock, g.s - j0);
  if (!g.is_causal) return cols;
  return std::clamp<std::int64_t>(i1 - j0, 0, cols);
}

// q_block * scale, rounded in T (as the composed path multiplies the query first).
template <typename T>
void scale_rows(const T* q, std::int64_t count, T scale, T* out) {
  for (std::int64_t x = 0; x < count; ++x)
    out[x] = q[x] * scale;
}

template <typename T>
void forward(const AttentionGeometry& g, const AttentionMask& mask, const T* query, const T* key,
             const T* value, T* out, T* logsumexp) {
  constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
  const std::int64_t query_blocks = (g.l + kQueryBlock - 1) / kQueryBlock;
  const T scale = static_cast<T>(g.scale);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - g.dropout_p));
  parallel_for(g.batch * query_blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    Scratch<T> q_scaled(kQueryBlock * g.e);
    Scratch<T> scores(kQueryBlock * kKeyBlock);
    Scratch<T> acc(kQueryBlock * g.ev);
    Scratch<T> row_max(kQueryBlock), row_sum(kQueryBlock);
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t b = task / query_blocks;
      const std::int64_t i0 = task % query_blocks * kQueryBlock;
      const std::int64_t rows = std::min(kQueryBlock, g.l - i0);
      const T* k = key + b * g.s * g.e;
      const T* v = value + b * g.s * g.ev;
      scale_rows(query + (b * g.l + i0) * g.e, rows * g.e, scale, q_scaled.data());
      std::fill(acc.begin(), acc.begin() + rows * g.ev, T(0));
      std::fill(row_max.begin(), row_max.begin() + kQueryBlock, kMinusInf);
      std::fill(row_sum.begin(), row_sum.begin() + kQueryBlock, T(0));
      for (std::int64_t j0 = 0; j0 < g.s; j0 += kKeyBlock) {
        const std::int64_t cols = reachable_cols(g, i0 + rows, j0);
        if (cols == 0) break;
        score_tile(g, mask, b, i0, rows, j0, cols, q_scaled.data(), k, scores.data());
        for (std::int64_t r = 0; r < rows; ++r) {
          T* p = scores.data() + r * cols;
          const T new_max = std::max(row_max[r], row_max_of(p, cols));
          if (new_max == kMinusInf) {  // nothing in reach yet
            std::fill(p, p + cols, T(0));
            continue;
          }
          const T block_sum = exp_shifted_sum(p, cols, new_max);
          const T rescale = exp_of<T>(row_max[r] - new_max);  // 0 for the first keys in reach
          if (rescale != T(1)) {
            T* a = acc.data() + r * g.ev;
            for (std::int64_t x = 0; x < g.ev; ++x)
              a[x] *= rescale;
          }
          row_sum[r] = row_sum[r] * rescale + block_sum;
          row_max[r] = new_max;
        }
        if (g.dropout_p > 0.0)
          dropout_tile(g, b, i0, rows, j0, cols, scores.data(), scores.data(), keep_scale);
        gemm<T>(false, false, rows, g.ev, cols, T(1), scores.data(), cols, v + j0 * g.ev, g.ev,
                T(1), acc.data(), g.ev);
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        T* o = out + (b * g.l + i0 + r) * g.ev;
        const T* a = acc.data() + r * g.ev;
        for (std::int64_t x = 0; x < g.ev; ++x)
          o[x] = a[x] / row_sum[r];
        logsumexp[b * g.l + i0 + r] = row_max[r] + std::log(row_sum[r]);
      }
    }
  });
}

template <typename T>
void backward(const AttentionGeometry& g, const AttentionMask& mask, const T* grad_out,
              const T* query, const T* key, const T* value, const T* out, const T* logsumexp,
              T* grad_query, T* grad_key, T* grad_value) {
  const T scale = static_cast<T>(g.scale);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - g.dropout_p));
  const bool dropout = g.dropout_p > 0.0;
  parallel_for(g.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    Scratch<T> q_scaled(kQueryBlock * g.e);
    Scratch<T> grad_q(kQueryBlock * g.e);
    Scratch<T> p(kQueryBlock * kKeyBlock);
    Scratch<T> grad_p(kQueryBlock * kKeyBlock);
    Scratch<T> dropped(dropout ? kQueryBlock * kKeyBlock : 0);
    Scratch<T> row_dot(kQueryBlock);
    std::vector<T> key_sink, value_sink;  // gradients nobody asked for (their values unused)
    if (grad_key == nullptr) key_sink.resize(static_cast<std::size_t>(g.s * g.e));
    if (grad_value == nullptr) value_sink.resize(static_cast<std::size_t>(g.s * g.ev));
    for (std::int64_t b = begin; b < end; ++b) {
      const T* k = key + b * g.s * g.e;
      const T* v = value + b * g.s * g.ev;
      T* dk = grad_key != nullptr ? grad_key + b * g.s * g.e : key_sink.data();
      T* dv = grad_value != nullptr ? grad_value + b * g.s * g.ev : value_sink.data();
      std::fill(dk, dk + g.s * g.e, T(0));
      std::fill(dv, dv + g.s * g.ev, T(0));
      for (std::int64_t i0 = 0; i0 < g.l; i0 += kQueryBlock) {
        const std::int64_t rows = std::min(kQueryBlock, g.l - i0);
        const T* d_out = grad_out + (b * g.l + i0) * g.ev;
        const T* o = out + (b * g.l + i0) * g.ev;
        const T* lse = logsumexp + b * g.l + i0;
        scale_rows(query + (b * g.l + i0) * g.e, rows * g.e, scale, q_scaled.data());
        std::fill(grad_q.begin(), grad_q.begin() + rows * g.e, T(0));
        for (std::int64_t r = 0; r < rows; ++r)
          row_dot[r] = dot_of(d_out + r * g.ev, o + r * g.ev, g.ev);
        for (std::int64_t j0 = 0; j0 < g.s; j0 += kKeyBlock) {
          const std::int64_t cols = reachable_cols(g, i0 + rows, j0);
          if (cols == 0) break;
          score_tile(g, mask, b, i0, rows, j0, cols, q_scaled.data(), k, p.data());
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c)
              p[r * cols + c] = exp_of<T>(p[r * cols + c] - lse[r]);
          if (dropout) dropout_tile(g, b, i0, rows, j0, cols, p.data(), dropped.data(), keep_scale);
          gemm<T>(true, false, cols, g.ev, rows, T(1), dropout ? dropped.data() : p.data(), cols,
                  d_out, g.ev, T(1), dv + j0 * g.ev, g.ev);
          gemm<T>(false, true, rows, cols, g.ev, T(1), d_out, g.ev, v + j0 * g.ev, g.ev, T(0),
                  grad_p.data(), cols);
          // Through dropout: a kept weight's gradient times 1 / (1 - p), a dropped one's 0 (the
          // mask drawn again: a kept weight may be 0 itself).
          if (dropout)
            dropout_tile(g, b, i0, rows, j0, cols, grad_p.data(), grad_p.data(), keep_scale);
          for (std::int64_t r = 0; r < rows; ++r) {
            // A row no key reaches (logsumexp -inf, its weights NaN) under a bool mask has no
            // score gradient: the composed path's masked scores (masked_fill) take none. A float
            // mask's -inf is added there, and the NaN goes on, as here.
            if (mask.is_bool && lse[r] == -std::numeric_limits<T>::infinity()) {
              std::fill(grad_p.begin() + r * cols, grad_p.begin() + (r + 1) * cols, T(0));
              continue;
            }
            for (std::int64_t c = 0; c < cols; ++c)
              grad_p[r * cols + c] = p[r * cols + c] * (grad_p[r * cols + c] - row_dot[r]);
          }
          gemm<T>(false, false, rows, g.e, cols, T(1), grad_p.data(), cols, k + j0 * g.e, g.e, T(1),
                  grad_q.data(), g.e);
          gemm<T>(true, false, cols, g.e, rows, T(1), grad_p.data(), cols, q_scaled.data(), g.e,
                  T(1), dk + j0 * g.e, g.e);
        }
        if (grad_query != nullptr) {
          T* dq = grad_query + (b * g.l + i0) * g.e;
          for (std::int64_t x = 0; x < rows * g.e; ++x)
            dq[x] = grad_q[x] * scale;
        }
      }
    }
  });
}

template <typename F>
void dispatch_attention(DType dtype, const char* op, const F& f) {
  switch (dtype) {
    case DType::Float32:
      f(float{});
      return;
    case DType::Float64:
      f(double{});
      return;
    default:
      LG_CHECK_DTYPE(false, op, ": the fused CPU kernel takes float32 or float64, got ", dtype);
  }
}

}  // namespace

void attention_forward(DType dtype, const AttentionGeometry& g, const AttentionMask& mask,
                       const void* query, const void* key, const void* value, void* out,
                       void* logsumexp) {
  const AsyncSignalsDeferred signals_deferred;  // once here, not per tile's gemm
  dispatch_attention(dtype, "attention_forward", [&]<typename T>(T) {
    forward<T>(g, mask, static_cast<const T*>(query), static_cast<const T*>(key),
               static_cast<const T*>(value), static_cast<T*>(out), static_cast<T*>(logsumexp));
  });
}

void attention_backward(DType dtype, const AttentionGeometry& g, const AttentionMask& mask,
                        const void* grad_out, const void* query, const void* key, const void* value,
                        const void* out, const void* logsumexp, void* grad_query, void* grad_key,
                        void* grad_value) {
  const AsyncSignalsDeferred signals_deferred;
  dispatch_attention(dtype, "attention_backward", [&]<typename T>(T) {
    backward<T>(g, mask, static_cast<const T*>(grad_out), static_cast<const T*>(query),
                static_cast<const T*>(key), static_cast<const T*>(value),
                static_cast<const T*>(out), static_cast<const T*>(logsumexp),
                static_cast<T*>(grad_query), static_cast<T*>(grad_key),
                static_cast<T*>(grad_value));
  });
}

}  // namespace leangrad::kernels::cpu
