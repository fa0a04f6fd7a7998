// Tensor-level entries of the reductions (kernels/ops.h): sum, mean, max, min, prod and argmax over
// any set of dims, with keepdim. Launchers: reduce and argmax of kernels/backend.h.
//
// Strategy: bring the input to a contiguous (outer, R, inner) layout, R = product of the reduced
// sizes, so the launchers see out[o, j] = op over r of in[o, r, j]:
//   - a contiguous input whose reduced dims are adjacent (size-1 dims aside) is used as is: the
//     dims before them make `outer`, the dims after them `inner` (sum over dim 0 of a matrix is
//     (1, rows, cols); over the last dim it is (rows, cols, 1));
//   - otherwise the reduced dims are permuted to the end (kept dims first, each group in its
//     original order) and the result made contiguous, which copies only when the permuted view is
//     not contiguous already; then inner = 1 and each output reduces one contiguous run.
// The first form matters for sums over the batch dim (bias gradients): over dim 0 of a
// (4096, 4096) float32 matrix it takes 8 ms on 2 cores, against ~140 ms with the transposing copy.
// A contiguous input whose reduced dims form several runs, split by kept dims, is reduced one run
// at a time in the first form instead of copied (Note [Reducing separated dims in stages]).
//
// Note [Strided inputs of a reduction]
// A strided input (a slice with a step, a broadcast, a permute) whose permuted view is not
// contiguous must be copied. The permuted copy reads the input along the permuted view's last dim;
// where that dim's stride is neither 0 nor 1 (a slice with a step, reduced over a dim before its
// last) it reads a whole row apart per element, with no unit stride for the tiled transposed copy
// to use: the sum over dim 0 of every other column of a (2048, 4096) float32 took 22.3 ms on one
// thread (LibTorch 1.13: 5.3). Such an input, when its reduced dims are adjacent, is copied in its
// own row-major order instead and reduced in the first form: 1.9 ms
// (bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md); a strided view then reduces
// to the same bits as a contiguous tensor of its values. A broadcast row or column reads at
// stride 0 or 1 either way, and keeps the permuted copy, whose runs it fills faster (0.49 ms for
// the sum over dim 0 of a (1, 2048) row expanded to (2048, 2048), 0.59 through the row-major copy).
// An input whose permuted view is contiguous (a sum over the first dim of x.t()) is reduced
// through that view, with no copy.
// A permuted dense input is first seen through its dims in memory order, contiguous, when that
// keeps the kept dims' order (Note [Dense inputs in memory order]); a broadcast one is reduced
// over one index of its broadcast dims, kept or reduced (all but a product's reduced ones; Note
// [Broadcast dims of a reduction]).
// argmax always takes the second form (its dim is usually the last one anyway).
//
// Rules (PyTorch's):
//   - dims are wrapped; an empty list reduces every dim; a repeated dim is a ShapeError;
//   - Sum and Prod of integral/bool input give int64, Mean requires a floating dtype, Max keeps
//     it;
//   - over zero elements: sum = 0, mean = NaN, prod = 1; max, min and argmax throw;
//   - Max and Min propagate NaN; argmax returns the first maximum, and a NaN counts as the maximum;
//   - argmax without a dim indexes the flattened tensor.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

