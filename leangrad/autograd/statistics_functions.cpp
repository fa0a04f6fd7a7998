// The order statistics, NaN-skipping reductions and searches of autograd/statistics_functions.h.
//
// Note [Order statistics]
//   median, nanmedian and kthvalue pick one element of each slice: the one of some rank (0 the
//   smallest) in the slice ordered ascending with NaN the largest, as sort orders it. The rank is
//   k - 1 for kthvalue; (n - 1) / 2 for median, or n - 1 where the slice holds NaN, which lands
//   on a NaN; (m - 1) / 2 for nanmedian, m counting the elements that are not NaN (0 for a slice
//   of NaNs, which lands on a NaN again). ops::select_rank finds it: a selection on the CPU
//   (std::nth_element, O(n) per slice, as torch's), a sort on CUDA. Among equal elements the
//   index returned is the first position holding the value (a NaN's: the first NaN):
//   deterministic, and the same on both devices.
//   torch names one of the equal positions without saying which (its CPU kernel's choice
//   depends on its partitioning), so tests compare values, and check that each index holds its
//   value. The values are a gather of the input at the indices, so the gradient of each goes to
//   its index, as PyTorch's value_selecting_reduction_backward; median() and nanmedian() without
//   a dim split it evenly among the equal elements instead, as PyTorch's.
//   quantile follows torch's definition step by step in the input's dtype (ranks q (n - 1) from
//   a number q rounded to that dtype, floor and ceil of them, lerp between the two sorted
//   elements), each step correctly rounded: float32 values are torch's bit for bit, float64 ones
//   within an ulp (torch's float64 lerp fuses its multiply-add). torch sorts each slice; the
//   elements of the two ranks are found by ops::argsort_at instead, a selection on the CPU
//   (O(n) per slice for a few q), at the positions a stable sort puts them, so among equal
//   elements the gradient goes where it would through a sort.
#include <leangrad/autograd/statistics_functions.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::floating_or_float32;
using autograd::record_op;

namespace {

// ---- Order statistics ---------------------------------------------------------------------------

// input with dim wrapped into it: a 0-d input is one slice of one element along dim 0 (torch
// takes dim 0 or -1 there). Refuses undefined and bool input.
std::pair<Tensor, std::int64_t> as_slices(const char* op, const Tensor& input, std::int64_t dim) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(input.dtype() != kBool, op, ": expected a tensor of numbers, got dtype bool ",
                 "(shape ", input.shape(), ")");
  if (input.dim() == 0) {
    wrap_dim(dim, 0, op);
    return {reshape(input, {1}), 0};
  }
  const std::int64_t d = wrap_dim(dim, input.dim(), op);
  LG_CHECK_SHAPE(input.size(d) > 0, op, ": expected a non-empty dim ", d, ", got shape ",
                 input.shape());
  return {input, d};
}

// The first position along dim (int64, keepdim shape) holding each slice's element of rank
// `rank` (int64, keepdim shape; 0 the smallest, NaN the largest). Note [Order statistics].
Tensor position_of_rank(const Tensor& x, std::int64_t dim, const Tensor& rank) {
  NoGradGuard no_grad;
  return ops::select_rank(x, dim, rank);
}

// (values, indices) of the elements at `position` (keepdim shape) of x, the slices of input
// (as_slices); a 0-d input gives 0-d results.
std::tuple<Tensor, Tensor> selected(const Tensor& input, const Tensor& x, std::int64_t dim,
                                    const Tensor& position, bool keepdim) {
  Tensor values = gather(x, dim, position);
  Tensor indices = position;
  if (input.dim() == 0) return {reshape(values, {}), reshape(indices, {})};
  if (!keepdim) {
    values = squeeze(values, dim);
    indices = squeeze(indices, dim);
  }
  return {values, indices};
}

// The rank median takes in each slice along dim: (n - 1) / 2, or n - 1 where a slice holds NaN
// (ignore_nan: (m - 1) / 2 of the m elements that are not NaN, 0 when there are none).
Tensor median_rank(const Tensor& x, std::int64_t dim, bool ignore_nan) {
  NoGradGuard no_grad;
  const std::int64_t n = x.size(dim);
  Shape kept = x.shape();
  kept[static_cast<std::size_t>(dim)] = 1;
  const TensorOptions options = TensorOptions(kInt64).device(x.device());
  if (!is_floating(x.dtype())) return full(kept, static_cast<double>((n - 1) / 2), options);
  if (!ignore_nan) {
    return masked_fill(full(kept, static_cast<double>((n - 1) / 2), options),
                       any(isnan(x), {dim}, /*keepdim=*/true), static_cast<double>(n - 1));
  }
  const Tensor count = sum(logical_not(isnan(x)), {dim}, /*keepdim=*/true).to(kFloat64);
  return floor(div(clamp_min(sub(count, 1.0), 0.0), 2.0)).to(kInt64);
}

std::tuple<Tensor, Tensor> median_along(const char* op, const Tensor& input, std::int64_t dim,
                                        bool keepdim, bool ignore_nan) {
  const auto [x, d] = as_slices(op, input, dim);
  return selected(input, x, d, position_of_rank(x, d, median_rank(x, d, ignore_nan)), keepdim);
}

// The median of all elements, its gradient split evenly among the elements equal to it (the
// NaNs, for NaN), as PyTorch's evenly_distribute_backward.
Tensor median_of_all(const char* op, const Tensor& input, bool ignore_nan) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(input.dtype() != kBool, op, ": expected a tensor of numbers, got dtype bool ",
                 "(shape ", input.shape(), ")");
  Tensor value;
  {
    NoGradGuard no_grad;
    if (input.numel() == 0) {
      LG_CHECK_DTYPE(is_floating(input.dtype()), op, ": the median of no ", input.dtype(),
                     " element is undefined (floating input gives NaN), shape ", input.shape());
      value = full({}, std::nan(""), input.options());
    } else {
      value =
          reshape(std::get<0>(median_along(op, reshape(input, {-1}), 0, false, ignore_nan)), {});
    }
  }
  return record_op(op, value, {input}, {input, value}, [](const BackwardContext& c) {
    const Tensor& x = c.saved[0];
    const Tensor& v = c.saved[1];
    const Tensor mask = logical_or(eq(x, v), logical_and(isnan(x), isnan(v))).to(c.grad.dtype());
    return std::vector<Tensor>{mul(mask, div(c.grad, sum(mask)))};
  });
}

