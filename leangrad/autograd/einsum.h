// einsum: sums of products of tensors' elements over labelled dims, written as an equation
// ("bij,bjk->bik"), as torch.einsum. Composed of differentiable views, sums and batched matrix
// products (Note [einsum by pairs] in einsum.cpp), so it differentiates, twice too.
#pragma once

#include <string_view>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad {

// The equation names each operand's dims with letters (a-z, A-Z), one term per operand, separated
// by commas; "..." stands for any number of dims (broadcast across the terms that have it as
// elementwise ops broadcast). After "->" comes the output's labels (and "..." where it keeps
// those dims; an output without it sums them); without "->" the output is "..." (if any term has
// it) and then the labels that occur once, in ASCII order (upper case first), as torch.einsum. A
// label repeated within a term takes that operand's diagonal
// ("ii->i"); a label not in the output is summed over. Dims of one label have one size, or
// size 1 (broadcast). Spaces are ignored. The operands share a dtype and a device.
//   einsum("ij,jk->ik", {a, b})      matmul
//   einsum("bhqd,bhkd->bhqk", {q, k})  attention scores
//   einsum("ii", {a})                trace
//   einsum("...ij->...ji", {a})      transpose of the last two dims
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);

}  // namespace leangrad
