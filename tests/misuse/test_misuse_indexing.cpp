// Misuse of indexing by tensors, splitting and rearranging (autograd/indexing_functions.h) and of
// the reductions of autograd/reduction_functions.h: indices out of range (the message names the
// index and its position), of the wrong dtype, rank or device, index shapes larger than the
// input or src, bad split sizes and chunk counts, repeated dims, shifts without their dims, too
// few or negative repeats, padding that leaves nothing, overflows or copies what is not there,
// bad class indices, norm orders below 0, top-k beyond the size, and bmm, dot and outer of the
// wrong shapes or dtypes; and the products, running reductions, order statistics and searches of
// autograd/statistics_functions.h (the Statistics table); and the scatters, index_copy,
// index_reduce and index_put_ with accumulate (the Scatter table).
// Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

Tensor int64s(std::vector<std::int64_t> values) {
  return tensor(std::move(values));
}

std::vector<MisuseCase> index_cases() {
  MisuseTable t;
  t.add("index_select_index_past_end", Raises::Error,
        {"index_select: index 4 at position 1 is out of range for dim 1 of the input, of size 4 "
         "(expected [0, 3])"},
        [] {
          index_select(ones({3, 4}), 1, int64s({0, 4}));
        });
  t.add("index_select_negative_index", Raises::Error, {"index_select", "index -1 at position 0"},
        [] {
          index_select(ones({3, 4}), 0, int64s({-1}));
        });
  t.add("index_select_float_index", Raises::DTypeError,
        {"index_select", "int64 or int32 indices", "float32"}, [] {
          index_select(ones({3, 4}), 0, ones({1}));
        });
  t.add("index_select_2d_index", Raises::ShapeError, {"index_select", "0-d or 1-d index", "[1, 1]"},
        [] {
          index_select(ones({3, 4}), 0, zeros({1, 1}, TensorOptions(kInt64)));
        });
  t.add("index_select_dim_out_of_range", Raises::ShapeError, {"index_select", "dimension 2"}, [] {
    index_select(ones({3, 4}), 2, int64s({0}));
  });
  t.add("index_select_0d_input_two_indices", Raises::ShapeError,
        {"index_select", "0-d input takes one index, got 2"}, [] {
          index_select(ones({}), 0, int64s({0, 0}));
        });
  t.add("index_select_undefined_input", Raises::Error, {"index_select", "defined input"},
        [] { index_select(Tensor(), 0, int64s({0})); });
  t.add("gather_negative_index", Raises::Error, {"gather: index -1 at position 1", "dim 0"}, [] {
    gather(ones({3, 4}), 0, tensor(std::vector<std::int64_t>{0, -1}, {1, 2}));
  });
  t.add("gather_float_index", Raises::DTypeError, {"gather", "expected int64 indices", "float32"},
        [] {
          gather(ones({3, 4}), 0, zeros({1, 1}));
        });
  t.add("gather_int32_index", Raises::DTypeError, {"gather", "int32"}, [] {
    gather(ones({3, 4}), 0, zeros({1, 1}, kInt32));
  });
  t.add("gather_rank", Raises::ShapeError, {"gather", "index of shape [1] has 1 dims", "[3, 4]"},
        [] {
          gather(ones({3, 4}), 0, int64s({0}));
        });
  t.add("gather_index_larger_in_another_dim", Raises::ShapeError,
        {"gather", "larger than the input of shape [3, 4] in dim 1"}, [] {
          gather(ones({3, 4}), 0, zeros({2, 5}, TensorOptions(kInt64)));
        });
  t.add("gather_index_larger_than_0d_input", Raises::ShapeError, {"gather", "0-d input"}, [] {
    gather(ones({}), 0, int64s({0, 0}));
  });
  t.add("gather_13_dims", Raises::ShapeError, {"gather", "13 dims (at most 12 are supported)"}, [] {
    const Shape shape(13, 1);  // views: the fill of ones(shape) refuses 13 dims itself
    gather(ones({1}).view(shape), 0, zeros({1}, TensorOptions(kInt64)).view(shape));
  });
  t.add(
      "scatter_add_src_dtype", Raises::DTypeError,
      {"scatter_add: src is float64, the input float32"}, [] {
        scatter_add(ones({3, 4}), 0, zeros({1, 1}, TensorOptions(kInt64)), zeros({1, 1}, kFloat64));
      });
  t.add("scatter_add_src_smaller_than_index", Raises::ShapeError,
        {"scatter_add", "larger than src of shape [1, 2] in dim 0"}, [] {
          scatter_add(ones({3, 4}), 0, zeros({2, 2}, TensorOptions(kInt64)), zeros({1, 2}));
        });
  t.add("scatter_add_bool_input", Raises::DTypeError,
        {"scatter_add: expected a floating, int64 or int32 input, got bool"},
        [] { scatter_add(zeros({2}, kBool), 0, int64s({0}), zeros({1}, kBool)); });
  t.add("scatter_add_index_past_end", Raises::Error,
        {"scatter_add: index 3 at position 0", "dim 0 of the input, of size 3"},
        [] { scatter_add(zeros({3}), 0, int64s({3}), ones({1})); });
  t.add("scatter_add_undefined_src", Raises::Error, {"scatter_add", "defined src"},
        [] { scatter_add(zeros({3}), 0, int64s({0}), Tensor()); });
  return t.cases();
}
LG_MISUSE_SUITE(IndexByTensor, index_cases());