// ---- Quantiles ----------------------------------------------------------------------------------

enum class Interpolation { Linear, Lower, Higher, Nearest, Midpoint };

Interpolation parse_interpolation(const char* op, std::string_view name) {
  if (name == "linear") return Interpolation::Linear;
  if (name == "lower") return Interpolation::Lower;
  if (name == "higher") return Interpolation::Higher;
  if (name == "nearest") return Interpolation::Nearest;
  if (name == "midpoint") return Interpolation::Midpoint;
  LG_THROW(Error, op, ": interpolation must be one of linear, lower, higher, midpoint or nearest, ",
           "got \"", std::string(name), "\"");
}

Tensor quantile_impl(const char* op, const Tensor& input, const Tensor& q,
                     std::optional<std::int64_t> dim, bool keepdim, std::string_view interpolation,
                     bool ignore_nan) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK(q.defined(), op, ": expected a defined q, got an undefined Tensor()");
  LG_CHECK_DTYPE(input.dtype() == kFloat32 || input.dtype() == kFloat64, op,
                 ": expected a float32 or float64 input, got ", input.dtype(), " (shape ",
                 input.shape(), ")");
  LG_CHECK_DTYPE(q.dtype() == input.dtype(), op, ": expected q of the input's dtype ",
                 input.dtype(), ", got ", q.dtype());
  LG_CHECK_SHAPE(q.dim() <= 1, op, ": expected a number, a 0-d or a 1-d q, got shape ", q.shape());
  LG_CHECK_DEVICE(q.device() == input.device(), op, ": q is on ", q.device(), ", the input on ",
                  input.device());
  LG_CHECK_SHAPE(input.numel() > 0, op, ": expected a non-empty input, got shape ", input.shape());
  const Interpolation mode = parse_interpolation(op, interpolation);
  {
    NoGradGuard no_grad;
    LG_CHECK(q.numel() == 0 || all(logical_and(ge(q, 0.0), le(q, 1.0))).item<bool>(), op,
             ": expected every q in [0, 1], got ", q);
  }

  // The slices as the rows of a (rows, n) matrix, and the result's shape without the quantiles'
  // dim.
  Shape kept;
  Tensor slices;
  if (dim.has_value() && input.dim() > 0) {
    const std::int64_t d = wrap_dim(*dim, input.dim(), op);
    kept = input.shape();
    if (keepdim) {
      kept[static_cast<std::size_t>(d)] = 1;
    } else {
      kept.erase(kept.begin() + d);
    }
    slices = movedim(input, d, -1);
  } else {
    if (dim.has_value()) wrap_dim(*dim, 0, op);
    if (keepdim) kept.assign(static_cast<std::size_t>(input.dim()), 1);
    slices = reshape(input, {-1});
  }
  const std::int64_t n = slices.size(-1);
  const Tensor rows = reshape(slices, {-1, n});

  // The rank of each quantile in each row, (rows, Q), in the input's dtype as torch's.
  const Tensor qs = reshape(q, {1, -1});
  Tensor ranks;
  if (ignore_nan) {
    const Tensor count = sum(logical_not(isnan(rows)), {1}, /*keepdim=*/true).to(q.dtype());
    ranks = mul(qs, sub(count, 1.0));
    ranks = masked_fill(ranks, lt(ranks, 0.0), 0.0);  // a row of NaNs: rank 0, a NaN
  } else {
    // A row holding NaN takes its last element, a NaN.
    const Tensor last = full({1, 1}, static_cast<double>(n - 1), rows.options());
    ranks =
        where(any(isnan(rows), {1}, /*keepdim=*/true), last, mul(qs, static_cast<double>(n - 1)));
  }
  if (mode == Interpolation::Lower) ranks = floor(ranks);
  if (mode == Interpolation::Higher) ranks = ceil(ranks);
  if (mode == Interpolation::Nearest) ranks = round(ranks);
  // The elements a stable sort puts at the ranks (the gradient goes to them as through a sort),
  // found without sorting where that is cheaper: ops::argsort_at.
  const bool between = mode == Interpolation::Linear || mode == Interpolation::Midpoint;
  const Tensor below = ranks.to(kInt64);
  Tensor positions;
  {
    NoGradGuard no_grad;
    positions = ops::argsort_at(rows, 1, between ? cat({below, ceil(ranks).to(kInt64)}, 1) : below);
  }
  const std::int64_t count = q.numel();
  Tensor result = gather(rows, 1, narrow(positions, 1, 0, count));
  if (between) {
    const Tensor weights =
        mode == Interpolation::Midpoint ? full_like(ranks, 0.5) : sub(ranks, below.to(q.dtype()));
    result = lerp(result, gather(rows, 1, narrow(positions, 1, count, count)), weights);
  }
  if (q.dim() == 0) return reshape(result, kept);
  Shape shape = kept;
  shape.push_back(q.numel());
  return movedim(reshape(result, shape), -1, 0);
}

Tensor scalar_q(const char* op, const Tensor& input, double q) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK(q >= 0.0 && q <= 1.0, op, ": expected q in [0, 1], got ", q);
  return full({}, q, input.options());
}

// ---- Searching ----------------------------------------------------------------------------------

// Whether to search to the right: right, or side "right" (side "left" with right is an Error).
bool search_right(const char* op, bool right, std::optional<std::string_view> side) {
  if (!side.has_value()) return right;
  LG_CHECK(*side == "left" || *side == "right", op, ": side must be \"left\" or \"right\", got \"",
           std::string(*side), "\"");
  LG_CHECK(!(right && *side == "left"), op, ": side \"left\" and right = true contradict");
  return *side == "right";
}

