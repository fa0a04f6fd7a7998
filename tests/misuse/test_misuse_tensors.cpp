// Misuse of tensors themselves: creation with negative, overflowing or non-finite sizes, views
// and indexing with wrong shapes and out-of-range dims, metadata and raw access, in-place writes
// and conversions, indexing by tensors. Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/macros.h>
#include <leangrad/kernels/creation.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t k2Pow32 = std::int64_t{1} << 32;
constexpr std::int64_t k2Pow62 = std::int64_t{1} << 62;
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::vector<MisuseCase> creation_cases() {
  MisuseTable t;
  t.add("empty_negative_size", Raises::ShapeError, {"empty", "[2, -3]", "non-negative"}, [] {
    empty({2, -3});
  });
  t.add("zeros_negative_size", Raises::ShapeError, {"zeros", "[-1]"}, [] { zeros({-1}); });
  t.add("ones_numel_overflows", Raises::ShapeError,
        {"ones", "[4294967296, 4294967296]", "overflows"}, [] {
          ones({k2Pow32, k2Pow32});
        });
  t.add("full_size_int64_max", Raises::ShapeError, {"full", "9223372036854775807"},
        [] { full({kInt64Max}, 1.0); });
  // 2^62 + 16 float32 elements: the byte count wraps around in size_t (issue 14, defect 1).
  t.add("ones_bytes_overflow", Raises::ShapeError, {"ones", "4611686018427387920"},
        [] { ones({k2Pow62 + 16}); });
  t.add("zeros_float64_bytes_overflow", Raises::ShapeError, {"zeros", "2305843009213693952"},
        [] { zeros({std::int64_t{1} << 61}, kFloat64); });
  t.add("empty_one_past_2_pow_62", Raises::ShapeError, {"empty", "4611686018427387905"},
        [] { empty({k2Pow62 + 1}); });
  t.add("rand_negative_size", Raises::ShapeError, {"rand", "[3, -1]"}, [] { rand({3, -1}); });
  t.add("randn_numel_overflows", Raises::ShapeError, {"randn", "overflows"}, [] {
    randn({kInt64Max, 2});
  });
  t.add("rand_integral_dtype", Raises::DTypeError, {"rand", "int64"}, [] { rand({2}, kInt64); });
  t.add("randn_bool_dtype", Raises::DTypeError, {"randn", "bool"}, [] { randn({2}, kBool); });
  t.add("tensor_values_do_not_fill_shape", Raises::ShapeError, {"tensor", "3 values", "[2, 2]"},
        [] {
          tensor<float>({1, 2, 3}, {2, 2});
        });
  t.add("tensor_negative_shape", Raises::ShapeError, {"tensor", "[-2, -1]"}, [] {
    tensor<float>({1, 2}, {-2, -1});
  });
  t.add("from_blob_null_data", Raises::Error, {"from_blob", "null", "[2]"},
        [] { from_blob(nullptr, {2}); });
  t.add("from_blob_negative_size", Raises::ShapeError, {"from_blob", "[-2]"}, [] {
    float data[2] = {};
    from_blob(data, {-2});
  });
  t.add("arange_zero_step", Raises::Error, {"arange", "step must be non-zero"},
        [] { arange(0, 10, 0); });
  t.add("arange_step_away_from_end", Raises::Error, {"arange", "-1", "10"},
        [] { arange(0, 10, -1); });
  t.add("arange_nan_end", Raises::Error, {"arange", "nan"}, [] { arange(0, kNaN); });
  t.add("arange_infinite_end", Raises::Error, {"arange", "inf"}, [] { arange(0, kInf); });
  t.add("arange_nan_step", Raises::Error, {"arange", "nan"}, [] { arange(0, 1, kNaN); });
  t.add("arange_count_too_large", Raises::ShapeError, {"arange", "1e+30"}, [] { arange(0, 1e30); });
  t.add("broadcast_to_minus_one_in_a_new_dim", Raises::ShapeError,
        {"broadcast_to", "[3]", "[-1, 3]", "new leading dim"}, [] {
          broadcast_to(arange(3), {-1, 3});
        });
  t.add("broadcast_to_fewer_dims", Raises::ShapeError, {"broadcast_to", "[1]", "[]"},
        [] { broadcast_to(arange(1), {}); });
  t.add("broadcast_to_incompatible", Raises::ShapeError, {"broadcast_to", "[3]", "[2, 4]"}, [] {
    broadcast_to(arange(3), {2, 4});
  });
  t.add("tile_negative_reps", Raises::ShapeError, {"tile", "reps [-1]", "[2, 3]"}, [] {
    tile(ones({2, 3}), {-1});
  });
  t.add("arange_values_beyond_int32", Raises::DTypeError, {"arange", "int32", "do not fit"},
        [] { arange(0, 1e19, 1e18, kInt32); });
  t.add("arange_values_beyond_int64", Raises::DTypeError, {"arange", "int64", "do not fit"},
        [] { arange(1e19, 2e19, 3e18, kInt64); });
  t.add("arange_int64_step_beyond_int64", Raises::DTypeError, {"arange", "int64", "1e+30"},
        [] { arange(0, 10, 1e30, kInt64); });
  t.add("arange_float16_past_its_max", Raises::DTypeError, {"arange", "float16"},
        [] { arange(0, 1e5, 2e4, kFloat16); });
  t.add("linspace_end_beyond_int32", Raises::DTypeError, {"linspace", "int32", "1e+10"},
        [] { linspace(0, 1e10, 3, kInt32); });
  t.add("linspace_end_beyond_float32", Raises::DTypeError, {"linspace", "float32", "1e+40"},
        [] { linspace(0, 1e40, 3); });
  t.add("requires_grad_integral_dtype", Raises::DTypeError, {"requires_grad", "int64"},
        [] { zeros({2}, TensorOptions(kInt64).requires_grad(true)); });

  // Sizes that pass every check and are refused by the allocator. (Under AddressSanitizer too:
  // tools/sanitize.sh sets allocator_may_return_null=1, so ASan fails the request like malloc.)
  t.add("empty_larger_than_memory", Raises::OutOfMemoryError, {"out of memory", "cpu"},
        [] { empty({std::int64_t{1} << 60}); });
  // The range was built in a std::vector first: std::bad_alloc.
  t.add("arange_larger_than_memory", Raises::OutOfMemoryError, {"out of memory", "cpu"},
        [] { arange(0, 1e17); });
  return t.cases();
}
LG_MISUSE_SUITE(Creation, creation_cases());