std::vector<MisuseCase> splitting_cases() {
  MisuseTable t;
  t.add("narrow_past_the_end", Raises::Error,
        {"narrow: start 5 + length 2 exceeds dim 0 of size 6"}, [] {
          narrow(zeros({6, 2}), 0, 5, 2);
        });
  t.add("narrow_start_before_the_start", Raises::Error,
        {"narrow: start -7 is out of range for dim 0 of size 6"}, [] {
          narrow(zeros({6, 2}), 0, -7, 1);
        });
  t.add("narrow_negative_length", Raises::Error, {"narrow", "length -1"}, [] {
    narrow(zeros({6, 2}), 0, 0, -1);
  });
  t.add("split_size_0", Raises::Error, {"split: split_size 0 cannot split dim 0 of size 6"}, [] {
    split(zeros({6, 2}), 0);
  });
  t.add("split_with_sizes_short", Raises::Error,
        {"split_with_sizes: split_sizes [2, 3] add up to 5, dim 0 has size 6"}, [] {
          split_with_sizes(zeros({6, 2}), {2, 3});
        });
  t.add("split_with_sizes_too_long", Raises::Error, {"split_with_sizes", "[4, 4]"}, [] {
    split_with_sizes(zeros({6, 2}), {4, 4});
  });
  t.add("split_with_sizes_negative", Raises::Error, {"split_with_sizes", "[7, -1]"}, [] {
    split_with_sizes(zeros({6, 2}), {7, -1});
  });
  t.add("chunk_0", Raises::Error, {"chunk: expected a positive number of chunks, got 0"}, [] {
    chunk(zeros({6, 2}), 0);
  });
  t.add("unbind_0d", Raises::ShapeError, {"unbind: expected an input of at least 1 dim"},
        [] { unbind(zeros({})); });
  return t.cases();
}
LG_MISUSE_SUITE(Splitting, splitting_cases());