Tensor search(const char* op, const Tensor& sorted_sequence, const Tensor& values, bool out_int32,
              bool right, const Tensor& sorter) {
  LG_CHECK(sorted_sequence.defined(), op, ": expected a defined sorted sequence, got an ",
           "undefined Tensor()");
  LG_CHECK(values.defined(), op, ": expected defined values, got an undefined Tensor()");
  LG_CHECK_DTYPE(sorted_sequence.dtype() != kBool && values.dtype() != kBool, op,
                 ": expected numbers, got a sorted sequence of ", sorted_sequence.dtype(),
                 " and values of ", values.dtype());
  NoGradGuard no_grad;
  const DType common = promote_types(sorted_sequence.dtype(), values.dtype());
  Tensor out = ops::searchsorted(sorted_sequence.to(common), values.to(common), right, sorter);
  if (!out_int32) return out;
  LG_CHECK(sorted_sequence.size(-1) < (std::int64_t{1} << 31) - 1, op,
           ": out_int32 needs a sorted sequence shorter than 2^31 - 1, got one of ",
           sorted_sequence.size(-1));
  return out.to(kInt32);
}

// A number to search for as a 0-d tensor: in the sequence's integral dtype when it is an integer
// there, else in float64, so that it is compared exactly (float64 holds every element of every
// dtype exactly).
Tensor search_value(const char* op, const Tensor& sorted_sequence, double value) {
  LG_CHECK(sorted_sequence.defined(), op, ": expected a defined sorted sequence, got an ",
           "undefined Tensor()");
  const bool integral = !is_floating(sorted_sequence.dtype()) && std::trunc(value) == value &&
                        scalar_fits(value, kInt64);
  return full({}, value,
              TensorOptions(integral ? kInt64 : kFloat64).device(sorted_sequence.device()));
}

}  // namespace

// ---- Order statistics ---------------------------------------------------------------------------

Tensor median(const Tensor& input) {
  LG_PROFILE_OP(input);
  return median_of_all("median", input, /*ignore_nan=*/false);
}

std::tuple<Tensor, Tensor> median(const Tensor& input, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(input);
  return median_along("median", input, dim, keepdim, /*ignore_nan=*/false);
}

Tensor nanmedian(const Tensor& input) {
  LG_PROFILE_OP(input);
  return median_of_all("nanmedian", input, /*ignore_nan=*/true);
}

std::tuple<Tensor, Tensor> nanmedian(const Tensor& input, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(input);
  return median_along("nanmedian", input, dim, keepdim, /*ignore_nan=*/true);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& input, std::int64_t k, std::int64_t dim,
                                    bool keepdim) {
  LG_PROFILE_OP(input);
  const char* op = "kthvalue";
  const auto [x, d] = as_slices(op, input, dim);
  const std::int64_t n = x.size(d);
  LG_CHECK(k >= 1 && k <= n, op, ": k = ", k, " is out of range for dim ", d, " of size ", n,
           " (expected 1 <= k <= ", n, ")");
  Shape kept = x.shape();
  kept[static_cast<std::size_t>(d)] = 1;
  const Tensor rank =
      full(kept, static_cast<double>(k - 1), TensorOptions(kInt64).device(x.device()));
  return selected(input, x, d, position_of_rank(x, d, rank), keepdim);
}

// Note [Mode]
//   mode picks in each slice the value that occurs most often, the smallest of those that tie,
//   and the last position holding it, as PyTorch's CPU kernel. A stable ascending sort puts equal
//   values in runs, each run's positions rising (NaN last; two NaNs are one value here, where
//   PyTorch's NaN handling is its sort's accident). A run starts where an element differs from
//   the one before it; cumsum numbers the runs; each run's length is a scatter_add of ones into
//   its number, gathered back to its elements. max(dim) gives the first element of the longest
//   runs, which is the start of the smallest value's run; the run's last element (start + length
//   - 1) holds the value's last position. Compositions of sort, cumsum, scatter_add and gather:
//   every device, O(n log n) per slice as PyTorch's.
std::tuple<Tensor, Tensor> mode(const Tensor& input, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(input);
  const auto [x, d] = as_slices("mode", input, dim);
  Tensor position;
  {
    NoGradGuard no_grad;
    const std::int64_t n = x.size(d);
    const auto [sorted, order] = sort(x, d);
    const Tensor later = narrow(sorted, d, 1, n - 1), earlier = narrow(sorted, d, 0, n - 1);
    Tensor differs = ne(later, earlier);
    if (is_floating(x.dtype()))
      differs = logical_and(differs, logical_not(logical_and(isnan(later), isnan(earlier))));
    Shape kept = x.shape();
    kept[static_cast<std::size_t>(d)] = 1;
    const Tensor starts = cat({ones(kept, TensorOptions(kBool).device(x.device())), differs}, d);
    const Tensor run = sub(cumsum(starts, d), 1.0);  // int64
    const Tensor length = gather(scatter_add(zeros_like(run), d, run, ones_like(run)), d, run);
    const auto [longest, start] = max(length, d, /*keepdim=*/true);
    position = gather(order, d, add(start, sub(longest, 1.0)));
  }
  return selected(input, x, d, position, keepdim);
}

Tensor quantile(const Tensor& input, double q, std::optional<std::int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  LG_PROFILE_OP(input);
  return quantile_impl("quantile", input, scalar_q("quantile", input, q), dim, keepdim,
                       interpolation, /*ignore_nan=*/false);
}

Tensor quantile(const Tensor& input, const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  LG_PROFILE_OP(input, q);
  return quantile_impl("quantile", input, q, dim, keepdim, interpolation, /*ignore_nan=*/false);
}

