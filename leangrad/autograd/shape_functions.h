// Rearranging tensors, as torch's: the stacks of mixed ranks (hstack, vstack, dstack,
// column_stack, atleast_1d/2d/3d), tensor_split, hsplit, vsplit, dsplit, ravel, movedim and
// swapaxes, broadcast_to and broadcast_tensors, fliplr, flipud and rot90, take_along_dim,
// diag_embed, block_diag, cartesian_prod, combinations, diagflat, msort, the scatters into a
// copy (select_scatter, slice_scatter, diagonal_scatter), and the index lists tril_indices and
// triu_indices. Each is composed of views, cat, flip, gather, index_select, index_put, where and
// pad, so it differentiates (twice too) and runs on every device those run on.
//   Tensor row = hstack({a, b});                  // 1-d pieces joined, or along dim 1
//   auto parts = tensor_split(x, 3, /*dim=*/1);   // sizes differ by at most one
//   Tensor y = movedim(x, {0, 3}, {2, 0});
//   Tensor picked = take_along_dim(x, argsort(x, 1).narrow(1, 0, 2), 1);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <leangrad/core/shape.h>
#include <leangrad/core/tensor.h>
#include <leangrad/core/tensor_options.h>

namespace leangrad {

// A 0-d tensor as (1), (1, 1) or (1, 1, 1); a 1-d (n) as (1, n) or (1, n, 1); a 2-d (m, n) as
// (m, n, 1); larger ones unchanged (views), as torch.atleast_*d.
Tensor atleast_1d(const Tensor& input);
Tensor atleast_2d(const Tensor& input);
Tensor atleast_3d(const Tensor& input);
// torch's stacks of pieces of any rank: hstack joins 1-d pieces (0-d counting as 1-d) along dim
// 0 and others along dim 1; vstack (row_stack) joins atleast_2d pieces along dim 0, dstack
// atleast_3d pieces along dim 2, column_stack 0-d and 1-d pieces as columns (n, 1) and others
// as they are, along dim 1. The pieces promote to one dtype, as cat's.
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor row_stack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor column_stack(const std::vector<Tensor>& tensors);

// input split along dim into `sections` views whose sizes differ by at most one (the first
// size % sections one larger; empty ones when sections exceeds the size), or at `indices`
// (views [0, i0), [i0, i1), ..., [ik, size), each index clamped to [0, size], a negative one
// counting from the end; a view whose end is before its start is empty, and the next starts at
// that end), as torch.tensor_split.
std::vector<Tensor> tensor_split(const Tensor& input, std::int64_t sections, std::int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& input, const std::vector<std::int64_t>& indices,
                                 std::int64_t dim = 0);
// tensor_split along dim 1 (dim 0 of a 1-d input), dim 0 of an input of at least 2 dims, and
// dim 2 of one of at least 3, as torch.hsplit, vsplit and dsplit: `sections` must divide the
// dim's size (tensor_split's need not).
std::vector<Tensor> hsplit(const Tensor& input, std::int64_t sections);
std::vector<Tensor> hsplit(const Tensor& input, const std::vector<std::int64_t>& indices);
std::vector<Tensor> vsplit(const Tensor& input, std::int64_t sections);
std::vector<Tensor> vsplit(const Tensor& input, const std::vector<std::int64_t>& indices);
std::vector<Tensor> dsplit(const Tensor& input, std::int64_t sections);
std::vector<Tensor> dsplit(const Tensor& input, const std::vector<std::int64_t>& indices);
// The elements in row-major order, 1-d (a view when reshape gives one), as torch.ravel.
Tensor ravel(const Tensor& input);

// The dims `source` moved to the positions `destination`, the others keeping their order
// (a view), as torch.movedim / moveaxis.
Tensor movedim(const Tensor& input, const std::vector<std::int64_t>& source,
               const std::vector<std::int64_t>& destination);
Tensor movedim(const Tensor& input, std::int64_t source, std::int64_t destination);
Tensor moveaxis(const Tensor& input, const std::vector<std::int64_t>& source,
                const std::vector<std::int64_t>& destination);
Tensor moveaxis(const Tensor& input, std::int64_t source, std::int64_t destination);
// transpose under numpy's names, as torch.swapaxes / swapdims.
Tensor swapaxes(const Tensor& input, std::int64_t axis0, std::int64_t axis1);
Tensor swapdims(const Tensor& input, std::int64_t dim0, std::int64_t dim1);

// input expanded to `shape` (a view; -1 keeps a size), as torch.broadcast_to; and every tensor
// expanded to the shape they broadcast to together, as torch.broadcast_tensors.
Tensor broadcast_to(const Tensor& input, const Shape& shape);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);