std::vector<MisuseCase> rearranging_cases() {
  MisuseTable t;
  t.add("flip_dim_twice", Raises::Error, {"flip: dim 1 appears twice in dims [1, -1]"}, [] {
    flip(zeros({2, 3}), {1, -1});
  });
  t.add("roll_shifts_for_other_dims", Raises::Error, {"roll: 2 shifts for 1 dims"}, [] {
    roll(zeros({2, 3}), {1, 2}, {0});
  });
  t.add("roll_two_shifts_no_dims", Raises::Error, {"roll: with no dims, expected one shift"}, [] {
    roll(zeros({2, 3}), {1, 2});
  });
  t.add("repeat_too_few", Raises::ShapeError, {"repeat: 1 repeats for an input of shape [2, 3]"},
        [] {
          repeat(zeros({2, 3}), {2});
        });
  t.add("repeat_negative", Raises::Error, {"repeat: repeats [2, -1] hold a negative count"}, [] {
    repeat(zeros({2, 3}), {2, -1});
  });
  t.add("repeat_overflowing", Raises::ShapeError, {"repeat"}, [] {
    repeat(zeros({2, 3}), {std::int64_t{1} << 40, std::int64_t{1} << 40});
  });
  t.add("tril_1d", Raises::ShapeError,
        {"tril: expected an input of at least 2 dims, got shape [3]"}, [] { tril(zeros({3})); });
  t.add("triu_undefined", Raises::Error, {"triu", "defined input"}, [] { triu(Tensor()); });
  t.add("pad_odd_length", Raises::ShapeError, {"pad: expected (before, after) pairs"}, [] {
    pad(zeros({2, 3}), {1});
  });
  t.add("pad_more_dims_than_the_input", Raises::ShapeError,
        {"pad: expected (before, after) pairs for at most the 2 dims"}, [] {
          pad(zeros({2, 3}), {1, 1, 1, 1, 1, 1});
        });
  t.add("pad_cuts_everything", Raises::ShapeError, {"pad: pad [-2, -2] leaves no valid dim 1"}, [] {
    pad(zeros({2, 3}), {-2, -2});
  });
  t.add("pad_overflowing", Raises::ShapeError, {"pad"}, [] {
    pad(zeros({2, 3}), {std::numeric_limits<std::int64_t>::max(), 1});
  });
  t.add("pad_reflect_as_large_as_the_dim", Raises::ShapeError,
        {"pad: reflect padding of dim 1 must be smaller than its size 3", "[3, 0]", "[2, 3]"}, [] {
          pad(zeros({2, 3}), {3, 0}, kReflect);
        });
  t.add("pad_circular_beyond_the_dim", Raises::ShapeError,
        {"pad: circular padding of dim 0 must be at most its size 2", "[0, 0, 0, 3]"}, [] {
          pad(zeros({2, 3}), {0, 0, 0, 3}, kCircular);
        });
  t.add("pad_replicate_empty_dim", Raises::ShapeError,
        {"pad: replicate padding of dim 1 needs elements to copy", "[2, 0]"}, [] {
          pad(zeros({2, 0}), {1, 1}, kReplicate);
        });
  t.add("pad_circular_after_cutting_everything", Raises::ShapeError,
        {"pad: circular padding of dim 1 needs elements to copy"}, [] {
          pad(zeros({2, 2}), {-2, 1}, kCircular);
        });
  t.add("pad_reflect_with_a_value", Raises::Error,
        {"pad: a value (1.5) is only for constant padding, not reflect"}, [] {
          pad(zeros({2, 3}), {1, 1}, kReflect, 1.5);
        });
  t.add("pad_replicate_beyond_any_memory", Raises::ShapeError, {"pad: a int64 tensor of shape"},
        [] {
          pad(zeros({0, 3}), {std::int64_t{1} << 61, 0}, kReplicate);
        });
  t.add("one_hot_class_past_the_end", Raises::Error,
        {"one_hot: class index 3 is out of range for 3 classes"}, [] {
          one_hot(int64s({0, 3}), 3);
        });
  t.add("one_hot_negative_class", Raises::Error, {"one_hot: class index -1 is negative"},
        [] { one_hot(int64s({-1})); });
  t.add("one_hot_float_indices", Raises::DTypeError,
        {"one_hot: expected int64 indices, got float32"}, [] { one_hot(zeros({2})); });
  t.add("one_hot_empty_without_classes", Raises::Error, {"one_hot", "empty indices"},
        [] { one_hot(zeros({0}, TensorOptions(kInt64))); });
  return t.cases();
}
LG_MISUSE_SUITE(Rearranging, rearranging_cases());

