// Indexing by tensors (integer index tensors and bool masks) for Tensor::index and
// Tensor::index_put_ (autograd/tensor_methods.cpp), which hand an index list here when it holds a
// Tensor. Internal: core/indexing.h documents the spelling, Note [Advanced indexing] in
// advanced_indexing.cpp the rules.
#pragma once

#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::autograd {

// self.index(indices) for an index list holding at least one Tensor: a gathered copy,
// differentiable.
Tensor advanced_index(const Tensor& self, const std::vector<indexing::TensorIndex>& indices);
// self.index_put_(indices, value, accumulate) for such a list: value broadcast to
// self.index(indices)'s shape and written at those positions, in place (the last value where a
// position is named twice), or added to them (every value) with accumulate.
Tensor& advanced_index_put_(Tensor& self, const std::vector<indexing::TensorIndex>& indices,
                            const Tensor& value, bool accumulate);

}  // namespace leangrad::autograd