Tensor nanquantile(const Tensor& input, double q, std::optional<std::int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  LG_PROFILE_OP(input);
  return quantile_impl("nanquantile", input, scalar_q("nanquantile", input, q), dim, keepdim,
                       interpolation, /*ignore_nan=*/true);
}

Tensor nanquantile(const Tensor& input, const Tensor& q, std::optional<std::int64_t> dim,
                   bool keepdim, std::string_view interpolation) {
  LG_PROFILE_OP(input, q);
  return quantile_impl("nanquantile", input, q, dim, keepdim, interpolation,
                       /*ignore_nan=*/true);
}

// ---- Reductions that skip NaN, and pairs of reductions ------------------------------------------

Tensor nansum(const Tensor& input, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "nansum: expected a defined input, got an undefined Tensor()");
  if (!is_floating(input.dtype())) return sum(input, dims, keepdim);
  return sum(masked_fill(input, isnan(input), 0.0), dims, keepdim);
}

Tensor nanmean(const Tensor& input, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "nanmean: expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()),
                 "nanmean: expected a floating input (float32, float64, float16, bfloat16), got ",
                 input.dtype(), " (shape ", input.shape(), ")");
  return autograd::in_working_precision(input, [&](const Tensor& x) {
    Tensor count;
    {
      NoGradGuard no_grad;
      count = sum(logical_not(isnan(x)), dims, keepdim);
    }
    return div(nansum(x, dims, keepdim), count);
  });
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& input, std::optional<std::int64_t> dim,
                                   bool keepdim) {
  LG_PROFILE_OP(input);
  const char* op = "aminmax";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  std::vector<std::int64_t> dims;
  if (dim.has_value()) {
    const std::int64_t d = wrap_dim(*dim, input.dim(), op);
    LG_CHECK_SHAPE(input.dim() == 0 || input.size(d) > 0, op, ": expected a non-empty dim ", d,
                   " (the extrema of nothing are undefined), got shape ", input.shape());
    dims.push_back(d);
  } else {
    LG_CHECK_SHAPE(input.numel() > 0, op, ": expected a non-empty input (the extrema of ",
                   "nothing are undefined), got shape ", input.shape());
  }
  return {amin(input, dims, keepdim), amax(input, dims, keepdim)};
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& input, const DimList& dims, bool unbiased,
                                    bool keepdim) {
  LG_PROFILE_OP(input);
  return {var(input, dims, unbiased, keepdim), mean(input, dims, keepdim)};
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& input, const DimList& dims, bool unbiased,
                                    bool keepdim) {
  LG_PROFILE_OP(input);
  return {std(input, dims, unbiased, keepdim), mean(input, dims, keepdim)};
}

Tensor histc(const Tensor& input, std::int64_t bins, double min, double max) {
  LG_PROFILE_OP(input);
  const char* op = "histc";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()), op,
                 ": expected a floating input (float32, float64, float16, bfloat16), got ",
                 input.dtype(), " (shape ", input.shape(), ")");
  LG_CHECK(bins > 0, op, ": expected bins > 0, got ", bins);
  NoGradGuard no_grad;
  const Tensor x = reshape(input, {-1});
  double lo = min;
  double hi = max;
  // An empty range (min == max, 0 and 0 by default) takes the data's, as torch's.
  if (lo == hi && x.numel() > 0) {
    lo = amin(x).item<double>();
    hi = amax(x).item<double>();
  }
  LG_CHECK(std::isfinite(lo) && std::isfinite(hi), op, ": the range [", lo, ", ", hi,
           "] is not finite");
  LG_CHECK(lo <= hi, op, ": expected max >= min, got min ", lo, " and max ", hi);
  if (lo == hi) {
    lo -= 1.0;
    hi += 1.0;
  }
  // The edges and their difference in the input's dtype, as torch's (rounded to it first).
  const Tensor left = full({}, lo, input.options());
  const Tensor right = full({}, hi, input.options());
  const Tensor in_range = logical_and(ge(x, left), le(x, right));
  const Tensor position =
      div(mul(sub(x, left), static_cast<double>(bins)), sub(right, left)).to(kInt64);
  const Tensor bin = masked_select(clamp_max(position, static_cast<double>(bins - 1)), in_range);
  return bincount(bin, Tensor(), bins).to(input.dtype());
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& input, bool return_inverse,
                                                      bool return_counts,
                                                      std::optional<std::int64_t> dim) {
  LG_PROFILE_OP(input);
  const char* op = "unique_consecutive";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(!dim.has_value() || input.dim() > 0, op,
                 ": a dim was given for a 0-d input (leave it out to take the elements)");
  NoGradGuard no_grad;
  const Tensor x = dim.has_value() ? input : reshape(input, {-1});
  const std::int64_t d = dim.has_value() ? wrap_dim(*dim, input.dim(), op) : 0;
  const std::int64_t n = x.size(d);
  for (std::int64_t i = 0; i < x.dim() && dim.has_value() && n > 0; ++i) {
    // As unique_dim and torch: slices with no elements cannot be told apart (they made one run).
    LG_CHECK_SHAPE(i == d || x.size(i) > 0, op, ": dim ", i, " of shape ", x.shape(),
                   " is empty and is not dim ", d, ": its slices have no elements to compare");
  }
  const TensorOptions index_options = TensorOptions(kInt64).device(input.device());
  Tensor output, inverse, counts;
  if (n == 0) {
    output = clone(x);
    inverse = zeros(dim.has_value() ? Shape{0} : input.shape(), index_options);
    counts = zeros({0}, index_options);
  } else {
    // starts[j]: slice j begins a run (it differs from slice j - 1 somewhere; NaN differs).
    Tensor starts = ones({1}, TensorOptions(kBool).device(input.device()));
    if (n > 1) {
      Tensor differs = ne(narrow(x, d, 1, n - 1), narrow(x, d, 0, n - 1));
      if (x.dim() > 1) differs = any(reshape(movedim(differs, d, 0), {n - 1, -1}), {1});
      starts = cat({starts, differs}, 0);
    }
    const Tensor first = reshape(nonzero(starts), {-1});  // where each run begins
    const std::int64_t runs = first.numel();
    output = index_select(x, d, first);
    inverse = sub(cumsum(starts, 0), 1.0);
    if (!dim.has_value()) inverse = reshape(inverse, input.shape());
    counts = sub(
        cat({narrow(first, 0, 1, runs - 1), full({1}, static_cast<double>(n), index_options)}, 0),
        first);
  }
  const Tensor none = zeros({0}, index_options);
  return {output, return_inverse ? inverse : none, return_counts ? counts : none};
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& input, bool /*sorted*/, bool return_inverse,
                                          bool return_counts, std::optional<std::int64_t> dim) {
  if (dim.has_value()) return unique_dim(input, *dim, true, return_inverse, return_counts);
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "unique: expected a defined input, got an undefined Tensor()");
  NoGradGuard no_grad;
  // The runs of the sorted elements (a stable sort: NaN last, each its own run), and each
  // element's run sent back to its place through the sort's order.
  const auto [values, order] = sort(reshape(input, {input.numel()}));
  auto [output, in_sorted, counts] = unique_consecutive(values, true, return_counts);
  Tensor inverse = zeros({0}, TensorOptions(kInt64).device(input.device()));
  if (return_inverse) {
    inverse = reshape(scatter(zeros_like(in_sorted), 0, order, in_sorted), input.shape());
  }
  return {output, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& input, std::int64_t dim,
                                              bool /*sorted*/, bool return_inverse,
                                              bool return_counts) {
  LG_PROFILE_OP(input);
  const char* op = "unique_dim";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() > 0, op, ": expected at least 1 dim, got a 0-d input");
  const std::int64_t d = wrap_dim(dim, input.dim(), op);
  for (std::int64_t i = 0; i < input.dim(); ++i) {
    LG_CHECK_SHAPE(i == d || input.size(i) > 0, op, ": dim ", i, " of shape ", input.shape(),
                   " is empty and is not dim ", d, ": its slices have no elements to compare");
  }
  NoGradGuard no_grad;
  // The slices along d as the rows of a (s, m) matrix, ordered lexicographically by stable sorts
  // on one column at a time, the last first; then the runs of equal rows.
  const Tensor moved = movedim(input, d, 0);
  const std::int64_t s = moved.size(0);
  const std::int64_t m = s == 0 ? 0 : moved.numel() / s;
  const Tensor rows = reshape(moved, {s, m});
  Tensor order = arange(static_cast<double>(s), TensorOptions(kInt64).device(input.device()));
  for (std::int64_t j = m - 1; j >= 0 && s > 1; --j) {
    const Tensor key = index_select(select(rows, 1, j), 0, order);
    order = index_select(order, 0, std::get<1>(sort(key)));
  }
  auto [runs, in_sorted, counts] =
      unique_consecutive(index_select(rows, 0, order), true, return_counts, 0);
  Shape shape = moved.shape();
  shape[0] = runs.size(0);
  const Tensor output = movedim(reshape(runs, shape), 0, d);
  Tensor inverse = zeros({0}, TensorOptions(kInt64).device(input.device()));
  if (return_inverse) inverse = scatter(zeros_like(in_sorted), 0, order, in_sorted);
  return {output, inverse, counts};
}