std::vector<MisuseCase> reduction_cases() {
  MisuseTable t;
  t.add("norm_negative_p", Raises::Error, {"norm: expected p >= 0 or -inf, got -1"}, [] {
    norm(zeros({2, 3}), -1.0);
  });
  t.add("norm_nan_p", Raises::Error, {"norm: expected p >= 0 or -inf, got nan"}, [] {
    norm(zeros({2, 3}), std::numeric_limits<double>::quiet_NaN());
  });
  t.add("norm_integral_input", Raises::DTypeError, {"norm: expected a floating input", "int64"},
        [] { norm(zeros({2}, TensorOptions(kInt64))); });
  t.add("cumsum_dim_out_of_range", Raises::ShapeError, {"cumsum", "dimension 2"}, [] {
    cumsum(zeros({2, 3}), 2);
  });
  t.add("cumsum_undefined", Raises::Error, {"cumsum", "defined input"},
        [] { cumsum(Tensor(), 0); });
  t.add("logsumexp_undefined", Raises::Error, {"logsumexp: expected a defined input"},
        [] { logsumexp(Tensor(), {0}); });
  t.add("logsumexp_dim_out_of_range", Raises::ShapeError, {"logsumexp: dimension 3"}, [] {
    logsumexp(zeros({2, 3}), {3});
  });
  t.add("norm_dim_out_of_range", Raises::ShapeError, {"norm: dimension -3"}, [] {
    norm(zeros({2, 3}), 2.0, {-3});
  });
  return t.cases();
}
LG_MISUSE_SUITE(MoreReductions, reduction_cases());

std::vector<MisuseCase> sort_and_logic_cases() {
  MisuseTable t;
  t.add("topk_k_past_the_size", Raises::Error,
        {"topk: k 4 is out of range for dim 1 of size 3 (expected [0, 3])"}, [] {
          topk(zeros({2, 3}), 4);
        });
  t.add("topk_negative_k", Raises::Error, {"topk: k -1"}, [] { topk(zeros({2, 3}), -1); });
  t.add("sort_dim_out_of_range", Raises::ShapeError, {"sort:", "dimension 2"}, [] {
    sort(zeros({2, 3}), 2);
  });
  t.add("sort_undefined", Raises::Error, {"sort:", "defined input"}, [] { sort(Tensor()); });
  t.add("bmm_batches_differ", Raises::ShapeError, {"bmm", "[2, 3, 4]", "[3, 4, 5]"}, [] {
    bmm(zeros({2, 3, 4}), zeros({3, 4, 5}));
  });
  t.add("bmm_2d", Raises::ShapeError, {"bmm", "[3, 4]"}, [] { bmm(zeros({3, 4}), zeros({4, 5})); });
  t.add("dot_sizes_differ", Raises::ShapeError, {"dot", "[3]", "[4]"},
        [] { dot(zeros({3}), zeros({4})); });
  t.add("dot_dtypes_differ", Raises::DTypeError,
        {"dot: expected one dtype, got float32 and float64"},
        [] { dot(zeros({3}), zeros({3}, kFloat64)); });
  t.add("outer_2d", Raises::ShapeError, {"outer", "[2, 2]"}, [] {
    outer(zeros({2, 2}), zeros({2}));
  });
  t.add("all_dim_out_of_range", Raises::ShapeError, {"all", "dimension 3"}, [] {
    all(zeros({2, 3}), {3});
  });
  t.add("any_undefined", Raises::Error, {"any", "defined"}, [] { any(Tensor()); });
  t.add("normalize_negative_p", Raises::Error, {"normalize: expected p >= 0"}, [] {
    normalize(zeros({2, 3}), -2.0);
  });
  t.add("normalize_dim_out_of_range", Raises::ShapeError, {"normalize", "dimension 5"}, [] {
    normalize(zeros({2, 2}), 2.0, 5);
  });
  return t.cases();
}
LG_MISUSE_SUITE(SortAndLogic, sort_and_logic_cases());