namespace {

// Which dims of `a` are reduced: every dim for an empty list. A 0-d tensor accepts dims 0 and -1
// (as PyTorch) and has nothing to permute.
std::vector<bool> reduced_dims(const char* op, const Tensor& a,
                               const std::vector<std::int64_t>& dims) {
  const std::int64_t ndim = a.dim();
  const std::int64_t n = std::max<std::int64_t>(ndim, 1);
  std::vector<bool> mask(static_cast<std::size_t>(n), dims.empty());
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (std::int64_t d : dims) {
    LG_CHECK_SHAPE(d >= -n && d < n, op, ": dim ", d, " is out of range for a tensor of shape ",
                   a.shape(), " (expected a dim in [", -n, ", ", n - 1, "])");
    const std::int64_t w = d < 0 ? d + n : d;
    LG_CHECK_SHAPE(!seen[w], op, ": dim ", w, " appears more than once in dims ", shape_str(dims));
    seen[w] = true;
    mask[w] = true;
  }
  mask.resize(static_cast<std::size_t>(ndim));
  return mask;
}

// The result's shape: the kept dims, and a 1 for each reduced one with keepdim.
Shape reduced_shape(const Tensor& a, const std::vector<bool>& reduced, bool keepdim) {
  Shape shape;
  for (std::int64_t d = 0; d < a.dim(); ++d) {
    if (!reduced[d])
      shape.push_back(a.shape()[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

// The input as a contiguous (outer, reduce_size, inner) block; see Strategy above.
struct ReductionLayout {
  Tensor input;
  Shape out_shape;
  std::int64_t outer = 1;
  std::int64_t reduce_size = 1;  // R
  std::int64_t inner = 1;
};

ReductionLayout make_layout(const Tensor& a, const std::vector<bool>& reduced, bool keepdim,
                            bool allow_inner) {
  ReductionLayout layout;
  layout.out_shape = reduced_shape(a, reduced, keepdim);
  std::int64_t num_outputs = 1;
  std::vector<std::int64_t> kept_dims, reduced_list;
  // The first and last reduced dim that is not of size 1; size-1 dims may sit anywhere.
  std::int64_t first = -1, last = -1;
  for (std::int64_t d = 0; d < a.dim(); ++d) {
    const std::int64_t size = a.shape()[d];
    if (reduced[d]) {
      reduced_list.push_back(d);
      layout.reduce_size = checked_mul(layout.reduce_size, size, "reduction");
      if (size != 1) {
        if (first < 0) first = d;
        last = d;
      }
    } else {
      kept_dims.push_back(d);
      num_outputs = checked_mul(num_outputs, size, "reduction");
    }
  }
  bool adjacent = allow_inner && first >= 0 && layout.reduce_size > 0;
  for (std::int64_t d = first + 1; adjacent && d < last; ++d) {
    adjacent = reduced[d] || a.shape()[d] == 1;
  }
  const auto in_place = [&](const Tensor& rows) {
    layout.input = rows;
    for (std::int64_t d = 0; d < a.dim(); ++d) {
      if (!reduced[d]) {
        std::int64_t& part = d < first ? layout.outer : layout.inner;
        part = checked_mul(part, a.shape()[d], "reduction");
      }
    }
    return layout;
  };
  if (adjacent && a.is_contiguous()) return in_place(a);
  std::vector<std::int64_t> perm = kept_dims;
  perm.insert(perm.end(), reduced_list.begin(), reduced_list.end());
  const bool identity = std::is_sorted(perm.begin(), perm.end());
  const Tensor permuted = identity ? a : views::permute(a, perm);
  // Note [Strided inputs of a reduction]
  if (adjacent && !permuted.is_contiguous() && permuted.shape().back() > 1 &&
      permuted.strides().back() != 0 && permuted.strides().back() != 1)
    return in_place(contiguous(a));
  layout.input = contiguous(permuted);
  layout.outer = num_outputs;
  return layout;
}

void check_not_empty(const char* op, const Tensor& a, const ReductionLayout& layout) {
  LG_CHECK_SHAPE(layout.reduce_size > 0, op,
                 ": cannot reduce over a zero-size dimension (input shape ", a.shape(), ")");
}

// Note [Reducing separated dims in stages]
// A conv2d bias gradient sums a contiguous (N, C, H, W) gradient over {0, 2, 3}: two runs of
// reduced dims with a kept dim between them. Permuting them together (the second form) copies the
// whole input, a temporary as large as the layer's activation (1.2 GiB for the widest srnet of
// docs/memory.md). Instead each run is reduced where it lies, in the first form, the largest run
// first so that the next stage reads the smallest partial:
//   (N, C, H, W) -> (N, C, 1, 1) -> (1, C, 1, 1)
// with temporaries of N * C elements. The runs: kept and reduced dims of size 1 are ignored (they
// do not move memory), each maximal sequence of the other reduced dims is one run.
//   - Max and Min stage in the input's dtype: each stage's result is one of its inputs, exact.
//   - Sum stages in the accumulator's dtype (reduce_math.h), so the partials are what one pass
//     holds before it rounds its result. For float32 and float64 that is the dtype itself, for
//     integers int64 (the result's dtype); for float16 and bfloat16 it is float32: the first
//     stage reads the 16-bit input and writes float32 (the launchers' out_dtype), later stages
//     add float32, and the result, (C) in the example, is cast to 16 bits once. Partials rounded
//     to 16 bits between stages would each add a 16-bit rounding (2^-9 relative for bfloat16)
//     where one pass rounds only its result. The sums only add in another order: the pairwise
//     bound holds in each stage, and the stages' bounds add up.
//   - Mean is those sums, then one division by the number of reduced elements, then the rounding
//     to the dtype: the arithmetic of one pass (sum in the accumulator, / n, round), additions
//     reordered. A mean of equal-sized means would also be the mean, but each stage's division
//     rounds (one float32 rounding more per stage) and the division would not be the last step.
// Non-contiguous inputs keep the permuting copy (it makes them contiguous anyway).
std::vector<std::vector<std::int64_t>> separated_runs(const Tensor& a,
                                                      const std::vector<bool>& reduced) {
  std::vector<std::vector<std::int64_t>> runs;
  if (!a.is_contiguous() || a.numel() == 0) return runs;
  bool in_run = false;
  for (std::int64_t d = 0; d < a.dim(); ++d) {
    if (a.shape()[d] == 1) continue;
    if (!reduced[d]) {
      in_run = false;
    } else {
      if (!in_run) runs.emplace_back();
      runs.back().push_back(d);
      in_run = true;
    }
  }
  if (runs.size() < 2) runs.clear();
  return runs;
}

// The dtype op writes for input of `dtype`: int64 for Sum and Prod of integral/bool input, else
// dtype.
DType result_dtype(ReduceOp op, DType dtype) {
  return (op == ReduceOp::Sum || op == ReduceOp::Prod) && !is_floating(dtype) ? DType::Int64
                                                                              : dtype;
}

// Max or Min: a result that is one of the elements, never empty, exact in any order.
bool is_extremum(ReduceOp op) {
  return op == ReduceOp::Max || op == ReduceOp::Min;
}

// op over `reduced` of `a` in one launch, in the layout of make_layout, written as out_dtype (what
// the launchers accept, kernels/backend.h).
Tensor reduce_in_one_pass(ReduceOp op, const Tensor& a, const std::vector<bool>& reduced,
                          bool keepdim, DType out_dtype) {
  const ReductionLayout layout = make_layout(a, reduced, keepdim, /*allow_inner=*/true);
  if (is_extremum(op)) check_not_empty(op_name(op), a, layout);

  Tensor out = empty(layout.out_shape, TensorOptions(out_dtype).device(a.device()));
  if (out.numel() == 0) return out;
  const cuda::DeviceGuard guard(a.device());
  switch (a.device().type) {
    case DeviceType::CPU:
      kernels::cpu::reduce(op, a.dtype(), out_dtype, out.data_ptr(), layout.input.data_ptr(),
                           layout.outer, layout.reduce_size, layout.inner);
      break;
    case DeviceType::CUDA:
      kernels::cuda::reduce(op, a.dtype(), out_dtype, out.data_ptr(), layout.input.data_ptr(),
                            layout.outer, layout.reduce_size, layout.inner);
      break;
  }
  return out;
}

// op over the separated runs of `a`, one stage per run (Note [Reducing separated dims in stages]).
Tensor reduce_in_stages(ReduceOp op, const Tensor& a, const std::vector<bool>& reduced,
                        std::vector<std::vector<std::int64_t>> runs, bool keepdim) {
  const auto run_numel = [&](const std::vector<std::int64_t>& run) {
    std::int64_t n = 1;
    for (std::int64_t d : run)
      n *= a.shape()[d];  // a factor of numel: cannot overflow
    return n;
  };
  std::stable_sort(runs.begin(), runs.end(),
                   [&](const auto& x, const auto& y) { return run_numel(x) > run_numel(y); });
  const ReduceOp stage_op = op == ReduceOp::Mean ? ReduceOp::Sum : op;
  const DType stage_dtype = !is_extremum(op) && is_reduced_precision(a.dtype())
                                ? DType::Float32
                                : result_dtype(stage_op, a.dtype());
  Tensor partial = a;
  std::int64_t count = 1;  // elements reduced into each output so far
  for (const std::vector<std::int64_t>& run : runs) {
    std::vector<bool> run_mask(reduced.size(), false);
    for (std::int64_t d : run)
      run_mask[d] = true;
    partial = reduce_in_one_pass(stage_op, partial, run_mask, /*keepdim=*/true, stage_dtype);
    count *= run_numel(run);
  }
  if (op == ReduceOp::Mean) partial = binary(BinaryOp::Div, partial, static_cast<double>(count));
  const DType out_dtype = result_dtype(op, a.dtype());
  if (partial.dtype() != out_dtype) partial = cast(partial, out_dtype);
  return views::view(partial, reduced_shape(a, reduced, keepdim));
}

// Note [Broadcast dims of a reduction]
// A dim of stride 0 (an expanded tensor: a loss's gradient, a bias broadcast over a batch) holds
// the same elements at every index. Kept, it gives the same result at every index: the
// reduction runs over its index 0 alone and the result is expanded, where the input had been
// copied whole first: the sum along the rows of a (1, 2048) row expanded to (2048, 2048) took
// 0.37-0.44 ms on one thread, now 0.002 (LibTorch 1.13: 0.08;
// bench/results/2026-12-07-cpu-sum-lanes-zen5-2core.md). Reduced, it is cut to index 0 too:
//   - by a maximum or a minimum, it gives what one index gives (repeating the elements repeats
//     the first zero and the last NaN that decide the bits);
//   - by a mean, the cut's mean is the whole's (each element counted n times of n times as many);
//   - by a sum, the whole's sum is the cut's times n, the product of the cut reduced dims' sizes:
//     one multiplication, in float32 for the 16-bit dtypes (rounded to them once), wrapping for
//     integers. It is not the sum of the n copies' bits (an order of the sum is not part of its
//     contract, Note [Pairwise summation]), and it is within that sum's bound: the cut's error
//     times n plus one rounding is at most gamma(n m - 1) of the whole's sum of magnitudes for
//     n >= 2 (m the cut's count). Such an input had been copied whole: that expanded row's sum
//     took 0.28 ms, its sum over dim 0 0.40, now 0.001 and 0.010 (LibTorch 0.07 each;
//     bench/results/2026-12-07-cpu-broadcast-sums-zen5-2core.md).
//   - A product still multiplies every copy (a power would round differently), and such an input
//     is copied.
// Reduce.BroadcastDimsReduceOnce checks the values against the reference loop, maxima and minima
// bit for bit against the contiguous copy's, and that no copy is made.
// `dims` as the caller gave them, `reduced` what they mean for `a` (the cut keeps a's rank).
std::optional<Tensor> reduce_broadcast_once(ReduceOp op, const Tensor& a,
                                            const std::vector<std::int64_t>& dims,
                                            const std::vector<bool>& reduced, bool keepdim) {
  if (a.numel() == 0) return std::nullopt;
  Tensor cut = a;
  bool any = false;
  std::int64_t copies = 1;  // of each element of cut in a's reduction: the cut reduced sizes
  for (std::int64_t d = 0; d < a.dim(); ++d) {
    if (a.stride(d) != 0 || a.shape()[d] == 1 || (reduced[d] && op == ReduceOp::Prod)) continue;
    if (reduced[d]) copies *= a.shape()[d];
    cut = views::slice(cut, d, 0, 1, 1);
    any = true;
  }
  if (!any) return std::nullopt;
  Tensor r;
  if (op == ReduceOp::Sum && copies > 1) {
    const bool narrow = is_reduced_precision(a.dtype());
    r = reduce(op, narrow ? cast(cut, DType::Float32) : cut, dims, /*keepdim=*/true);
    r = is_floating(r.dtype())
            ? binary(BinaryOp::Mul, r, static_cast<double>(copies))
            : binary(BinaryOp::Mul, r, full({}, static_cast<double>(copies), r.options()));
    if (narrow) r = cast(r, a.dtype());
  } else {
    r = reduce(op, cut, dims, /*keepdim=*/true);
  }
  return views::view(views::expand(r, reduced_shape(a, reduced, /*keepdim=*/true)).contiguous(),
                     reduced_shape(a, reduced, keepdim));
}

// Note [Dense inputs in memory order]
// A non-contiguous input that is a dense block with its dims permuted (x.t(), an NHWC tensor seen
// as NCHW) is reduced through the view of its dims in memory order, largest stride first, when
// that order keeps the kept dims in theirs: the view is contiguous, so it takes the first form or
// the stages with no copy, and its results come out in the kept dims' order, which is the
// result's; only the shape is the original's. The sum of a transposed (2048, 2048) float32 took
// 2.2 ms on one thread, through a transposing copy, and its sum over dim 1 1.7: now 0.21 and 0.44
// (bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md). The
// elements are added in memory order, as PyTorch adds them: a transposed tensor's sum has the
// bits of its contiguous source's, not those of a contiguous copy of the transpose. Size-1 dims
// go last (their strides are anything). Not argmax, whose flat index is the row-major one.
struct MemoryOrder {
  Tensor view;
  std::vector<std::int64_t> dims;  // the reduced dims, as the view's
};
std::optional<MemoryOrder> memory_order(const Tensor& a, const std::vector<bool>& reduced) {
  if (a.dim() < 2 || a.numel() == 0 || a.is_contiguous()) return std::nullopt;
  std::vector<std::int64_t> perm, size_one;
  for (std::int64_t d = 0; d < a.dim(); ++d)
    (a.shape()[d] == 1 ? size_one : perm).push_back(d);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](std::int64_t x, std::int64_t y) { return a.stride(x) > a.stride(y); });
  std::int64_t last_kept = -1;
  for (std::int64_t d : perm) {
    if (reduced[d]) continue;
    if (d < last_kept) return std::nullopt;  // the kept dims would change order
    last_kept = d;
  }
  perm.insert(perm.end(), size_one.begin(), size_one.end());
  MemoryOrder m{views::permute(a, perm), {}};
  if (!m.view.is_contiguous()) return std::nullopt;  // not dense (a slice with a step)
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (reduced[perm[i]]) m.dims.push_back(static_cast<std::int64_t>(i));
  return m;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  const char* name = op_name(op);
  check_defined(name, a);
  LG_CHECK_DTYPE(op != ReduceOp::Mean || is_floating(a.dtype()),
                 "mean: expected a floating dtype (float32, float64, float16, bfloat16), got ",
                 a.dtype(), " (convert with .to(kFloat32) first)");
  const std::vector<bool> reduced = reduced_dims(name, a, dims);
  // Note [Broadcast dims of a reduction]
  if (std::optional<Tensor> r = reduce_broadcast_once(op, a, dims, reduced, keepdim))
    return *std::move(r);
  if (const std::optional<MemoryOrder> m = memory_order(a, reduced)) {  // Note [Dense inputs ...]
    LG_INTERNAL_ASSERT(!m->dims.empty(), name, ": no dim of ", a.shape(), " is reduced");
    const Tensor r = reduce(op, m->view, m->dims, /*keepdim=*/false);  // contiguous: no recursion
    return views::view(r, reduced_shape(a, reduced, keepdim));
  }
  std::vector<std::vector<std::int64_t>> runs = separated_runs(a, reduced);
  if (!runs.empty()) return reduce_in_stages(op, a, reduced, std::move(runs), keepdim);
  return reduce_in_one_pass(op, a, reduced, keepdim, result_dtype(op, a.dtype()));
}

Tensor argmax(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
  check_defined("argmax", a);
  // Without a dim every dim is reduced: the index is into the flattened (row-major) tensor.
  const std::vector<bool> reduced =
      dim ? reduced_dims("argmax", a, {*dim}) : std::vector<bool>(a.dim(), true);
  const ReductionLayout layout = make_layout(a, reduced, keepdim, /*allow_inner=*/false);
  check_not_empty("argmax", a, layout);

  Tensor out = empty(layout.out_shape, TensorOptions(DType::Int64).device(a.device()));
  if (out.numel() == 0) return out;
  auto* out_data = static_cast<std::int64_t*>(out.data_ptr());
  const cuda::DeviceGuard guard(a.device());
  switch (a.device().type) {
    case DeviceType::CPU:
      kernels::cpu::argmax(a.dtype(), out_data, layout.input.data_ptr(), layout.outer,
                           layout.reduce_size);
      break;
    case DeviceType::CUDA:
      kernels::cuda::argmax(a.dtype(), out_data, layout.input.data_ptr(), layout.outer,
                            layout.reduce_size);
      break;
  }
  return out;
}

}  // namespace leangrad::ops