std::vector<MisuseCase> view_cases() {
  MisuseTable t;
  t.add("view_numel_mismatch", Raises::ShapeError, {"view", "[4]", "size 6"}, [] {
    ones({2, 3}).view({4});
  });
  t.add("view_two_inferred_dims", Raises::ShapeError, {"view", "[-1, -1]"}, [] {
    ones({2, 3}).view({-1, -1});
  });
  t.add("view_negative_size", Raises::ShapeError, {"view", "size -2", "[-2, -3]"}, [] {
    ones({2, 3}).view({-2, -3});
  });
  t.add("view_infer_from_zero", Raises::ShapeError, {"view", "[0, -1]", "size 0"}, [] {
    zeros({0, 4}).view({0, -1});
  });
  t.add("view_product_overflows", Raises::ShapeError, {"view", "4294967296", "overflows"}, [] {
    ones({4}).view({k2Pow32, k2Pow32, -1});
  });
  t.add("view_of_transposed", Raises::ShapeError, {"view", "[6]", "[3, 2]", "reshape"}, [] {
    ones({2, 3}).transpose(0, 1).view({6});
  });
  t.add("reshape_numel_mismatch", Raises::ShapeError, {"reshape", "[5]", "size 6"}, [] {
    ones({2, 3}).reshape({5});
  });
  t.add("reshape_of_transposed_mismatch", Raises::ShapeError, {"reshape", "[4, 2]", "size 6"}, [] {
    ones({2, 3}).transpose(0, 1).reshape({4, 2});
  });
  t.add("permute_too_few_dims", Raises::ShapeError, {"permute", "[0]", "[2, 3]"}, [] {
    ones({2, 3}).permute({0});
  });
  t.add("permute_repeated_dim", Raises::ShapeError, {"permute", "[1, -1]", "dimension 1"}, [] {
    ones({2, 3}).permute({1, -1});
  });
  t.add("permute_dim_out_of_range", Raises::ShapeError, {"permute", "dimension 2", "2-d"}, [] {
    ones({2, 3}).permute({0, 2});
  });
  t.add("transpose_dim_out_of_range", Raises::ShapeError, {"transpose", "dimension 2", "2-d"}, [] {
    ones({2, 3}).transpose(0, 2);
  });
  t.add("transpose_dim_of_0d", Raises::ShapeError, {"transpose", "3", "0-d"},
        [] { full({}, 1.0).transpose(0, 3); });
  t.add("squeeze_dim_out_of_range", Raises::ShapeError, {"squeeze", "dimension 2", "2-d"}, [] {
    ones({2, 1}).squeeze(2);
  });
  t.add("squeeze_dim_of_0d", Raises::ShapeError, {"squeeze", "2", "0-d"},
        [] { full({}, 1.0).squeeze(2); });
  t.add("unsqueeze_dim_out_of_range", Raises::ShapeError, {"unsqueeze", "3"},
        [] { ones({2}).unsqueeze(3); });
  t.add("unsqueeze_negative_dim_out_of_range", Raises::ShapeError, {"unsqueeze", "-3"},
        [] { ones({2}).unsqueeze(-3); });
  t.add("expand_fewer_dims", Raises::ShapeError, {"expand", "[3]", "[2, 3]"}, [] {
    ones({2, 3}).expand({3});
  });
  t.add("expand_non_singleton_dim", Raises::ShapeError, {"expand", "[2, 3]", "[4, 3]"}, [] {
    ones({2, 3}).expand({4, 3});
  });
  t.add("expand_negative_size", Raises::ShapeError, {"expand", "-2"},
        [] { ones({1}).expand({-2}); });
  t.add("expand_negative_leading_size", Raises::ShapeError, {"expand", "[-1, 1]"}, [] {
    ones({1}).expand({-1, 1});
  });
  // Every size fits, their product does not (Tensor::numel reported 0, issue 14 defect 1).
  t.add("expand_numel_overflows", Raises::ShapeError,
        {"expand", "[4611686018427387904, 4611686018427387904]", "overflows"}, [] {
          ones({1, 1}).expand({k2Pow62, k2Pow62});
        });
  t.add("flatten_start_after_end", Raises::ShapeError,
        {"flatten", "start_dim 2", "end_dim 1", "[2, 3, 4]"}, [] {
          ones({2, 3, 4}).flatten(2, 1);
        });
  t.add("flatten_dim_out_of_range", Raises::ShapeError, {"flatten", "3"}, [] {
    ones({2, 3}).flatten(0, 3);
  });
  t.add("unflatten_sizes_do_not_split", Raises::ShapeError,
        {"unflatten", "[3, 5]", "dim 1 of size 12", "[2, 12]"}, [] {
          ones({2, 12}).unflatten(1, {3, 5});
        });
  t.add("unflatten_two_unknown_sizes", Raises::ShapeError, {"unflatten", "more than one -1"}, [] {
    ones({2, 12}).unflatten(1, {-1, -1});
  });
  t.add("unflatten_unknown_beside_zero", Raises::ShapeError, {"unflatten", "[0, -1]"}, [] {
    ones({2, 12}).unflatten(1, {0, -1});
  });
  t.add("unflatten_negative_size", Raises::ShapeError, {"unflatten", "-3", "below -1"}, [] {
    ones({2, 12}).unflatten(1, {-3, -4});
  });
  t.add("unflatten_size_overflows", Raises::ShapeError, {"unflatten"}, [] {
    ones({2, 12}).unflatten(1, {k2Pow62, k2Pow62});
  });
  t.add("unflatten_dim_out_of_range", Raises::ShapeError, {"unflatten", "2"}, [] {
    ones({2, 12}).unflatten(2, {3, 4});
  });
  t.add("unflatten_empty_sizes", Raises::ShapeError, {"unflatten", "must not be empty"}, [] {
    ones({2, 12}).unflatten(1, {});
  });
  t.add("unflatten_zero_dim", Raises::ShapeError, {"unflatten", "0-d"},
        [] { ones({}).unflatten(0, {1}); });
  // The rearranging functions (autograd/shape_functions.h) and isclose.
  t.add("hstack_empty_list", Raises::Error, {"hstack", "non-empty list"}, [] { hstack({}); });
  t.add("vstack_undefined_piece", Raises::Error, {"vstack", "tensor 1", "undefined"}, [] {
    vstack({ones({2}), Tensor()});
  });
  // One tensor per section: more than memory holds let std::length_error or bad_alloc out.
  t.add("tensor_split_more_sections_than_a_vector_holds", Raises::OutOfMemoryError,
        {"tensor_split", "9223372036854775807 sections", "size 3"}, [] {
          tensor_split(ones({2, 3}), std::numeric_limits<std::int64_t>::max(), 1);
        });
  // (ASan aborts a throwing operator new it cannot serve, allocator_may_return_null or not.)
#if !LG_ADDRESS_SANITIZER
  t.add("tensor_split_more_sections_than_memory", Raises::OutOfMemoryError,
        {"tensor_split", "1099511627776 sections"}, [] {
          tensor_split(ones({2, 3}), std::int64_t{1} << 40, 1);
        });
#endif
  t.add("tensor_split_zero_sections", Raises::Error, {"tensor_split", "sections > 0", "got 0"},
        [] { tensor_split(ones({4}), 0); });
  t.add("tensor_split_zero_dim", Raises::ShapeError, {"tensor_split", "at least 1 dim", "[]"},
        [] { tensor_split(ones({}), 2); });
  t.add("movedim_source_twice", Raises::Error, {"movedim", "source dim -3", "twice", "[2, 3, 4]"},
        [] {
          movedim(ones({2, 3, 4}), {0, -3}, {1, 2});
        });
  t.add("movedim_lengths_differ", Raises::Error, {"movedim", "got 2 and 1"}, [] {
    movedim(ones({2, 3, 4}), {0, 1}, {2});
  });
  t.add("movedim_out_of_range", Raises::ShapeError, {"movedim", "dimension 3", "3-d"}, [] {
    movedim(ones({2, 3, 4}), 3, 0);
  });
  t.add("fliplr_one_dim", Raises::ShapeError, {"fliplr", "at least 2 dims", "[4]"},
        [] { fliplr(ones({4})); });
  t.add("rot90_same_dims", Raises::Error, {"rot90", "two different dims", "1 and -1"}, [] {
    rot90(ones({2, 3}), 1, {1, -1});
  });
  t.add("rot90_three_dims", Raises::Error, {"rot90", "two dims, got 3"}, [] {
    rot90(ones({2, 3, 4}), 1, {0, 1, 2});
  });
  t.add("take_along_dim_float_indices", Raises::DTypeError, {"take_along_dim", "int64", "float32"},
        [] {
          take_along_dim(ones({2, 3}), ones({2, 1}), 1);
        });
  t.add("take_along_dim_ranks_differ", Raises::ShapeError,
        {"take_along_dim", "one rank", "[2, 3]", "[2]"}, [] {
          take_along_dim(ones({2, 3}), zeros({2}, kInt64), 1);
        });
  t.add("diag_embed_same_dims", Raises::Error, {"diag_embed", "two different dims"}, [] {
    diag_embed(ones({2, 3}), 0, 1, -2);
  });
  // Offsets at the ends of int64: an error naming the op, with no overflow on the way (the
  // sizes n + |offset| were computed unchecked, and |INT64_MIN| does not exist).
  constexpr std::int64_t kBig = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kSmall = std::numeric_limits<std::int64_t>::min();
  t.add("diag_embed_offset_overflows", Raises::ShapeError, {"diag_embed", "overflows int64"},
        [] { diag_embed(ones({3}), kBig); });
  t.add("diag_embed_offset_int64_min", Raises::ShapeError, {"diag_embed", "out of range"},
        [] { diag_embed(ones({3}), kSmall); });
  t.add("diag_vector_offset_overflows", Raises::ShapeError, {"diag", "overflows int64"},
        [] { diag(ones({3}), kBig); });
  t.add("diag_vector_offset_int64_min", Raises::ShapeError, {"diag", "out of range"},
        [] { diag(ones({3}), kSmall); });
  t.add("block_diag_three_dims", Raises::ShapeError, {"block_diag", "at most 2 dims", "[1, 2, 3]"},
        [] {
          block_diag({ones({2}), ones({1, 2, 3})});
        });
  t.add("cartesian_prod_matrix", Raises::ShapeError, {"cartesian_prod", "1-d", "[2, 2]"}, [] {
    cartesian_prod({ones({2}), ones({2, 2})});
  });
  t.add("tril_indices_negative_row", Raises::Error, {"tril_indices", "non-negative", "-1"},
        [] { tril_indices(-1, 3); });
  t.add("triu_indices_float_dtype", Raises::DTypeError,
        {"triu_indices", "int64 or int32", "float32"}, [] { triu_indices(3, 3, 0, kFloat32); });
  t.add("isclose_dtypes_differ", Raises::DTypeError, {"isclose", "one dtype", "float32", "float64"},
        [] { isclose(ones({2}), ones({2}, kFloat64)); });
  t.add("isclose_negative_rtol", Raises::Error, {"isclose", "must be >= 0", "-1"},
        [] { isclose(ones({2}), ones({2}), -1.0); });
  return t.cases();
}
LG_MISUSE_SUITE(Views, view_cases());