std::vector<MisuseCase> statistics_cases() {
  MisuseTable t;
  t.add("prod_dim_out_of_range", Raises::ShapeError, {"prod", "dim 2", "[2, 2]"}, [] {
    prod(zeros({2, 2}), 2);
  });
  t.add("prod_undefined", Raises::Error, {"prod", "defined"}, [] { prod(Tensor()); });
  t.add("cumprod_dim_out_of_range", Raises::ShapeError, {"cumprod", "dimension -3"}, [] {
    cumprod(zeros({2, 2}), -3);
  });
  t.add("logcumsumexp_integral", Raises::DTypeError,
        {"logcumsumexp: expected a floating dtype", "int64", "[3]"},
        [] { logcumsumexp(zeros({3}, TensorOptions(kInt64)), 0); });
  t.add("cummax_undefined", Raises::Error, {"cummax", "defined input"},
        [] { cummax(Tensor(), 0); });
  t.add("cummin_dim_out_of_range", Raises::ShapeError, {"cummin", "dimension 1"},
        [] { cummin(zeros({3}), 1); });
  t.add("median_empty_dim", Raises::ShapeError, {"median: expected a non-empty dim 1", "[2, 0]"},
        [] {
          median(zeros({2, 0}), 1);
        });
  t.add("median_bool", Raises::DTypeError, {"median", "bool"},
        [] { median(zeros({3}, TensorOptions(kBool))); });
  t.add("median_empty_integral", Raises::DTypeError, {"median", "int64", "[0]"},
        [] { median(zeros({0}, TensorOptions(kInt64))); });
  t.add("nanmedian_dim_out_of_range", Raises::ShapeError, {"nanmedian", "dimension 2"}, [] {
    nanmedian(zeros({2, 2}), 2);
  });
  t.add("kthvalue_k_too_large", Raises::Error,
        {"kthvalue: k = 4 is out of range for dim 1 of size 3", "1 <= k <= 3"}, [] {
          kthvalue(zeros({2, 3}), 4);
        });
  t.add("kthvalue_k_zero", Raises::Error, {"kthvalue: k = 0"}, [] { kthvalue(zeros({3}), 0); });
  t.add("mode_empty_dim", Raises::ShapeError, {"mode", "non-empty dim 1", "[2, 0]"}, [] {
    mode(zeros({2, 0}), 1);
  });
  t.add("mode_bool", Raises::DTypeError, {"mode", "bool"},
        [] { mode(zeros({3}, TensorOptions(kBool))); });
  t.add("mode_dim_out_of_range", Raises::ShapeError, {"mode", "dimension 3"}, [] {
    mode(zeros({2, 2}), 3);
  });
  t.add("mode_undefined", Raises::Error, {"mode", "undefined Tensor()"}, [] { mode(Tensor()); });
  t.add("quantile_integral", Raises::DTypeError,
        {"quantile: expected a float32 or float64", "int64"},
        [] { quantile(zeros({3}, TensorOptions(kInt64)), 0.5); });
  t.add("quantile_q_out_of_range", Raises::Error, {"quantile: expected q in [0, 1], got 1.5"},
        [] { quantile(zeros({3}), 1.5); });
  t.add("quantile_q_tensor_out_of_range", Raises::Error, {"quantile: expected every q in [0, 1]"},
        [] { quantile(zeros({3}), full({2}, -0.1)); });
  t.add("quantile_q_nan", Raises::Error, {"nanquantile: expected q in [0, 1], got nan"},
        [] { nanquantile(zeros({3}), std::numeric_limits<double>::quiet_NaN()); });
  t.add("quantile_q_dtype", Raises::DTypeError,
        {"quantile: expected q of the input's dtype float32", "float64"},
        [] { quantile(zeros({3}), zeros({1}, kFloat64)); });
  t.add("quantile_q_2d", Raises::ShapeError, {"quantile", "[1, 1]"}, [] {
    quantile(zeros({3}), zeros({1, 1}));
  });
  t.add("quantile_empty", Raises::ShapeError, {"quantile: expected a non-empty input", "[0]"},
        [] { quantile(zeros({0}), 0.5); });
  t.add("quantile_bad_interpolation", Raises::Error,
        {"quantile: interpolation must be one of", "\"cubic\""},
        [] { quantile(zeros({3}), 0.5, std::nullopt, false, "cubic"); });
  t.add("nanmean_integral", Raises::DTypeError, {"nanmean: expected a floating input", "int64"},
        [] { nanmean(zeros({3}, TensorOptions(kInt64))); });
  t.add("amax_dim_twice", Raises::ShapeError, {"amax:", "dim 0 appears more than once"}, [] {
    amax(zeros({2}), {0, 0});
  });
  t.add("amin_dim_out_of_range", Raises::ShapeError, {"amin:", "dimension 3"},
        [] { amin(zeros({2}), {3}); });
  t.add("aminmax_empty", Raises::ShapeError, {"aminmax: expected a non-empty input", "[0]"},
        [] { aminmax(zeros({0})); });
  t.add("aminmax_empty_dim", Raises::ShapeError, {"aminmax: expected a non-empty dim 0"}, [] {
    aminmax(zeros({0, 2}), 0);
  });
  t.add("searchsorted_shapes", Raises::ShapeError,
        {"searchsorted", "[1, 2]", "[2]", "differ before their last dim"}, [] {
          searchsorted(zeros({1, 2}), zeros({2}));
        });
  t.add("searchsorted_side", Raises::Error, {"searchsorted: side must be", "\"middle\""},
        [] { searchsorted(zeros({2}), zeros({2}), false, false, "middle"); });
  t.add("searchsorted_side_contradicts_right", Raises::Error,
        {"searchsorted: side \"left\" and right = true contradict"},
        [] { searchsorted(zeros({2}), zeros({2}), false, true, "left"); });
  t.add("searchsorted_bool", Raises::DTypeError, {"searchsorted", "bool"},
        [] { searchsorted(zeros({2}, TensorOptions(kBool)), zeros({2})); });
  t.add("searchsorted_sorter_out_of_range", Raises::Error,
        {"searchsorted: the sorter holds 5, out of range for rows of size 2"}, [] {
          searchsorted(zeros({2}), zeros({2}), false, false, std::nullopt,
                       full({2}, 5.0, TensorOptions(kInt64)));
        });
  t.add("searchsorted_sorter_negative", Raises::Error, {"searchsorted: the sorter holds -1"}, [] {
    searchsorted(zeros({2}), zeros({2}), false, false, std::nullopt,
                 full({2}, -1.0, TensorOptions(kInt64)));
  });
  t.add("searchsorted_sorter_shape", Raises::ShapeError, {"searchsorted: expected a sorter", "[3]"},
        [] {
          searchsorted(zeros({2}), zeros({2}), false, false, std::nullopt,
                       zeros({3}, TensorOptions(kInt64)));
        });
  t.add("searchsorted_sorter_dtype", Raises::DTypeError, {"searchsorted: expected an int64 sorter"},
        [] { searchsorted(zeros({2}), zeros({2}), false, false, std::nullopt, zeros({2})); });
  t.add("searchsorted_0d_sequence", Raises::ShapeError, {"searchsorted", "at least 1 dim"},
        [] { searchsorted(zeros({}), zeros({2})); });
  // The selection kernel's entry checks its ranks: one outside the dim would read outside it.
  t.add("select_rank_out_of_range", Raises::Error,
        {"select_rank: rank 3 is out of range for dim 1 of size 3", "[0, 2]"}, [] {
          ops::select_rank(zeros({2, 3}), 1, full({2, 1}, 3.0, TensorOptions(kInt64)));
        });
  t.add("select_rank_negative", Raises::Error, {"select_rank: rank -1"}, [] {
    ops::select_rank(zeros({2, 3}), 1, full({2, 1}, -1.0, TensorOptions(kInt64)));
  });
  t.add("select_rank_shape", Raises::ShapeError,
        {"select_rank: expected ranks of shape [2, 1]", "[2]"}, [] {
          ops::select_rank(zeros({2, 3}), 1, zeros({2}, TensorOptions(kInt64)));
        });
  t.add("argsort_at_out_of_range", Raises::Error,
        {"argsort_at: rank 3 is out of range for dim 1 of size 3", "[0, 2]"}, [] {
          ops::argsort_at(zeros({2, 3}), 1, full({2, 2}, 3.0, TensorOptions(kInt64)));
        });
  t.add("argsort_at_negative", Raises::Error, {"argsort_at: rank -1"}, [] {
    ops::argsort_at(zeros({2, 3}), 0, full({4, 3}, -1.0, TensorOptions(kInt64)));
  });
  t.add("argsort_at_shape", Raises::ShapeError,
        {"argsort_at: expected ranks of the input's shape [2, 3] but along dim 1", "[3, 2]"}, [] {
          ops::argsort_at(zeros({2, 3}), 1, zeros({3, 2}, TensorOptions(kInt64)));
        });
  t.add("argsort_at_float_ranks", Raises::DTypeError,
        {"argsort_at: expected int64 ranks, got float32"}, [] {
          ops::argsort_at(zeros({2, 3}), 1, zeros({2, 1}));
        });
  t.add("histc_integral", Raises::DTypeError, {"histc: expected a floating input", "int64"},
        [] { histc(zeros({3}, TensorOptions(kInt64))); });
  t.add("histc_no_bins", Raises::Error, {"histc: expected bins > 0, got 0"},
        [] { histc(zeros({3}), 0); });
  t.add("histc_reversed_range", Raises::Error, {"histc: expected max >= min, got min 3 and max 1"},
        [] { histc(zeros({3}), 4, 3.0, 1.0); });
  t.add("histc_nan_data", Raises::Error, {"histc: the range", "is not finite"},
        [] { histc(full({2}, std::numeric_limits<double>::quiet_NaN())); });
  t.add("unique_consecutive_empty_other_dim", Raises::ShapeError,
        {"unique_consecutive: dim 1 of shape [2, 0] is empty and is not dim 0"}, [] {
          unique_consecutive(zeros({2, 0}), true, true, 0);
        });
  t.add("unique_consecutive_dim_of_0d", Raises::ShapeError,
        {"unique_consecutive: a dim was given for a 0-d input"},
        [] { unique_consecutive(zeros(Shape{}), false, false, 0); });
  t.add("unique_consecutive_dim_out_of_range", Raises::ShapeError,
        {"unique_consecutive", "dimension 2"}, [] {
          unique_consecutive(zeros({2, 2}), true, true, 2);
        });
  t.add("bucketize_2d_boundaries", Raises::ShapeError,
        {"bucketize: expected 1-d boundaries", "[2, 2]"}, [] {
          bucketize(zeros({2}), zeros({2, 2}));
        });
  return t.cases();
}
LG_MISUSE_SUITE(Statistics, statistics_cases());

