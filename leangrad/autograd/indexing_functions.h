// Indexing by tensors, splitting and rearranging, as torch's: index_select, gather, scatter_add,
// scatter and scatter_reduce (kernels of their own: kernels/ops_indexing.cpp; the scatters'
// autograd in scatter_functions.cpp), and index_add, index_fill, index_copy, index_reduce,
// nonzero, masked_select and masked_scatter composed of them and cumsum; narrow, chunk, split,
// split_with_sizes and unbind (views through slice and select); flip, roll, repeat, tile,
// repeat_interleave, meshgrid, tril, triu, pad and one_hot (composed of the above and of
// autograd/functions.h's ops). All differentiate, twice too: index_select's gradient adds each
// slice of the upstream gradient into the slice of its index (index_add), and its gradient is
// index_select again; gather's gradient is scatter_add into zeros, and scatter_add's gradient with
// respect to src is gather (Note [Indexing ops' gradients] in indexing_functions.cpp). Indices are
// int64 (index_select takes int32 too), on the input's device; an index out of range is an Error on
// the CPU (naming it and its position) and NaN, or 0 in an integral dtype, on CUDA, which does not
// synchronise to check.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <leangrad/core/enum_tags.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// The slices of input along dim at `index` (0-d or 1-d), in the index's order: input's shape
// with size(dim) replaced by index.numel(). Any dtype.
Tensor index_select(const Tensor& input, std::int64_t dim, const Tensor& index);
// The elements of input taken as a 1-d tensor at the int64 `index` (any shape; negative ones
// count from the end, each in [-numel, numel), checked: a CUDA index is read back), in index's
// shape, as torch.take. Differentiable in input (index_select's gradient).
Tensor take(const Tensor& input, const Tensor& index);
// input as if flattened (row-major) with source's elements written at the int64 flat positions
// `index` (any shape, as many elements as source, negative ones from the end, each in [-numel,
// numel)), or added to what is there with accumulate, in input's shape, as torch.put: index_put
// of the flattened input, so differentiable in input and source. A position given twice without
// accumulate takes one of its values, as index_put's. source has input's dtype and device.
Tensor put(const Tensor& input, const Tensor& index, const Tensor& source, bool accumulate = false);
// out[c] = input[c with c_dim replaced by index[c]], out of index's shape: index has input's
// rank, and no dim but `dim` larger than input's. Any dtype.
Tensor gather(const Tensor& input, std::int64_t dim, const Tensor& index);
// A copy of input with src[c] added at input[c with c_dim replaced by index[c]] for each c of
// index's shape (src at least as large as index in every dim; the rest of src is not read).
// Floating dtypes, int64 and int32; float16/bfloat16 sums in float32, rounded once.
Tensor scatter_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src);
// torch.scatter: a copy of input with src[c] (or value) written at input[c with c_dim replaced by
// index[c]], the shapes as scatter_add's; any dtype, src of input's. Where the index names one
// place more than once, the element latest along dim wins, on every device (PyTorch leaves the
// choice open), and only it gets a gradient (Note [Scatter's gradients] in scatter_functions.cpp).
//   y = scatter(x, 1, idx, src);   // y[i][idx[i][j]] = src[i][j]
Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, double value);
// LibTorch's scatter with `reduce`: "add" or "multiply", scatter_reduce's "sum" and "prod" with
// include_self.
Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
               std::string_view reduce);
Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, double value,
               std::string_view reduce);
// torch.scatter_reduce: a copy of input with the src elements naming each place (as scatter's)
// reduced into it by "sum", "prod", "mean", "amax" or "amin", input's own element taking part
// unless include_self is false (then a place named by none keeps input's element). Every dtype
// but bool for "mean" (an integral mean is floored, as PyTorch's); integers wrap around; the
// 16-bit floats are reduced in float32 and rounded once; amax and amin propagate NaN. The
// gradients are PyTorch's, with prod exact where factors are 0 (Note [Scatter's gradients]).
Tensor scatter_reduce(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);
// A copy of input with alpha times source's i-th slice along dim added into input's slice
// index[i], as torch.index_add: index 1-d (or 0-d) int64 or int32, source of input's shape but
// index.numel() along dim, one floating dtype; a repeated index adds each of its slices.
Tensor index_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& source,
                 double alpha = 1.0);
