// Plain loops of scaled dot-product attention, one query row at a time with its whole row of
// weights, written from the definition: what tests/kernels/test_attention_kernel.cpp holds the
// fused kernel of kernels/cpu/attention.cpp to (forward, logsumexp and the three gradients).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/kernels/cpu/attention.h>

namespace leangrad::kernels::cpu::reference {

// Whether query i of batch b may not attend to key j by the causal rule or a bool mask (its
// score is then -inf, and it takes no gradient, as the composed path's masked_fill gives none).
inline bool out_of_reach(const AttentionGeometry& g, const AttentionMask& mask, std::int64_t b,
                         std::int64_t i, std::int64_t j) {
  if (g.is_causal && j > i) return true;
  if (mask.data == nullptr || !mask.is_bool) return false;
  const std::int64_t at =
      mask.batch_offsets[static_cast<std::size_t>(b)] + i * mask.stride_l + j * mask.stride_s;
  return !static_cast<const bool*>(mask.data)[at];
}

// The (masked) score of query i and key j of batch b, from the scaled query row qs.
template <typename T>
T attention_score(const AttentionGeometry& g, const AttentionMask& mask, std::int64_t b,
                  std::int64_t i, std::int64_t j, const T* qs, const T* key) {
  if (out_of_reach(g, mask, b, i, j)) return -std::numeric_limits<T>::infinity();
  T score = 0;
  for (std::int64_t x = 0; x < g.e; ++x)
    score += qs[x] * key[(b * g.s + j) * g.e + x];
  if (mask.data == nullptr || mask.is_bool) return score;
  const std::int64_t at =
      mask.batch_offsets[static_cast<std::size_t>(b)] + i * mask.stride_l + j * mask.stride_s;
  return score + static_cast<const T*>(mask.data)[at];
}

// The weights of query row i of batch b: softmax of its scores (NaN everywhere when no key is in
// reach), and the scaled query row.
template <typename T>
std::vector<T> attention_weights(const AttentionGeometry& g, const AttentionMask& mask,
                                 std::int64_t b, std::int64_t i, const T* query, const T* key,
                                 std::vector<T>& qs) {
  qs.resize(static_cast<std::size_t>(g.e));
  for (std::int64_t x = 0; x < g.e; ++x)
    qs[static_cast<std::size_t>(x)] = query[(b * g.l + i) * g.e + x] * static_cast<T>(g.scale);
  std::vector<T> w(static_cast<std::size_t>(g.s));
  T max = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < g.s; ++j) {
    w[static_cast<std::size_t>(j)] = attention_score(g, mask, b, i, j, qs.data(), key);
    max = std::max(max, w[static_cast<std::size_t>(j)]);
  }
  T sum = 0;
  for (T& x : w) {
    x = std::exp(x - max);
    sum += x;
  }
  for (T& x : w)
    x /= sum;
  return w;
}

template <typename T>
void attention_forward(const AttentionGeometry& g, const AttentionMask& mask, const T* query,
                       const T* key, const T* value, T* out) {
  std::vector<T> qs;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t i = 0; i < g.l; ++i) {
      const std::vector<T> w = attention_weights(g, mask, b, i, query, key, qs);
      for (std::int64_t x = 0; x < g.ev; ++x) {
        T acc = 0;
        for (std::int64_t j = 0; j < g.s; ++j)
          acc += w[static_cast<std::size_t>(j)] * value[(b * g.s + j) * g.ev + x];
        out[(b * g.l + i) * g.ev + x] = acc;
      }
    }
}

// The three gradients, each of the full size (not null).
template <typename T>
void attention_backward(const AttentionGeometry& g, const AttentionMask& mask, const T* grad_out,
                        const T* query, const T* key, const T* value, T* grad_query, T* grad_key,
                        T* grad_value) {
  std::fill(grad_key, grad_key + g.batch * g.s * g.e, T(0));
  std::fill(grad_value, grad_value + g.batch * g.s * g.ev, T(0));
  std::vector<T> qs;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t i = 0; i < g.l; ++i) {
      const std::vector<T> w = attention_weights(g, mask, b, i, query, key, qs);
      const T* d_out = grad_out + (b * g.l + i) * g.ev;
      // d_w[j] = d_out . v[j];  d_score[j] = w[j] (d_w[j] - sum_k w[k] d_w[k]), 0 out of reach
      // (so a row with no key in reach has none, though its weights are NaN)
      std::vector<T> d_score(static_cast<std::size_t>(g.s));
      T weighted = 0;
      for (std::int64_t j = 0; j < g.s; ++j) {
        T d_w = 0;
        for (std::int64_t x = 0; x < g.ev; ++x)
          d_w += d_out[x] * value[(b * g.s + j) * g.ev + x];
        d_score[static_cast<std::size_t>(j)] = d_w;
        weighted += w[static_cast<std::size_t>(j)] * d_w;
      }
      for (std::int64_t j = 0; j < g.s; ++j) {
        const std::size_t js = static_cast<std::size_t>(j);
        d_score[js] = out_of_reach(g, mask, b, i, j) ? T(0) : w[js] * (d_score[js] - weighted);
        for (std::int64_t x = 0; x < g.ev; ++x)
          grad_value[(b * g.s + j) * g.ev + x] += w[js] * d_out[x];
        for (std::int64_t x = 0; x < g.e; ++x)
          grad_key[(b * g.s + j) * g.e + x] += d_score[js] * qs[static_cast<std::size_t>(x)];
      }
      for (std::int64_t x = 0; x < g.e; ++x) {
        T acc = 0;
        for (std::int64_t j = 0; j < g.s; ++j)
          acc += d_score[static_cast<std::size_t>(j)] * key[(b * g.s + j) * g.e + x];
        grad_query[(b * g.l + i) * g.e + x] = acc * static_cast<T>(g.scale);
      }
    }
}

}  // namespace leangrad::kernels::cpu::reference