std::vector<MisuseCase> scatter_cases() {
  MisuseTable t;
  t.add("scatter_reduce_unknown_reduce", Raises::Error,
        {"scatter_reduce: expected reduce to be \"sum\", \"prod\", \"mean\", \"amax\" or "
         "\"amin\", got \"max\""},
        [] { scatter_reduce(zeros({3}), 0, int64s({0}), ones({1}), "max"); });
  t.add("scatter_reduce_mean_of_bool", Raises::DTypeError,
        {"scatter_reduce: reduce \"mean\" takes a numeric input, got bool"},
        [] { scatter_reduce(zeros({3}, kBool), 0, int64s({0}), ones({1}, kBool), "mean"); });
  t.add("scatter_reduce_index_rank", Raises::ShapeError,
        {"scatter_reduce: index of shape [2] has 1 dims, the input of shape [2, 3] has 2"}, [] {
          scatter_reduce(zeros({2, 3}), 1, int64s({0, 1}), ones({2}), "sum");
        });
  t.add("scatter_reduce_index_past_end", Raises::Error,
        {"scatter_reduce: index 3 at position 1 is out of range for dim 0 of the input, of size 3"},
        [] {
          scatter_reduce(zeros({3}), 0, int64s({0, 3}), ones({2}), "prod", false);
        });
  t.add("scatter_index_past_end", Raises::Error,
        {"scatter: index 4 at position 1 is out of range for dim 1 of the input, of size 4"}, [] {
          scatter(zeros({1, 4}), 1, tensor(std::vector<std::int64_t>{0, 4}, {1, 2}), ones({1, 2}));
        });
  t.add("scatter_negative_index", Raises::Error, {"scatter: index -1 at position 0"},
        [] { scatter(zeros({3}), 0, int64s({-1}), 2.0); });
  t.add("scatter_src_dtype", Raises::DTypeError,
        {"scatter: src is float64, the input float32 (expected the same dtype)"},
        [] { scatter(zeros({3}), 0, int64s({0}), ones({1}, kFloat64)); });
  t.add("scatter_float_index", Raises::DTypeError, {"scatter", "int64 indices", "float32"},
        [] { scatter(zeros({3}), 0, ones({1}), ones({1})); });
  t.add("scatter_value_overflows", Raises::DTypeError,
        {"scatter: value 300 cannot be converted to dtype uint8 without overflow"},
        [] { scatter(zeros({3}, kUInt8), 0, int64s({0}), 300.0); });
  t.add("scatter_unknown_reduce", Raises::Error,
        {"scatter: expected reduce to be \"add\" or \"multiply\", got \"max\""},
        [] { scatter(zeros({3}), 0, int64s({0}), ones({1}), "max"); });
  t.add("scatter_src_smaller_than_index", Raises::ShapeError,
        {"scatter", "larger than src of shape [1] in dim 0"}, [] {
          scatter(zeros({3}), 0, int64s({0, 1}), ones({1}));
        });
  t.add("index_reduce_sum", Raises::Error,
        {"index_reduce: expected reduce to be \"prod\", \"mean\", \"amax\" or \"amin\" "
         "(index_add sums), got \"sum\""},
        [] {
          index_reduce(zeros({3, 2}), 0, int64s({0}), ones({1, 2}), "sum");
        });
  t.add("index_reduce_source_shape", Raises::ShapeError,
        {"index_reduce: expected a source of shape [1, 2]", "got [2, 2]"}, [] {
          index_reduce(zeros({3, 2}), 0, int64s({0}), ones({2, 2}), "amax");
        });
  t.add("index_copy_source_shape", Raises::ShapeError,
        {"index_copy: expected a source of shape [2, 3]", "got [2, 2]"}, [] {
          index_copy(zeros({4, 3}), 0, int64s({0, 1}), ones({2, 2}));
        });
  t.add("index_copy_2d_index", Raises::ShapeError, {"index_copy: expected a 0-d or 1-d index"}, [] {
    index_copy(zeros({4, 3}), 0, zeros({1, 1}, TensorOptions(kInt64)), ones({1, 3}));
  });
  t.add("index_copy_source_dtype", Raises::DTypeError,
        {"index_copy: the source is float64, the input float32"}, [] {
          index_copy(zeros({4, 3}), 0, int64s({0}), ones({1, 3}, kFloat64));
        });
  t.add("index_copy_index_past_end", Raises::Error,
        {"index_copy: index 4 at position 0 is out of range for dim 0 of size 4"}, [] {
          index_copy(zeros({4, 3}), 0, int64s({4}), ones({1, 3}));
        });
  t.add("index_put_accumulate_value_shape", Raises::ShapeError,
        {"index_put_: shapes [3] and [2] cannot be broadcast together"}, [] {
          Tensor x = zeros({4});
          x.index_put_({int64s({0, 1})}, ones({3}), /*accumulate=*/true);
        });
  return t.cases();
}
LG_MISUSE_SUITE(Scatter, scatter_cases());

}  // namespace
}  // namespace leangrad::test