// The positions of input's non-zero elements (NaN counts as non-zero), (count, input.dim()) int64
// in row-major order, as torch.nonzero (argwhere is the same); a 0-d input gives (0 or 1, 0).
// The count is read back from the device (a synchronisation on CUDA, as PyTorch's).
Tensor nonzero(const Tensor& input);
Tensor argwhere(const Tensor& input);
// input's elements where mask (bool, broadcast with input) is true, in row-major order of the
// broadcast shape, a 1-d tensor, as torch.masked_select; the gradient goes back to those places.
Tensor masked_select(const Tensor& input, const Tensor& mask);
// A copy of input (broadcast with mask) whose places where mask (bool) is true hold source's
// first elements in row-major order, as torch.masked_scatter: source has input's dtype and at
// least as many elements as mask has true places (counted on the host). The gradient of source
// is the gradient at those places (0 beyond them), input's the gradient elsewhere.
Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source);
// How many elements are non-zero over dims (all when none is given), int64, as
// torch.count_nonzero.
Tensor count_nonzero(const Tensor& input, const DimList& dims = {});
// A copy of input with its slices along dim at `index` (as index_add's) set to value, as
// torch.index_fill; a value the dtype cannot hold is an Error. The gradient is 0 there.
Tensor index_fill(const Tensor& input, std::int64_t dim, const Tensor& index, double value);
// torch.index_copy: a copy of input with source's i-th slice along dim written into input's slice
// index[i] (index and source as index_add's, any dtype); of repeated indices the last slice wins,
// as scatter's latest element does.
Tensor index_copy(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& source);
// torch::index_put: a copy of self with values (broadcast to the indexed shape) written at
// indices, or added to them with accumulate (every value where a position is named twice), as
// self.clone().index_put_(...); self is not changed. indices is LibTorch's list of optional
// tensors: the i-th indexes dim i (int64 positions or a bool mask), std::nullopt takes all of it.
// Differentiable in self (0 where written, unless accumulate) and in values.
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate = false);
// torch.index_reduce: source's slices reduced into input's slices at `index` (as index_copy's) by
// "prod", "mean", "amax" or "amin" (index_add sums), as scatter_reduce reduces.
Tensor index_reduce(const Tensor& input, std::int64_t dim, const Tensor& index,
                    const Tensor& source, std::string_view reduce, bool include_self = true);

// input's elements start .. start + length - 1 along dim, a view (start may be negative, counted
// from the end, as Python's).
Tensor narrow(const Tensor& input, std::int64_t dim, std::int64_t start, std::int64_t length);
// Views of split_size elements along dim each, the last one smaller when the size is not a
// multiple; a dim of size 0 gives one empty view.
std::vector<Tensor> split(const Tensor& input, std::int64_t split_size, std::int64_t dim = 0);
// Views of the given sizes along dim, which must add up to its size.
std::vector<Tensor> split_with_sizes(const Tensor& input,
                                     const std::vector<std::int64_t>& split_sizes,
                                     std::int64_t dim = 0);
// split with split_size = ceil(size / chunks): at most `chunks` views, fewer when the size does
// not allow that many (7 in 4 chunks is 2, 2, 2, 1; 6 in 4 is 2, 2, 2), and `chunks` empty
// views of a dim of size 0, as torch.chunk.
std::vector<Tensor> chunk(const Tensor& input, std::int64_t chunks, std::int64_t dim = 0);
// select(input, dim, i) for every i along dim.
std::vector<Tensor> unbind(const Tensor& input, std::int64_t dim = 0);