namespace {

// The span of `values`' bins: range ({lo, hi}, finite, lo <= hi) or the values' own smallest and
// largest (one read back, as PyTorch's), widened by 1/2 each way when equal.
std::pair<double, double> bin_range(const char* op, const Tensor& values,
                                    std::optional<std::pair<double, double>> range) {
  double lo = 0.0;
  double hi = 0.0;
  if (range.has_value()) {
    std::tie(lo, hi) = *range;
    LG_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, op,
             ": expected a finite range with lo <= hi, got {", lo, ", ", hi, "}");
  } else if (values.numel() > 0) {
    NoGradGuard no_grad;
    const auto [smallest, largest] = aminmax(values.detach());
    lo = smallest.to(kFloat64).item<double>();
    hi = largest.to(kFloat64).item<double>();
    LG_CHECK(std::isfinite(lo) && std::isfinite(hi), op, ": the input's range [", lo, ", ", hi,
             "] is not finite (it holds NaN or an infinity): give the range");
  }
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  return {lo, hi};
}

// The checks of one dim's bin edges against input: 1-d, at least one bin, input's dtype and
// device, increasing (no NaN).
void check_edges(const char* op, const Tensor& input, const Tensor& edges) {
  LG_CHECK(edges.defined(), op, ": expected defined bin_edges, got an undefined Tensor()");
  LG_CHECK_SHAPE(edges.dim() == 1 && edges.numel() >= 2, op,
                 ": expected 1-d bin_edges of at least 2 values (one bin), got shape ",
                 edges.shape());
  LG_CHECK_DTYPE(edges.dtype() == input.dtype(), op, ": expected bin_edges of input's dtype ",
                 input.dtype(), ", got ", edges.dtype());
  LG_CHECK_DEVICE(edges.device() == input.device(), op, ": input is on ", input.device(),
                  " but bin_edges on ", edges.device());
  const std::int64_t bins = edges.numel() - 1;
  NoGradGuard no_grad;
  LG_CHECK(ge(narrow(edges, 0, 1, bins), narrow(edges, 0, 0, bins)).all().item<bool>(), op,
           ": expected increasing bin_edges (and no NaN)");
}

// Each value's bin among edges, and whether it lies within them: bin i holds edges[i] <= x <
// edges[i + 1] (the last its right edge too), the insertion point after equal edges, less one.
// NaN lies within none.
std::pair<Tensor, Tensor> bin_of(const Tensor& edges, const Tensor& x) {
  const std::int64_t bins = edges.numel() - 1;
  const Tensor inside = logical_and(ge(x, select(edges, 0, 0)), le(x, select(edges, 0, bins)));
  const Tensor bin = clamp(sub(searchsorted(edges, x, false, /*right=*/true), 1.0), 0.0,
                           static_cast<double>(bins - 1));
  return {bin, inside};
}