// flip of dim 1 (at least 2 dims) and of dim 0 (at least 1), as torch.fliplr and flipud; the
// rotation by k quarter turns in the plane of dims, from the first dim towards the second, as
// torch.rot90 (k taken modulo 4; a copy).
Tensor fliplr(const Tensor& input);
Tensor flipud(const Tensor& input);
Tensor rot90(const Tensor& input, std::int64_t k = 1,
             const std::vector<std::int64_t>& dims = {0, 1});

// The elements of input at `indices` (int64) along dim, input and indices broadcast against each
// other in every other dim, as torch.take_along_dim (argsort's or topk's indices pick their
// values); without dim, of the flattened input at the flattened indices.
Tensor take_along_dim(const Tensor& input, const Tensor& indices,
                      std::optional<std::int64_t> dim = std::nullopt);

// input's last dim written on the offset-th diagonal of a new pair of dims (dim1, dim2) of size
// n + |offset|, zeros elsewhere, as torch.diag_embed (the batched inverse of diagonal).
Tensor diag_embed(const Tensor& input, std::int64_t offset = 0, std::int64_t dim1 = -2,
                  std::int64_t dim2 = -1);
// The blocks (0-d as (1, 1), 1-d (n) as (1, n), 2-d as they are) on the diagonal of a matrix of
// zeros, in order, as torch.block_diag; one promoted dtype.
Tensor block_diag(const std::vector<Tensor>& tensors);
// Every combination of one element of each 1-d tensor, the last varying fastest, as rows of a
// (n0 n1 ..., k) tensor (one tensor: itself), as torch.cartesian_prod.
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
// The r-element combinations of a 1-d input's elements, without repeats in the order of
// itertools.combinations (with_replacement: combinations_with_replacement), as rows of a
// (count, r) tensor, as torch.combinations; no combination gives (0, r), r = 0 an empty 1-d tensor.
Tensor combinations(const Tensor& input, std::int64_t r = 2, bool with_replacement = false);
// The flattened input on the offset-th diagonal of a square matrix, zeros elsewhere, as
// torch.diagflat.
Tensor diagflat(const Tensor& input, std::int64_t offset = 0);
// input sorted along dim 0, ascending (sort's values), as torch.msort.
Tensor msort(const Tensor& input);

// Copies of input with src written into one part: the slice input.select(dim, index), the
// slice input.slice(dim, start, end, step), or the diagonal diagonal(input, offset, dim1, dim2),
// as torch.select_scatter, slice_scatter and diagonal_scatter. src must have the part's shape
// exactly, and takes input's dtype. Differentiable in both: the gradient of src is the
// gradient's part, input's the gradient with the part zeroed.
Tensor select_scatter(const Tensor& input, const Tensor& src, std::int64_t dim, std::int64_t index);
Tensor slice_scatter(const Tensor& input, const Tensor& src, std::int64_t dim = 0,
                     std::optional<std::int64_t> start = std::nullopt,
                     std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1);
Tensor diagonal_scatter(const Tensor& input, const Tensor& src, std::int64_t offset = 0,
                        std::int64_t dim1 = 0, std::int64_t dim2 = 1);

// A view of input's storage with the given sizes, strides (one per size, each >= 0) and offset,
// all counted in elements of the storage, not of input (storage_offset: input's by default), as
// torch.as_strided; an element past the storage is a ShapeError. Its gradient adds each element's
// gradient into the storage location it views and gives input the sum at each of its own
// locations (divided among input's elements where input's own geometry overlaps, as PyTorch's);
// gradients of locations input does not view are dropped. Composed of index_add and index_select
// (or, for distinct elements of a contiguous input, a copy into zeros recorded with the view as
// its backward), so it differentiates twice. Writing in place through a view whose elements overlap
// (other than along a dim of stride 0, which is refused) gives an order-dependent result, as
// PyTorch's.
Tensor as_strided(const Tensor& input, const Shape& size, const Strides& stride,
                  std::optional<std::int64_t> storage_offset = std::nullopt);

// Whether no two elements of a geometry can share a location: sorted by stride, each dim of size
// > 1 steps past everything the dims of smaller stride reach. (Sufficient, not necessary: a
// geometry that fails it may still not overlap.)
bool surely_disjoint(const Shape& size, const Strides& stride);

// The (2, N) coordinates (int64 by default) of the elements on and below (tril) or on and above
// (triu) the offset-th diagonal of a (row, col) matrix, row by row, as torch.tril_indices and
// torch.triu_indices.
Tensor tril_indices(std::int64_t row, std::int64_t col, std::int64_t offset = 0,
                    const TensorOptions& options = TensorOptions(kInt64));
Tensor triu_indices(std::int64_t row, std::int64_t col, std::int64_t offset = 0,
                    const TensorOptions& options = TensorOptions(kInt64));

}  // namespace leangrad