// The order of the elements reversed along each of dims (no dim twice), a copy.
Tensor flip(const Tensor& input, const std::vector<std::int64_t>& dims);
// The elements moved by shifts[i] places along dims[i] (negative: backwards), those that fall off
// one end coming back at the other; with no dims, one shift over the flattened tensor (its shape
// kept), as torch.roll. A copy.
Tensor roll(const Tensor& input, const DimList& shifts, const DimList& dims = {});
// input tiled repeats[i] times along dim i; more repeats than dims add leading dims (input (2, 3)
// repeated {4, 1, 2} is (4, 2, 6)), as torch's Tensor.repeat. A copy.
Tensor repeat(const Tensor& input, const std::vector<std::int64_t>& repeats);
// torch.tile: repeat with reps padded by leading 1s to input's rank (repeat adds leading dims when
// reps is longer): a (2, 3) input tiled {2} is (2, 6).
Tensor tile(const Tensor& input, const std::vector<std::int64_t>& reps);
// Each element repeated `repeats` times in place along dim (the flattened input without a dim),
// as torch.repeat_interleave with a number of repeats: {1, 2} repeated 2 is {1, 1, 2, 2}.
Tensor repeat_interleave(const Tensor& input, std::int64_t repeats,
                         std::optional<std::int64_t> dim = std::nullopt);
// torch.meshgrid: for 0-d or 1-d tensors of sizes n0, n1, ..., one tensor each of shape
// (n0, n1, ...) holding tensor i's elements along dim i ("ij", the default), or with the first
// two dims swapped ("xy": shape (n1, n0, ...), as numpy.meshgrid). Views (expanded); one dtype
// and device.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");
// The elements on and below (tril) or above (triu) the diagonal of the last two dims, the others
// 0; the diagonal moved up by `diagonal` (negative: down), as torch.tril / triu.
Tensor tril(const Tensor& input, std::int64_t diagonal = 0);
Tensor triu(const Tensor& input, std::int64_t diagonal = 0);
// How pad fills the new elements, spelled as LibTorch's torch::kConstant, kReflect, kReplicate and
// kCircular, along a dim x0 .. x(n-1) padded by 2 before and 2 after:
//   kConstant   v  v  x0 .. x(n-1)  v       v        (value v)
//   kReflect    x2 x1 x0 .. x(n-1)  x(n-2)  x(n-3)   (the edge element not repeated)
//   kReplicate  x0 x0 x0 .. x(n-1)  x(n-1)  x(n-1)
//   kCircular   x(n-2) x(n-1) x0 .. x(n-1) x0 x1     (the other end's elements)
// kZeros is kConstant under the name Conv2dOptions::padding_mode takes, as LibTorch's: the tag
// of core/enum_tags.h, as grid_sample's padding takes it too (PadMode::Zeros is Constant).
enum class PadMode : std::uint8_t { Constant, Reflect, Replicate, Circular, Zeros = Constant };
inline constexpr PadMode kConstant = PadMode::Constant;
inline constexpr PadMode kReflect = PadMode::Reflect;
inline constexpr PadMode kReplicate = PadMode::Replicate;
inline constexpr PadMode kCircular = PadMode::Circular;
// "constant", "reflect", "replicate", "circular": PyTorch's spelling.
const char* pad_mode_name(PadMode mode);

// torch.nn.functional.pad: pad holds (before, after) pairs for the last dim, then the one before
// it, and so on (at most two per dim); a negative amount cuts elements off. In kConstant mode the
// new elements are `value`; the other modes copy elements of the input, positions counted from
// the input's own ends as PyTorch's (so a cut at one end does not move the other end's mirror),
// and need a non-empty dim: kReflect an amount smaller than the dim's size, kCircular at most the
// size (PyTorch's limits). Any number of dims in any mode, where PyTorch's reflect, replicate and
// circular take the last 1 to 3 of a 2-d to 5-d input (docs/api-notes.md). The result is a new
// tensor (a copy when nothing is padded); its gradient adds up the upstream gradient of every
// copy of an element.
//   y = pad(x, {1, 1, 1, 1}, kReflect);  // (N, C, H, W) -> (N, C, H + 2, W + 2)
Tensor pad(const Tensor& input, const std::vector<std::int64_t>& pad, PadMode mode,
           double value = 0.0);
// pad in kConstant mode.
Tensor pad(const Tensor& input, const std::vector<std::int64_t>& pad, double value = 0.0);
// int64 class indices of any shape -> int64 (*indices.shape, num_classes) with a 1 at each
// index, as torch.nn.functional.one_hot; num_classes -1: one more than the largest index (read
// on the host). Indices outside [0, num_classes) are an Error, on the CPU and on CUDA (which
// synchronises to read the smallest and largest).
Tensor one_hot(const Tensor& indices, std::int64_t num_classes = -1);

}  // namespace leangrad