std::vector<MisuseCase> indexing_cases() {
  MisuseTable t;
  t.add("slice_of_0d", Raises::ShapeError, {"slice", "0-d"}, [] { full({}, 1.0).slice(0, 0, 1); });
  t.add("slice_zero_step", Raises::ShapeError, {"slice", "step", "0"},
        [] { ones({4}).slice(0, 0, 2, 0); });
  t.add("slice_negative_step", Raises::ShapeError, {"slice", "step", "-1"},
        [] { ones({4}).slice(0, 3, 0, -1); });
  t.add("slice_dim_out_of_range", Raises::ShapeError, {"slice", "dimension 2", "2-d"}, [] {
    ones({2, 3}).slice(2, 0, 1);
  });
  t.add("slice_dim_int64_min", Raises::ShapeError, {"slice", "-9223372036854775808"},
        [] { ones({2}).slice(std::numeric_limits<std::int64_t>::min(), 0, 1); });
  t.add("select_index_out_of_range", Raises::ShapeError, {"select", "index 3", "size 3", "[2, 3]"},
        [] {
          ones({2, 3}).select(1, 3);
        });
  t.add("select_negative_index_out_of_range", Raises::ShapeError, {"select", "-3", "size 2"}, [] {
    ones({2, 3}).select(0, -3);
  });
  t.add("select_index_int64_max", Raises::ShapeError, {"select", "9223372036854775807"},
        [] { ones({2}).select(0, kInt64Max); });
  t.add("select_from_0d", Raises::ShapeError, {"select", "0-d"},
        [] { full({}, 1.0).select(0, 0); });
  t.add("select_from_empty_dim", Raises::ShapeError, {"select", "index 0", "size 0"}, [] {
    zeros({0, 2}).select(0, 0);
  });
  t.add("size_dim_out_of_range", Raises::ShapeError, {"size", "1"}, [] { ones({2}).size(1); });
  t.add("stride_dim_out_of_range", Raises::ShapeError, {"stride", "-2"},
        [] { ones({2}).stride(-2); });
  t.add("item_of_two_elements", Raises::ShapeError, {"item", "[2]"},
        [] { ones({2}).item<float>(); });
  t.add("item_of_empty", Raises::ShapeError, {"item", "[0]"}, [] { zeros({0}).item<float>(); });
  t.add("data_ptr_wrong_type", Raises::DTypeError, {"data_ptr", "float64", "float32"},
        [] { ones({2}).data_ptr<double>(); });
  t.add("metadata_of_undefined", Raises::Error, {"undefined tensor"}, [] { Tensor().shape(); });
  t.add("set_data_undefined", Raises::Error, {"set_data", "defined"},
        [] { ones({2}).set_data(Tensor()); });
  t.add("set_grad_wrong_shape", Raises::ShapeError, {"set_grad", "[3]", "[2]"},
        [] { ones({2}).set_grad(ones({3})); });
  // PyTorch refuses `x.grad = g` for another size, dtype or device; the device case is in
  // test_misuse_devices.cpp.
  t.add("set_grad_wrong_dtype", Raises::DTypeError, {"set_grad", "float64", "float32"},
        [] { ones({2}).set_grad(ones({2}, kFloat64)); });
  t.add("set_grad_to_itself", Raises::Error, {"set_grad", "its own gradient", "[2]"}, [] {
    const Tensor x = ones({2});
    x.set_grad(x);
  });
  return t.cases();
}
LG_MISUSE_SUITE(Indexing, indexing_cases());

