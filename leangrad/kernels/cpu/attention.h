// Fused scaled dot-product attention on the CPU (kernels/cpu/attention.cpp): the forward and
// backward that ops::attention and ops::attention_backward (kernels/ops_attention.cpp) launch,
// with the (L, S) weights never stored, and the plain loops of attention_reference.h that the
// tests hold them to. CPU only: a CUDA tensor takes the composed path of autograd/attention.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include <leangrad/core/dtype.h>

namespace leangrad::kernels::cpu {

// B independent attentions over contiguous operands: query (B, L, E), key (B, S, E),
// value (B, S, Ev), output (B, L, Ev), logsumexp (B, L).
struct AttentionGeometry {
  std::int64_t batch = 0;  // B: the leading dims of query, key and value, flattened
  std::int64_t l = 0;      // queries
  std::int64_t s = 0;      // keys
  std::int64_t e = 0;      // query and key features
  std::int64_t ev = 0;     // value features
  double scale = 1.0;      // the query is multiplied by it (in its dtype) before the product
  bool is_causal = false;  // key j out of query i's reach where j > i
  // Dropout of the weights (p = 0: none): weight (b, i, j) is element (b L + i) S + j of the
  // (B, L, S) weights, kept as ops::dropout keeps that element for this seed and offset
  // (layers_math::dropout_keep), and scaled by 1 / (1 - p): the mask the composed path draws.
  double dropout_p = 0.0;
  std::uint64_t dropout_seed = 0;
  std::uint64_t dropout_offset = 0;
};

// The mask of the scores, read in place through strides (a broadcast mask is never expanded):
// element (b, i, j) at data + batch_offsets[b] + i * stride_l + j * stride_s. Bool: true where
// the pair may attend; floating (the query's dtype): added to the score.
struct AttentionMask {
  const void* data = nullptr;  // null: no mask
  bool is_bool = false;
  std::vector<std::int64_t> batch_offsets;  // (B)
  std::int64_t stride_l = 0;
  std::int64_t stride_s = 0;
};

// out = dropout(softmax(mask(scale q k^T))) v per batch, and logsumexp (the log of each row's
// softmax denominator plus its maximum: what the backward recomputes the weights from). A row with
// no key in reach has out NaN (softmax over -inf everywhere, as the composed path) and logsumexp
// -inf. Float32 or Float64.
void attention_forward(DType dtype, const AttentionGeometry& g, const AttentionMask& mask,
                       const void* query, const void* key, const void* value, void* out,
                       void* logsumexp);

// The gradients of query, key and value (each null when not wanted) from the output's gradient,
// recomputing the weights (and dropout's mask) block by block from logsumexp.
void attention_backward(DType dtype, const AttentionGeometry& g, const AttentionMask& mask,
                        const void* grad_out, const void* query, const void* key, const void* value,
                        const void* out, const void* logsumexp, void* grad_query, void* grad_key,
                        void* grad_value);

}  // namespace leangrad::kernels::cpu