// The weights of input's `count` points (ones without weight), checked against `shape`.
Tensor point_weights(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                     const Shape& shape, std::int64_t count) {
  if (!weight.has_value()) return ones({count}, input.options());
  LG_CHECK(weight->defined(), op, ": weight is an undefined Tensor()");
  LG_CHECK_SHAPE(weight->shape() == shape, op, ": expected weight of shape ", shape, ", got ",
                 weight->shape());
  LG_CHECK_DTYPE(weight->dtype() == input.dtype(), op, ": expected weight of input's dtype ",
                 input.dtype(), ", got ", weight->dtype());
  LG_CHECK_DEVICE(weight->device() == input.device(), op, ": input is on ", input.device(),
                  " but weight on ", weight->device());
  return reshape(weight->detach(), {count});
}

// The number D of coordinates of histogramdd's points input (..., D): defined, floating, D >= 1.
std::int64_t point_dims(const char* op, const Tensor& input) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()), op, ": expected a floating input, got ",
                 input.dtype());
  LG_CHECK_SHAPE(input.dim() >= 1 && input.size(-1) >= 1, op,
                 ": expected input (..., D) with D >= 1 coordinates, got shape ", input.shape());
  return input.size(-1);
}

// Each bin's width, edges[i + 1] - edges[i].
Tensor bin_widths(const Tensor& edges) {
  const std::int64_t bins = edges.numel() - 1;
  return sub(narrow(edges, 0, 1, bins), narrow(edges, 0, 0, bins));
}

}  // namespace

std::tuple<Tensor, Tensor> histogram(const Tensor& input, std::int64_t bins,
                                     const std::optional<std::vector<double>>& range,
                                     const std::optional<Tensor>& weight, bool density) {
  LG_PROFILE_OP(input);
  const char* op = "histogram";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()), op, ": expected a floating input, got ",
                 input.dtype());
  LG_CHECK(bins >= 1, op, ": expected at least 1 bin, got ", bins);
  std::optional<std::pair<double, double>> span;
  if (range.has_value()) {
    LG_CHECK(range->size() == 2, op, ": expected a range of 2 values {lo, hi}, got ",
             range->size());
    span = std::pair((*range)[0], (*range)[1]);
  }
  const auto [lo, hi] = bin_range(op, input, span);
  return histogram(input, linspace(lo, hi, bins + 1, input.options()), weight, density);
}

std::tuple<Tensor, Tensor> histogram(const Tensor& input, const Tensor& bin_edges,
                                     const std::optional<Tensor>& weight, bool density) {
  LG_PROFILE_OP(input, bin_edges);
  const char* op = "histogram";
  LG_CHECK(input.defined() && bin_edges.defined(), op,
           ": expected a defined input and bin_edges, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()), op, ": expected a floating input, got ",
                 input.dtype());
  check_edges(op, input, bin_edges);
  const std::int64_t bins = bin_edges.numel() - 1;
  NoGradGuard no_grad;
  const Tensor edges = bin_edges.detach();
  const Tensor x = reshape(input.detach(), {input.numel()});
  const Tensor w = point_weights(op, input, weight, input.shape(), input.numel());
  const auto [bin, inside] = bin_of(edges, x);  // outside the edges and NaN weigh 0
  Tensor hist =
      scatter_add(zeros({bins}, input.options()), 0, bin, where(inside, w, zeros_like(w)));
  if (density) hist = div(hist, mul(sum(hist), bin_widths(edges)));
  return {hist, clone(edges)};
}

std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& input,
                                                    const std::vector<std::int64_t>& bins,
                                                    const std::optional<std::vector<double>>& range,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  LG_PROFILE_OP(input);
  const char* op = "histogramdd";
  const std::int64_t dims = point_dims(op, input);
  LG_CHECK(static_cast<std::int64_t>(bins.size()) == dims, op, ": expected ", dims,
           " bin counts (one per coordinate of input ", input.shape(), "), got ", bins.size());
  LG_CHECK(!range.has_value() || static_cast<std::int64_t>(range->size()) == 2 * dims, op,
           ": expected a range of ", 2 * dims, " values {lo_0, hi_0, ...}, got ",
           range.has_value() ? range->size() : 0);
  std::vector<Tensor> edges;
  for (std::int64_t d = 0; d < dims; ++d) {
    const std::int64_t count = bins[static_cast<std::size_t>(d)];
    LG_CHECK(count >= 1, op, ": expected at least 1 bin in every dim, got ", count, " in dim ", d);
    std::optional<std::pair<double, double>> span;
    if (range.has_value()) {
      span = std::pair((*range)[static_cast<std::size_t>(2 * d)],
                       (*range)[static_cast<std::size_t>(2 * d + 1)]);
    }
    const auto [lo, hi] = bin_range(op, select(input, -1, d), span);
    edges.push_back(linspace(lo, hi, count + 1, input.options()));
  }
  return histogramdd(input, edges, weight, density);
}

std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& input, std::int64_t bins,
                                                    const std::optional<std::vector<double>>& range,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  const std::int64_t dims = point_dims("histogramdd", input);
  return histogramdd(input, std::vector<std::int64_t>(static_cast<std::size_t>(dims), bins), range,
                     weight, density);
}

