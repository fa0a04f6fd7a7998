// Scaled dot-product attention, as PyTorch 2's torch.nn.functional.scaled_dot_product_attention:
//   Tensor out = scaled_dot_product_attention(q, k, v);                 // (B, H, L, D) each
//   Tensor causal = scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
// softmax(q k^T * scale + mask) v over the last two dims, any leading dims broadcast as in
// matmul. Two implementations (PyTorch's SDPBackend), picked per call:
//   - FlashAttention: the fused CPU kernel (kernels/cpu/attention.cpp), which keeps the output and
//     one logsumexp per query row for backward instead of the (..., L, S) weights, and
//     recomputes the weights (and dropout's mask, the same one the composed path draws) tile by
//     tile; taken on the CPU for every floating dtype (float16 and bfloat16 computed in float32,
//     the output and gradients rounded once) when query, key and value have the same
//     leading dims, the mask (if any) is Bool or of the query's dtype and needs no gradient, and
//     autocast is off;
//   - Math: composed of differentiable functions (matmul, softmax, dropout): every device, dtype,
//     broadcast and dropout, and under autocast (the products in the autocast dtype, the softmax
//     in float32). It keeps the weights for backward.
// Both differentiate to any order (the fused backward recomputes with Math under create_graph).
// nn::MultiheadAttention (nn/attention.h) is built on them.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad {

// query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev).
// attn_mask, broadcastable to (..., L, S):
//   - Bool: true where a query may attend to a key (PyTorch 2's convention for this function;
//     nn::MultiheadAttention's Bool masks mean the opposite, as PyTorch's);
//   - floating: added to the scores (-inf keeps a pair out).
// A query row that may attend to no key gives NaN, as PyTorch's math path.
// dropout_p: the probability of zeroing each attention weight (the rest scaled by 1 / (1 - p)),
// applied whenever it is > 0, as PyTorch's (pass 0 in evaluation).
// is_causal: query i attends to keys 0..i (the top-left triangle of (L, S), as torch.tril);
// it cannot be combined with attn_mask.
// scale: 1 / sqrt(E) by default.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// The implementations scaled_dot_product_attention may pick (torch.nn.attention.SDPBackend).
enum class SDPBackend : std::uint8_t { Math, FlashAttention };

// While it lives, scaled_dot_product_attention on this thread picks only among `backends`
// (torch.nn.attention.sdpa_kernel): {SDPBackend::Math} always composes; {FlashAttention} makes a
// call the fused kernel cannot take an error that says why. Guards nest; the default is both.
class SdpaKernelGuard {
 public:
  explicit SdpaKernelGuard(std::vector<SDPBackend> backends);
  ~SdpaKernelGuard();
  SdpaKernelGuard(const SdpaKernelGuard&) = delete;
  SdpaKernelGuard& operator=(const SdpaKernelGuard&) = delete;

 private:
  unsigned previous_;
};

namespace detail {
// scaled_dot_product_attention's computation with an additive floating mask (undefined: none),
// returning the output and the attention weights it was made with (after dropout), for
// nn::MultiheadAttention, which returns them. Inputs are checked by the caller.
std::pair<Tensor, Tensor> attention_with_weights(const Tensor& query, const Tensor& key,
                                                 const Tensor& value, const Tensor& additive_mask,
                                                 double dropout_p, double scale);
}  // namespace detail

}  // namespace leangrad