// Indexing by tensors (Tensor::index / index_put_ with index tensors and masks).
std::vector<MisuseCase> advanced_indexing_cases() {
  using indexing::TensorIndex;
  MisuseTable t;
  t.add("float_index", Raises::DTypeError,
        {"index: tensors used as indices must be int64, int32, bool or uint8, got float32"},
        [] { ones({3}).index({ones({2})}); });
  t.add("index_out_of_range", Raises::ShapeError,
        {"index: index 3 is out of range for a dim of size 3", "[3, 2]"}, [] {
          ones({3, 2}).index({full({2}, 3.0, TensorOptions(kInt64))});
        });
  t.add("negative_index_out_of_range", Raises::ShapeError, {"index: index -4 is out of range"},
        [] { ones({3}).index({full({1}, -4.0, TensorOptions(kInt64))}); });
  t.add("mask_shape_mismatch", Raises::ShapeError,
        {"index: a mask of shape [2]", "dims it indexes, of shape [3]"}, [] {
          ones({3, 2}).index({ones({2}, TensorOptions(kBool))});
        });
  t.add("mask_too_many_dims", Raises::ShapeError, {"index: the indices take 3 dims", "[3, 2]"}, [] {
    ones({3, 2}).index({ones({3, 2, 1}, TensorOptions(kBool))});
  });
  t.add("zero_dim_mask", Raises::ShapeError, {"index: a 0-d bool index is not supported"},
        [] { ones({3}).index({ones(Shape{}, TensorOptions(kBool))}); });
  t.add("undefined_index_tensor", Raises::Error, {"TensorIndex: expected a defined index tensor"},
        [] { ones({3}).index({Tensor()}); });
  t.add("indices_do_not_broadcast", Raises::ShapeError, {"[2]", "[3]"}, [] {
    ones({3, 3}).index({zeros({2}, TensorOptions(kInt64)), zeros({3}, TensorOptions(kInt64))});
  });
  t.add("put_value_does_not_broadcast", Raises::ShapeError, {"index_put_", "[4]", "[2, 3]"}, [] {
    Tensor x = ones({5, 3});
    x.index_put_({zeros({2}, TensorOptions(kInt64))}, ones({4}));
  });
  t.add("put_value_out_of_range_for_dtype", Raises::Error,
        {"index_put_: value 300", "uint8 without overflow"}, [] {
          Tensor x = zeros({3}, TensorOptions(kUInt8));
          x.index_put_({ones({3}, TensorOptions(kBool))}, 300.0);
        });
  t.add("put_index_out_of_range", Raises::ShapeError, {"index_put_: index 5 is out of range"}, [] {
    Tensor x = ones({5});
    x.index_put_({full({1}, 5.0, TensorOptions(kInt64))}, 0.0);
  });
  t.add("put_on_a_leaf_requiring_grad", Raises::Error,
        {"index_put_: in-place write into a leaf tensor that requires grad"}, [] {
          Tensor x = ones({3}).requires_grad_();
          x.index_put_({ones({3}, TensorOptions(kBool))}, 0.0);
        });
  return t.cases();
}
LG_MISUSE_SUITE(AdvancedIndexing, advanced_indexing_cases());