std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& input,
                                                    const std::vector<Tensor>& bin_edges,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  LG_PROFILE_OP(input);
  const char* op = "histogramdd";
  const std::int64_t dims = point_dims(op, input);
  LG_CHECK(static_cast<std::int64_t>(bin_edges.size()) == dims, op, ": expected ", dims,
           " bin_edges (one per coordinate of input ", input.shape(), "), got ", bin_edges.size());
  Shape hist_shape;
  std::int64_t cells = 1;
  for (const Tensor& e : bin_edges) {
    check_edges(op, input, e);
    hist_shape.push_back(e.numel() - 1);
    cells = checked_mul(cells, e.numel() - 1, op);
  }
  NoGradGuard no_grad;
  const std::int64_t count = input.numel() / dims;
  const Tensor points = reshape(input.detach(), {count, dims});
  const Shape point_shape(input.shape().begin(), input.shape().end() - 1);
  const Tensor w = point_weights(op, input, weight, point_shape, count);
  // The cell of each point, row-major over the dims' bins; a point outside any dim weighs 0.
  Tensor cell = zeros({count}, TensorOptions(kInt64).device(input.device()));
  Tensor inside = ones({count}, TensorOptions(kBool).device(input.device()));
  for (std::int64_t d = 0; d < dims; ++d) {
    const auto [bin, within] =
        bin_of(bin_edges[static_cast<std::size_t>(d)].detach(), select(points, 1, d));
    cell = add(mul(cell, hist_shape[static_cast<std::size_t>(d)]), bin);
    inside = logical_and(inside, within);
  }
  Tensor hist = reshape(
      scatter_add(zeros({cells}, input.options()), 0, cell, where(inside, w, zeros_like(w))),
      hist_shape);
  if (density) {
    // Each cell's volume, the product of its dims' widths, broadcast from one dim at a time.
    Tensor volume = ones({}, input.options());
    for (std::int64_t d = 0; d < dims; ++d) {
      Shape along(static_cast<std::size_t>(dims), 1);
      along[static_cast<std::size_t>(d)] = hist_shape[static_cast<std::size_t>(d)];
      volume =
          mul(volume, reshape(bin_widths(bin_edges[static_cast<std::size_t>(d)].detach()), along));
    }
    hist = div(hist, mul(sum(hist), volume));
  }
  std::vector<Tensor> edges_out;
  for (const Tensor& e : bin_edges)
    edges_out.push_back(clone(e.detach()));
  return {hist, edges_out};
}

// ---- Searching sorted sequences -----------------------------------------------------------------

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  LG_PROFILE_OP(sorted_sequence, input);
  const char* op = "searchsorted";
  return search(op, sorted_sequence, input, out_int32, search_right(op, right, side), sorter);
}

Tensor searchsorted(const Tensor& sorted_sequence, double value, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  LG_PROFILE_OP(sorted_sequence);
  const char* op = "searchsorted";
  LG_CHECK_SHAPE(!sorted_sequence.defined() || sorted_sequence.dim() == 1, op,
                 ": a number is searched for in a 1-d sorted sequence, got shape ",
                 sorted_sequence.shape());
  return search(op, sorted_sequence, search_value(op, sorted_sequence, value), out_int32,
                search_right(op, right, side), sorter);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  LG_PROFILE_OP(input, boundaries);
  const char* op = "bucketize";
  LG_CHECK_SHAPE(!boundaries.defined() || boundaries.dim() == 1, op,
                 ": expected 1-d boundaries, got shape ", boundaries.shape());
  return search(op, boundaries, input, out_int32, right, Tensor());
}

Tensor bucketize(double value, const Tensor& boundaries, bool out_int32, bool right) {
  LG_PROFILE_OP(boundaries);
  const char* op = "bucketize";
  LG_CHECK_SHAPE(!boundaries.defined() || boundaries.dim() == 1, op,
                 ": expected 1-d boundaries, got shape ", boundaries.shape());
  return search(op, boundaries, search_value(op, boundaries, value), out_int32, right, Tensor());
}

// ---- Covariance and integration ----------------------------------------------------------------
namespace {

// A weight vector of cov (fweights or aweights): `observations` elements of an integral
// (fweights) or floating (aweights) dtype, none negative (read on the host), on x's device; in
// x's dtype.
Tensor observation_weights(const char* what, const Tensor& weights, const Tensor& x,
                           bool integral) {
  const std::int64_t observations = x.size(1);
  LG_CHECK(weights.defined(), "cov: ", what, " is an undefined Tensor()");
  LG_CHECK_SHAPE(weights.dim() <= 1 && weights.numel() == observations, "cov: expected ", what,
                 " of ", observations, " elements (one per observation), got shape ",
                 weights.shape());
  LG_CHECK_DTYPE(integral ? is_integral(weights.dtype()) : is_floating(weights.dtype()),
                 "cov: ", "expected ", what, " of ", integral ? "an integral" : "a floating",
                 " dtype, got ", weights.dtype());
  LG_CHECK_DEVICE(weights.device() == x.device(), "cov: input is on ", x.device(), " but ", what,
                  " is on ", weights.device());
  LG_CHECK(observations == 0 || amin(weights.detach()).to(kFloat64).item<double>() >= 0.0,
           "cov: ", what, " cannot be negative");
  return reshape(weights, {observations}).to(x.dtype());
}

// y's dim `dim` (wrapped) for the integration functions.
std::int64_t integration_dim(const char* op, const Tensor& y, std::int64_t dim) {
  LG_CHECK(y.defined(), op, ": expected a defined y, got an undefined Tensor()");
  LG_CHECK_SHAPE(y.dim() >= 1, op, ": expected y of at least 1 dim, got a 0-d tensor");
  return wrap_dim(dim, y.dim(), op);
}

// The spacings x[i + 1] - x[i] along dim d of sample points x (1-d with y's size along d, or of
// y's rank or less, its size along d y's), shaped to broadcast with y's pieces.
Tensor spacings(const char* op, const Tensor& y, const Tensor& x, std::int64_t d) {
  LG_CHECK(x.defined(), op, ": expected defined sample points x, got an undefined Tensor()");
  LG_CHECK_DEVICE(x.device() == y.device(), op, ": y is on ", y.device(), " but x is on ",
                  x.device());
  const std::int64_t n = y.size(d);
  Tensor points;
  if (x.dim() == 1) {
    LG_CHECK_SHAPE(x.size(0) == n, op, ": expected one x for each of y's ", n,
                   " samples along dim ", d, ", got x of shape ", x.shape());
    Shape shape(static_cast<std::size_t>(y.dim()), 1);
    shape[static_cast<std::size_t>(d)] = n;
    points = reshape(x, shape);
  } else {
    LG_CHECK_SHAPE(x.dim() <= y.dim(), op, ": x of shape ", x.shape(), " has more dims than y ",
                   y.shape());
    Shape shape(static_cast<std::size_t>(y.dim() - x.dim()), 1);
    shape.insert(shape.end(), x.shape().begin(), x.shape().end());
    points = reshape(x, shape);
    LG_CHECK_SHAPE(points.size(d) == n, op, ": expected x with y's size ", n, " along dim ", d,
                   ", got x of shape ", x.shape(), " for y of shape ", y.shape());
  }
  return sub(narrow(points, d, 1, n - 1), narrow(points, d, 0, n - 1));
}

// y[i] + y[i + 1] along dim d (n - 1 of them), the trapezoids' heights doubled.
Tensor neighbour_sums(const Tensor& y, std::int64_t d) {
  const std::int64_t n = y.size(d);
  return add(narrow(y, d, 0, n - 1), narrow(y, d, 1, n - 1));
}

// y without dim d, zeros: the integral over no samples.
Tensor no_samples(const Tensor& y, std::int64_t d) {
  return sum(narrow(y, d, 0, 0), d);
}

}  // namespace

Tensor cov(const Tensor& input, std::int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  LG_PROFILE_OP(input);
  const char* op = "cov";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() <= 2, op,
                 ": expected input of at most 2 dims (variables, observations), got shape ",
                 input.shape());
  const Tensor x = input.dim() == 2 ? floating_or_float32(input)
                                    : reshape(floating_or_float32(input), {1, input.numel()});
  // w: the weight of each observation, fweights times aweights.
  Tensor w;
  Tensor a;
  if (fweights) w = observation_weights("fweights", *fweights, x, /*integral=*/true);
  if (aweights) {
    a = observation_weights("aweights", *aweights, x, /*integral=*/false);
    w = w.defined() ? mul(w, a) : a;
  }
  // PyTorch's estimate: the weighted mean, the weighted products of the deviations, and the
  // divisor sum(w) - correction (sum(w) - correction sum(w a) / sum(w) with aweights).
  Tensor centered;
  Tensor products;
  Tensor divisor;
  if (w.defined()) {
    const Tensor w_sum = sum(w);
    centered = sub(x, unsqueeze(div(sum(mul(x, w), 1), w_sum), 1));
    products = matmul(centered, t(mul(centered, w)));
    divisor = a.defined() && correction != 0
                  ? sub(w_sum, mul(div(sum(mul(w, a)), w_sum), static_cast<double>(correction)))
                  : sub(w_sum, static_cast<double>(correction));
  } else {
    centered = sub(x, mean(x, 1, /*keepdim=*/true));
    products = matmul(centered, t(centered));
    divisor = full({}, static_cast<double>(x.size(1) - correction), x.options());
  }
  // No degrees of freedom left: NaN (PyTorch divides by 0).
  divisor = masked_fill(divisor, le(divisor, 0.0), std::nan(""));
  return squeeze(div(products, divisor));
}

Tensor corrcoef(const Tensor& input) {
  LG_PROFILE_OP(input);
  const Tensor c = cov(input);
  if (c.dim() == 0) return div(c, c);
  const Tensor stddev = sqrt(diagonal(c));
  return clamp(div(div(c, unsqueeze(stddev, 1)), unsqueeze(stddev, 0)), -1.0, 1.0);
}

Tensor trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim) {
  LG_PROFILE_OP(y, x);
  const char* op = "trapezoid";
  const std::int64_t d = integration_dim(op, y, dim);
  const Tensor values = floating_or_float32(y);
  const std::int64_t n = values.size(d);
  if (n == 0) return no_samples(values, d);
  const Tensor dx = spacings(op, values, x, d);
  // PyTorch's sum of dx (y[i] + y[i + 1]), halved.
  return div(sum(mul(dx, neighbour_sums(values, d)), d), 2.0);
}

Tensor trapezoid(const Tensor& y, double dx, std::int64_t dim) {
  LG_PROFILE_OP(y);
  const std::int64_t d = integration_dim("trapezoid", y, dim);
  const Tensor values = floating_or_float32(y);
  if (values.size(d) == 0) return no_samples(values, d);
  // PyTorch's form for even spacing: (sum - (first + last) / 2) dx.
  const Tensor ends = add(select(values, d, 0), select(values, d, values.size(d) - 1));
  return mul(sub(sum(values, d), mul(ends, 0.5)), dx);
}

Tensor trapz(const Tensor& y, const Tensor& x, std::int64_t dim) {
  return trapezoid(y, x, dim);
}

Tensor trapz(const Tensor& y, double dx, std::int64_t dim) {
  return trapezoid(y, dx, dim);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim) {
  LG_PROFILE_OP(y, x);
  const char* op = "cumulative_trapezoid";
  const std::int64_t d = integration_dim(op, y, dim);
  const Tensor values = floating_or_float32(y);
  const std::int64_t n = values.size(d);
  if (n <= 1) return clone(narrow(values, d, 0, 0));
  const Tensor dx = spacings(op, values, x, d);
  return div(cumsum(mul(neighbour_sums(values, d), dx), d), 2.0);
}

Tensor cumulative_trapezoid(const Tensor& y, double dx, std::int64_t dim) {
  LG_PROFILE_OP(y);
  const std::int64_t d = integration_dim("cumulative_trapezoid", y, dim);
  const Tensor values = floating_or_float32(y);
  const std::int64_t n = values.size(d);
  if (n <= 1) return clone(narrow(values, d, 0, 0));
  return cumsum(mul(neighbour_sums(values, d), dx / 2.0), d);
}

}  // namespace leangrad