std::vector<MisuseCase> in_place_cases() {
  MisuseTable t;
  t.add("copy_source_does_not_broadcast", Raises::ShapeError, {"copy_", "[4]", "[2, 3]"}, [] {
    zeros({2, 3}).copy_(ones({4}));
  });
  t.add("copy_source_larger", Raises::ShapeError, {"copy_", "[2, 3]", "[3]"}, [] {
    zeros({3}).copy_(ones({2, 3}));
  });
  t.add("copy_undefined_source", Raises::Error, {"copy_", "defined"},
        [] { zeros({3}).copy_(Tensor()); });
  // Several elements of an expanded tensor are one memory location (PyTorch refuses too).
  t.add("copy_into_expanded", Raises::Error, {"copy_", "expanded", "[3]", "[0]"},
        [] { zeros({1}).expand({3}).copy_(arange(3)); });
  t.add("add_into_expanded", Raises::Error, {"add_", "expanded", "[3]"},
        [] { zeros({1}).expand({3}).add_(1.0); });
  t.add("add_other_larger_than_self", Raises::ShapeError, {"add_", "[2, 3]", "[3]"}, [] {
    zeros({3}).add_(ones({2, 3}));
  });
  t.add("mul_other_does_not_broadcast", Raises::ShapeError, {"mul_", "[2]", "[3]"},
        [] { zeros({3}).mul_(ones({2})); });
  t.add("add_float_into_int64", Raises::DTypeError, {"add_", "float32", "int64"},
        [] { zeros({2}, kInt64).add_(ones({2})); });
  t.add("mul_fraction_into_int64", Raises::DTypeError, {"mul_", "float32", "int64"},
        [] { zeros({2}, kInt64).mul_(0.5); });
  t.add("add_int_into_bool", Raises::DTypeError, {"add_", "bool"},
        [] { zeros({2}, kBool).add_(ones({2}, kInt64)); });
  t.add("add_undefined_other", Raises::Error, {"add_", "undefined"},
        [] { zeros({2}).add_(Tensor()); });
  // The unary in-place methods keep self's dtype: what the out-of-place op computes in float32
  // cannot go back into an integral or bool self (PyTorch: "result type Float can't be cast to
  // the desired output type Long").
  t.add("exp_into_int64", Raises::DTypeError, {"exp_", "float32", "int64"},
        [] { ones({2}, kInt64).exp_(); });
  t.add("sin_into_bool", Raises::DTypeError, {"sin_", "float32", "bool"},
        [] { ones({2}, kBool).sin_(); });
  t.add("neg_of_bool", Raises::DTypeError, {"neg_", "bool"}, [] { ones({2}, kBool).neg_(); });
  t.add("floor_of_bool", Raises::DTypeError, {"floor_", "bool"}, [] { ones({2}, kBool).floor_(); });
  t.add("abs_into_expanded", Raises::Error, {"abs_", "expanded", "[3]"},
        [] { zeros({1}).expand({3}).abs_(); });
  t.add("tan_into_int64", Raises::DTypeError, {"tan_", "float32", "int64"},
        [] { ones({2}, kInt64).tan_(); });
  t.add("exp2_into_int32", Raises::DTypeError, {"exp2_", "float32", "int32"},
        [] { ones({2}, kInt32).exp2_(); });
  t.add("atan2_into_int64", Raises::DTypeError, {"atan2_", "float32", "int64"},
        [] { ones({2}, kInt64).atan2_(ones({2}, kInt64)); });
  t.add("atan2_other_larger_than_self", Raises::ShapeError, {"atan2_", "[2, 2]", "[2]"}, [] {
    ones({2}).atan2_(ones({2, 2}));
  });
  t.add("round_decimals_of_int64", Raises::DTypeError, {"round_", "decimals = 1", "int64"},
        [] { ones({2}, kInt64).round_(1); });
  // clamp_ as clamp (docs/api-notes.md), in place: a fractional bound would make an integral
  // result float32 (PyTorch: "result type Float can't be cast to the desired output type long").
  t.add("clamp_without_bounds", Raises::Error, {"clamp_", "at least one", "[2]"},
        [] { ones({2}).clamp_(std::nullopt, std::nullopt); });
  t.add("clamp_fraction_into_int64", Raises::DTypeError, {"clamp_", "float32", "int64", "0.5"},
        [] { ones({2}, kInt64).clamp_(0.5, 2.0); });
  t.add("clamp_min_fraction_into_int64", Raises::DTypeError, {"clamp_", "float32", "int64"},
        [] { ones({2}, kInt64).clamp_min_(1.5); });
  t.add("clamp_nan_into_int64", Raises::DTypeError, {"clamp_", "float32", "int64", "nan"},
        [] { ones({2}, kInt64).clamp_max_(std::numeric_limits<double>::quiet_NaN()); });
  t.add("clamp_bound_overflows_uint8", Raises::Error, {"clamp_", "300", "uint8"},
        [] { ones({2}, kUInt8).clamp_(0.0, 300.0); });
  t.add("clamp_of_bool", Raises::DTypeError, {"clamp_", "bool"},
        [] { ones({2}, kBool).clamp_(0.0, 1.0); });
  t.add("clamp_into_expanded", Raises::Error, {"clamp_", "expanded", "[3]"},
        [] { zeros({1}).expand({3}).clamp_(0.0, 1.0); });
  // masked_fill_: the mask broadcasts to self, never self to the mask (PyTorch: "output with
  // shape [3] doesn't match the broadcast shape [2, 3]").
  t.add("masked_fill_mask_larger_than_self", Raises::ShapeError, {"masked_fill_", "[2, 3]", "[3]"},
        [] {
          zeros({3}).masked_fill_(ones({2, 3}, kBool), 1.0);
        });
  t.add("masked_fill_mask_does_not_broadcast", Raises::ShapeError,
        {"masked_fill_", "[4]", "[2, 3]"}, [] {
          zeros({2, 3}).masked_fill_(ones({4}, kBool), 1.0);
        });
  t.add("masked_fill_float_mask", Raises::DTypeError, {"masked_fill_", "bool", "float32"}, [] {
    zeros({2, 3}).masked_fill_(ones({2, 3}), 1.0);
  });
  t.add("masked_fill_value_not_0d", Raises::ShapeError, {"masked_fill_", "0-d", "[1]"}, [] {
    zeros({2, 3}).masked_fill_(ones({2, 3}, kBool), ones({1}));
  });
  t.add("masked_fill_value_overflows_uint8", Raises::Error, {"masked_fill_", "300", "uint8"},
        [] { zeros({2}, kUInt8).masked_fill_(ones({2}, kBool), 300.0); });
  t.add("masked_fill_into_expanded", Raises::Error, {"masked_fill_", "expanded", "[3]"},
        [] { zeros({1}).expand({3}).masked_fill_(ones({3}, kBool), 1.0); });
  t.add("masked_fill_undefined_mask", Raises::Error, {"masked_fill_", "undefined"},
        [] { zeros({2}).masked_fill_(Tensor(), 1.0); });
  return t.cases();
}
LG_MISUSE_SUITE(InPlace, in_place_cases());

}  // namespace
}  // namespace leangrad::test
