// Misuse of LibTorch's array functions built on the others (tests/autograd/test_array_functions.cpp
// tests their values): operands of the wrong rank, size, dtype or device for mv, vdot, addr,
// chain_matmul, dist, pdist, renorm and vander; factors that are not square and pivots that do
// not come from lu_factor; cov's weights of the wrong length, dtype or sign; sample points that
// do not match y; splits that do not divide; scatters whose src is not the part's shape; masks
// with too few source elements; unique_dim of empty slices; histograms of integers, of no bins, of
// bad ranges and edges (histogramdd's per dim too); fill_diagonal_ of vectors and uneven shapes;
// RNN cell weights that do not fit; windows of a negative length or an integral dtype; more
// combinations than memory holds; as_strided past its storage or with negative strides, unfold's
// windows, empty_strided's strides, div's rounding modes, householder_product's shapes, the _ex
// variants' check_errors, take's indices, inner's sizes, sum_to_size and is_nonzero; put's
// positions and source, ormqr's shapes, the view ops done in place, resize_'s sizes, set_'s source,
// the accessors' dtype, rank and int32 offsets, and a comparison's result written into a smaller
// self. A table of the misuse suite (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/rnn.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

std::vector<MisuseCase> array_function_cases() {
  MisuseTable t;
  // ---- Products, distances, norms ----
  t.add("mv_vector_size", Raises::ShapeError,
        {"mv: expected a matrix (n, m) and a vector (m)", "[2, 3]", "[2]"}, [] {
          mv(zeros({2, 3}), zeros({2}));
        });
  t.add("mv_dtypes", Raises::DTypeError, {"mv", "float32", "float64"}, [] {
    mv(zeros({2, 3}), zeros({3}, kFloat64));
  });
  t.add("vdot_sizes", Raises::ShapeError, {"vdot: expected two 1-d tensors of one size", "[3]"},
        [] { vdot(zeros({3}), zeros({4})); });
  t.add("addr_matrix_operand", Raises::ShapeError, {"addr: expected two vectors", "[2, 2]"}, [] {
    addr(zeros({2, 2}), zeros({2, 2}), zeros({2}));
  });
  t.add("addr_input_shape", Raises::ShapeError, {"addr", "[3, 3]", "[2, 2]"}, [] {
    addr(zeros({3, 3}), zeros({2}), zeros({2}));
  });
  t.add("chain_matmul_empty", Raises::Error, {"chain_matmul: expected at least one matrix"},
        [] { chain_matmul({}); });
  t.add("chain_matmul_vector", Raises::ShapeError,
        {"chain_matmul: expected 2-d matrices", "[3]", "matrix 1"}, [] {
          chain_matmul({zeros({2, 3}), zeros({3})});
        });
  t.add("dist_integral", Raises::DTypeError, {"dist", "floating", "int64"},
        [] { dist(zeros({2}, TensorOptions(kInt64)), zeros({2}, TensorOptions(kInt64))); });
  t.add("dist_negative_p", Raises::Error, {"dist: expected p >= 0, got -1"},
        [] { dist(zeros({2}), zeros({2}), -1.0); });
  t.add("pdist_rank", Raises::ShapeError, {"pdist: expected a 2-d input (N, M)", "[2, 2, 2]"}, [] {
    pdist(zeros({2, 2, 2}));
  });
  t.add("renorm_p_zero", Raises::Error, {"renorm: expected p > 0, got 0"}, [] {
    renorm(zeros({2, 2}), 0.0, 0, 1.0);
  });
  t.add("renorm_negative_maxnorm", Raises::Error, {"renorm: expected maxnorm >= 0, got -1"}, [] {
    renorm(zeros({2, 2}), 2.0, 0, -1.0);
  });
  t.add("renorm_dim_out_of_range", Raises::ShapeError, {"renorm", "dimension 2"}, [] {
    renorm(zeros({2, 2}), 2.0, 2, 1.0);
  });
  t.add("vander_matrix", Raises::ShapeError, {"vander: expected a 1-d input", "[2, 2]"}, [] {
    vander(zeros({2, 2}));
  });
  t.add("vander_negative_N", Raises::ShapeError, {"vander: expected N >= 0, got -1"},
        [] { vander(zeros({2}), -1); });
  // ---- Factorizations ----
  t.add("cholesky_inverse_rectangular", Raises::ShapeError,
        {"cholesky_inverse: expected square factors (*, n, n)", "[2, 3]"}, [] {
          cholesky_inverse(zeros({2, 3}));
        });
  t.add("cholesky_inverse_integral", Raises::DTypeError, {"cholesky_inverse", "int64"}, [] {
    cholesky_inverse(zeros({2, 2}, TensorOptions(kInt64)));
  });
  t.add("lu_unpack_pivot_dtype", Raises::DTypeError, {"lu_unpack: expected int32 pivots", "int64"},
        [] {
          lu_unpack(zeros({2, 2}), zeros({2}, TensorOptions(kInt64)));
        });
  t.add("lu_unpack_pivot_shape", Raises::ShapeError,
        {"lu_unpack: expected pivots of shape [3]", "[3, 4]", "got [4]"}, [] {
          lu_unpack(zeros({3, 4}), ones({4}, TensorOptions(kInt32)));
        });
  t.add("lu_unpack_pivot_range", Raises::Error, {"lu_unpack: pivots[1] = 5", "outside [1, 3]"}, [] {
    lu_unpack(zeros({3, 3}), tensor({1, 5, 3}));
  });
  t.add("lu_unpack_vector", Raises::ShapeError, {"lu_unpack", "at least 2 dims", "[3]"},
        [] { lu_unpack(zeros({3}), ones({1}, TensorOptions(kInt32))); });
  // ---- Covariance, integration ----
  t.add("cov_3d", Raises::ShapeError, {"cov: expected input of at most 2 dims", "[2, 2, 2]"}, [] {
    cov(zeros({2, 2, 2}));
  });
  t.add("cov_fweights_length", Raises::ShapeError, {"cov: expected fweights of 3 elements", "[2]"},
        [] {
          cov(zeros({2, 3}), 1, zeros({2}, TensorOptions(kInt64)));
        });
  t.add("cov_fweights_float", Raises::DTypeError,
        {"cov: expected fweights of an integral dtype", "float32"}, [] {
          cov(zeros({2, 3}), 1, zeros({3}));
        });
  t.add("cov_fweights_negative", Raises::Error, {"cov: fweights cannot be negative"}, [] {
    cov(zeros({2, 3}), 1, tensor({1, -1, 2}).to(kInt64));
  });
  t.add("cov_aweights_integral", Raises::DTypeError,
        {"cov: expected aweights of a floating dtype", "int64"}, [] {
          cov(zeros({2, 3}), 1, std::nullopt, zeros({3}, TensorOptions(kInt64)));
        });
  t.add("cov_aweights_negative", Raises::Error, {"cov: aweights cannot be negative"}, [] {
    cov(zeros({2, 3}), 1, std::nullopt, tensor({1.0f, -0.5f, 2.0f}));
  });
  t.add("trapezoid_x_size", Raises::ShapeError,
        {"trapezoid: expected one x for each of y's 3 samples along dim 1", "[2]"}, [] {
          trapezoid(zeros({2, 3}), zeros({2}));
        });
  t.add("trapezoid_x_rank", Raises::ShapeError, {"trapezoid", "more dims than y"}, [] {
    trapezoid(zeros({3}), zeros({1, 1, 3}));
  });
  t.add("trapezoid_0d", Raises::ShapeError, {"trapezoid: expected y of at least 1 dim"},
        [] { trapezoid(zeros({})); });
  t.add("cumulative_trapezoid_x_shape", Raises::ShapeError,
        {"cumulative_trapezoid: expected x with y's size 3 along dim 1", "[2, 2]"}, [] {
          cumulative_trapezoid(zeros({2, 3}), zeros({2, 2}));
        });
  // ---- Rearranging ----
  t.add("hsplit_not_dividing", Raises::ShapeError,
        {"hsplit: cannot split dim 1 of size 4", "into 3 equal sections"}, [] {
          hsplit(zeros({2, 4}), 3);
        });
  t.add("vsplit_1d", Raises::ShapeError, {"vsplit: expected at least 2 dims", "[4]"},
        [] { vsplit(zeros({4}), 2); });
  t.add("dsplit_zero_sections", Raises::ShapeError, {"dsplit", "into 0 equal sections"}, [] {
    dsplit(zeros({2, 2, 2}), 0);
  });
  t.add("combinations_matrix", Raises::ShapeError, {"combinations: expected a 1-d input"}, [] {
    combinations(zeros({2, 2}));
  });
  t.add("combinations_negative_r", Raises::Error, {"combinations: expected r >= 0, got -1"},
        [] { combinations(zeros({3}), -1); });
  t.add("combinations_too_many", Raises::ShapeError,
        {"combinations: the 30-combinations of 100 elements are too many for memory"},
        [] { combinations(zeros({100}), 30, /*with_replacement=*/true); });
  t.add("select_scatter_src_shape", Raises::ShapeError,
        {"select_scatter: expected src of the part's shape [3]", "got [2]"}, [] {
          select_scatter(zeros({2, 3}), zeros({2}), 0, 0);
        });
  t.add("slice_scatter_src_shape", Raises::ShapeError,
        {"slice_scatter: expected src of the part's shape [2, 2]", "got [2, 3]"}, [] {
          slice_scatter(zeros({2, 4}), zeros({2, 3}), 1, 0, 2);
        });
  t.add("slice_scatter_step", Raises::ShapeError, {"slice: step must be positive, got 0"}, [] {
    slice_scatter(zeros({2, 4}), zeros({2, 0}), 1, 0, 2, 0);
  });
  t.add("diagonal_scatter_src_shape", Raises::ShapeError,
        {"diagonal_scatter: expected src of the diagonal's shape [2]", "got [3]"}, [] {
          diagonal_scatter(zeros({2, 3}), zeros({3}));
        });
  t.add("diagonal_scatter_same_dims", Raises::ShapeError,
        {"diagonal_scatter: dim1 and dim2 are both dim 1"}, [] {
          diagonal_scatter(zeros({2, 3}), zeros({2}), 0, 1, -1);
        });
  t.add("masked_scatter_short_source", Raises::ShapeError,
        {"masked_scatter: the mask has 2 true places but source only 1 elements"}, [] {
          masked_scatter(zeros({3}), tensor({true, false, true}), zeros({1}));
        });
  t.add("masked_scatter_int_mask", Raises::DTypeError,
        {"masked_scatter: expected a bool mask", "int32"}, [] {
          masked_scatter(zeros({3}), tensor({1, 0, 1}), zeros({3}));
        });
  t.add("masked_scatter_source_dtype", Raises::DTypeError,
        {"masked_scatter: expected source of input's dtype float32", "float64"}, [] {
          masked_scatter(zeros({3}), tensor({true, false, true}), zeros({3}, kFloat64));
        });
  t.add("unique_dim_empty_other_dim", Raises::ShapeError,
        {"unique_dim: dim 1 of shape [2, 0] is empty and is not dim 0"}, [] {
          unique_dim(zeros({2, 0}), 0);
        });
  t.add("unique_dim_0d", Raises::ShapeError, {"unique_dim: expected at least 1 dim"},
        [] { unique(zeros({}), true, false, false, 0); });
  t.add("unique_dim_out_of_range", Raises::ShapeError, {"unique_dim", "dimension 2"}, [] {
    unique_dim(zeros({2, 2}), 2);
  });
  t.add("histogram_integral", Raises::DTypeError, {"histogram: expected a floating input", "int64"},
        [] { histogram(zeros({3}, TensorOptions(kInt64))); });
  t.add("histogram_no_bins", Raises::Error, {"histogram: expected at least 1 bin, got 0"},
        [] { histogram(zeros({3}), 0); });
  t.add("histogram_range_size", Raises::Error, {"histogram: expected a range of 2 values", "3"},
        [] {
          histogram(zeros({3}), 4, std::vector<double>{0.0, 1.0, 2.0});
        });
  t.add("histogram_range_reversed", Raises::Error, {"histogram", "lo <= hi", "{2, 1}"}, [] {
    histogram(zeros({3}), 4, std::vector<double>{2.0, 1.0});
  });
  t.add("histogram_nan_data", Raises::Error, {"histogram: the input's range", "give the range"},
        [] {
          histogram(tensor({1.0f, std::numeric_limits<float>::quiet_NaN()}));
        });
  t.add("histogram_edges_decreasing", Raises::Error, {"histogram: expected increasing bin_edges"},
        [] {
          histogram(zeros({3}), tensor({0.0f, 2.0f, 1.0f}));
        });
  t.add("histogram_one_edge", Raises::ShapeError, {"histogram", "at least 2 values", "[1]"},
        [] { histogram(zeros({3}), zeros({1})); });
  t.add("histogram_weight_shape", Raises::ShapeError,
        {"histogram: expected weight of shape [3]", "[2]"},
        [] { histogram(zeros({3}), 2, std::nullopt, zeros({2})); });
  t.add("histogram_edges_dtype", Raises::DTypeError,
        {"histogram: expected bin_edges of input's dtype float32", "float64"},
        [] { histogram(zeros({3}), zeros({3}, kFloat64)); });
  t.add("fill_diagonal_1d", Raises::ShapeError, {"fill_diagonal_: expected at least 2 dims"}, [] {
    Tensor x = zeros({3});
    x.fill_diagonal_(1.0);
  });
  t.add("fill_diagonal_unequal_dims", Raises::ShapeError,
        {"fill_diagonal_: expected every dim of one size", "[2, 3, 2]"}, [] {
          Tensor x = zeros({2, 3, 2});
          x.fill_diagonal_(1.0);
        });
  t.add("fill_diagonal_leaf", Raises::Error, {"fill_diagonal_", "leaf"}, [] {
    Tensor x = zeros({2, 2}).requires_grad_(true);
    x.fill_diagonal_(1.0);
  });
  t.add("fill_diagonal_overflow", Raises::Error, {"fill_diagonal_: value 300", "uint8"}, [] {
    Tensor x = zeros({2, 2}, TensorOptions(kUInt8));
    x.fill_diagonal_(300.0);
  });
  t.add("nuclear_norm_vector", Raises::ShapeError, {"matrix_norm"},
        [] { nuclear_norm(zeros({3})); });
  // ---- The functional RNN cells ----
  t.add("lstm_cell_state_count", Raises::Error, {"lstm_cell: expected the state {h, c}, got 1"},
        [] {
          lstm_cell(zeros({2, 3}), {zeros({2, 4})}, zeros({16, 3}), zeros({16, 4}));
        });
  t.add("gru_cell_w_ih_shape", Raises::ShapeError,
        {"gru_cell: expected w_ih (12, 3)", "got shape [12, 2]"}, [] {
          gru_cell(zeros({2, 3}), zeros({2, 4}), zeros({12, 2}), zeros({12, 4}));
        });
  t.add("rnn_tanh_cell_state_shape", Raises::ShapeError,
        {"rnn_tanh_cell: expected a state (2, 4)", "[3, 4]"}, [] {
          rnn_tanh_cell(zeros({2, 3}), zeros({3, 4}), zeros({4, 3}), zeros({4, 4}));
        });
  t.add("rnn_relu_cell_bias_shape", Raises::ShapeError, {"rnn_relu_cell: expected b_ih (4)", "[3]"},
        [] {
          rnn_relu_cell(zeros({2, 3}), zeros({2, 4}), zeros({4, 3}), zeros({4, 4}), zeros({3}));
        });
  t.add("lstm_cell_weight_dtype", Raises::DTypeError, {"lstm_cell: w_hh is float64"}, [] {
    lstm_cell(zeros({2, 3}), {zeros({2, 4}), zeros({2, 4})}, zeros({16, 3}),
              zeros({16, 4}, kFloat64));
  });
  // ---- Creation ----
  t.add("hann_window_negative", Raises::ShapeError,
        {"hann_window: expected window_length >= 0, got -2"}, [] { hann_window(-2); });
  t.add("kaiser_window_integral", Raises::DTypeError,
        {"kaiser_window: expected a floating dtype", "int64"},
        [] { kaiser_window(4, TensorOptions(kInt64)); });
  t.add("kaiser_window_negative_beta", Raises::Error, {"kaiser_window: expected beta >= 0"},
        [] { kaiser_window(4, true, -1.0); });
  t.add("logspace_negative_steps", Raises::ShapeError, {"logspace: steps must be >= 0, got -1"},
        [] { logspace(0.0, 1.0, -1); });
  t.add("randint_like_empty_range", Raises::Error, {"randint: expected low < high"},
        [] { randint_like(zeros({2}), 3, 3); });
  // Values the dtype cannot hold were drawn and wrapped (uint8 mod 256, int32 past 2^31) or
  // overflowed (float16 to inf); PyTorch refuses them.
  t.add("randint_uint8_past_255", Raises::DTypeError, {"randint", "[0, 1000)", "uint8", "[0, 255]"},
        [] { randint(0, 1000, {5}, TensorOptions(kUInt8)); });
  t.add("randint_uint8_negative", Raises::DTypeError, {"randint", "[-5, 5)", "uint8"},
        [] { randint(-5, 5, {5}, TensorOptions(kUInt8)); });
  t.add("randint_int32_past_2_31", Raises::DTypeError,
        {"randint", "int32", "[-2147483648, 2147483647]"},
        [] { randint(0, std::int64_t{1} << 40, {3}, TensorOptions(kInt32)); });
  t.add("randint_float16_past_2048", Raises::DTypeError, {"randint", "float16", "[-2048, 2048]"},
        [] { randint(0, 100000, {5}, TensorOptions(kFloat16)); });
  t.add("randint_like_uint8_past_255", Raises::DTypeError, {"randint", "uint8"},
        [] { randint_like(zeros({2}, kUInt8), 0, 1000); });
  t.add("randint_bool_past_1", Raises::DTypeError, {"randint", "bool", "[0, 1]"},
        [] { randint(0, 3, {2}, TensorOptions(kBool)); });
  // ---- as_strided, unfold, empty_strided, div's rounding modes ----
  t.add("as_strided_past_storage", Raises::ShapeError,
        {"as_strided", "reach element 13 of a storage of 12 elements", "[12]"}, [] {
          as_strided(zeros({12}), {2, 2}, {6, 1}, 6);
        });
  t.add("as_strided_negative_stride", Raises::ShapeError,
        {"as_strided: negative strides are not supported", "[1, -1]"}, [] {
          as_strided(zeros({4}), {2, 2}, {1, -1});
        });
  t.add("as_strided_stride_count", Raises::ShapeError, {"as_strided", "one stride per size"}, [] {
    as_strided(zeros({4}), {2, 2}, {1});
  });
  t.add("unfold_window_too_large", Raises::ShapeError, {"unfold: size 5", "[0, 4]", "[4]"},
        [] { zeros({4}).unfold(0, 5, 1); });
  t.add("unfold_zero_step", Raises::ShapeError, {"unfold: expected step > 0, got 0"},
        [] { zeros({4}).unfold(0, 2, 0); });
  t.add("empty_strided_stride_count", Raises::ShapeError,
        {"empty_strided: expected one stride per dim", "[2, 3]"}, [] {
          empty_strided({2, 3}, {1});
        });
  t.add("div_unknown_rounding_mode", Raises::Error,
        {"div: expected rounding_mode to be one of None, 'trunc', or 'floor'", "'round'"},
        [] { div(ones({2}), ones({2}), "round"); });
  t.add("div_rounding_two_bools", Raises::DTypeError, {"div: rounding_mode 'floor'", "bool"},
        [] { div(ones({2}, kBool), ones({2}, kBool), "floor"); });
  // ---- take, inner and the methods of session 56 ----
  t.add("take_out_of_range", Raises::ShapeError,
        {"take: expected every index in [-6, 6)", "[2, 3]"}, [] {
          take(zeros({2, 3}), full({1}, 6.0, kInt64));
        });
  t.add("take_int32_index", Raises::DTypeError, {"take: expected an int64 index", "int32"}, [] {
    take(zeros({2, 3}), zeros({1}, kInt32));
  });
  t.add("inner_sizes", Raises::ShapeError,
        {"inner: expected the last dims of one size", "[2, 3]", "[2, 2]"}, [] {
          inner(zeros({2, 3}), zeros({2, 2}));
        });
  t.add("sum_to_size_not_expandable", Raises::ShapeError, {"sum_to_size", "[2, 2]"}, [] {
    zeros({2, 3}).sum_to_size({2, 2});
  });
  t.add("is_nonzero_two_elements", Raises::ShapeError,
        {"is_nonzero: expected a tensor with one element", "[2]"}, [] { zeros({2}).is_nonzero(); });
  // ---- geqrf, householder_product, the _ex variants ----
  t.add("householder_product_wide", Raises::ShapeError,
        {"linalg_householder_product: expected A (*, m, n) with m >= n", "[2, 3]"}, [] {
          linalg::householder_product(zeros({2, 3}), zeros({2}));
        });
  t.add("householder_product_tau_too_long", Raises::ShapeError,
        {"linalg_householder_product: expected tau (*, k)", "k <= 2", "[3]"}, [] {
          linalg::householder_product(zeros({3, 2}), zeros({3}));
        });
  t.add("householder_product_dtypes", Raises::DTypeError,
        {"linalg_householder_product", "float32", "float64"}, [] {
          linalg::householder_product(zeros({3, 2}), zeros({2}, kFloat64));
        });
  t.add("geqrf_vector", Raises::ShapeError, {"geqrf", "[3]"}, [] { geqrf(zeros({3})); });
  t.add("cholesky_ex_check_errors", Raises::Error,
        {"linalg_cholesky_ex", "not positive definite", "order 1"},
        [] { linalg::cholesky_ex(neg(eye(2)), false, /*check_errors=*/true); });
  t.add("inv_ex_check_errors", Raises::Error, {"linalg_inv_ex", "singular"}, [] {
    linalg::inv_ex(zeros({2, 2}), /*check_errors=*/true);
  });
  t.add("lu_factor_ex_check_errors", Raises::Error,
        {"linalg_lu_factor_ex", "U[0, 0] is zero", "check_errors=false"}, [] {
          linalg::lu_factor_ex(zeros({2, 2}), true, /*check_errors=*/true);
        });
  // ---- ldl_factor, ldl_solve ----
  t.add("ldl_factor_not_square", Raises::ShapeError, {"linalg_ldl_factor", "square", "[2, 3]"}, [] {
    linalg::ldl_factor(zeros({2, 3}));
  });
  t.add("ldl_factor_integral", Raises::DTypeError,
        {"linalg_ldl_factor", "float32 or float64", "int64"}, [] {
          linalg::ldl_factor(zeros({2, 2}, kInt64));
        });
  t.add("ldl_factor_singular", Raises::Error,
        {"linalg_ldl_factor", "D[0, 0] is zero", "ldl_factor_ex"}, [] {
          linalg::ldl_factor(zeros({2, 2}));
        });
  t.add("ldl_factor_ex_check_errors", Raises::Error, {"linalg_ldl_factor_ex", "D[0, 0] is zero"},
        [] {
          linalg::ldl_factor_ex(zeros({2, 2}), false, /*check_errors=*/true);
        });
  t.add("ldl_solve_pivot_dtype", Raises::DTypeError, {"linalg_ldl_solve", "int32", "int64"}, [] {
    linalg::ldl_solve(eye(2), ones({2}, kInt64), ones({2, 1}));
  });
  t.add("ldl_solve_pivot_shape", Raises::ShapeError,
        {"linalg_ldl_solve", "pivots of shape [2]", "[3]"}, [] {
          linalg::ldl_solve(eye(2), ones({3}, kInt32), ones({2, 1}));
        });
  t.add("ldl_solve_b_rows", Raises::ShapeError,
        {"linalg_ldl_solve", "B of shape (*, 2, k)", "[3, 1]"}, [] {
          linalg::ldl_solve(eye(2), ones({2}, kInt32), ones({3, 1}));
        });
  t.add("ldl_solve_dtypes", Raises::DTypeError, {"linalg_ldl_solve", "float32", "float64"}, [] {
    linalg::ldl_solve(eye(2), ones({2}, kInt32), ones({2, 1}, kFloat64));
  });
  t.add("ldl_solve_pivot_range", Raises::Error, {"linalg_ldl_solve", "pivots in [1, 2]", "got 5"},
        [] {
          linalg::ldl_solve(eye(2), full({2}, 5.0, TensorOptions(kInt32)), ones({2, 1}));
        });
  t.add("ldl_solve_unpaired_block", Raises::Error, {"linalg_ldl_solve", "opens a 2 x 2 block"}, [] {
    linalg::ldl_solve(eye(2), tensor(std::vector<std::int64_t>{1, -2}, {2}).to(kInt32),
                      ones({2, 1}));
  });
  // ---- histogramdd ----
  t.add("histogramdd_bin_counts", Raises::Error,
        {"histogramdd: expected 2 bin counts", "[5, 2]", "got 3"}, [] {
          histogramdd(zeros({5, 2}), std::vector<std::int64_t>{2, 2, 2});
        });
  t.add("histogramdd_range_size", Raises::Error,
        {"histogramdd: expected a range of 4 values", "got 2"}, [] {
          histogramdd(zeros({5, 2}), 3, std::vector<double>{0.0, 1.0});
        });
  t.add("histogramdd_no_coordinates", Raises::ShapeError,
        {"histogramdd: expected input (..., D) with D >= 1", "[5, 0]"}, [] {
          histogramdd(zeros({5, 0}), std::vector<std::int64_t>{});
        });
  t.add("histogramdd_edges_count", Raises::Error, {"histogramdd: expected 2 bin_edges", "got 1"},
        [] {
          histogramdd(zeros({5, 2}), std::vector<Tensor>{arange(3.0)});
        });
  t.add("histogramdd_weight_shape", Raises::ShapeError,
        {"histogramdd: expected weight of shape [5]", "[5, 2]"}, [] {
          histogramdd(zeros({5, 2}), 2, std::nullopt, zeros({5, 2}));
        });
  t.add("histogramdd_zero_bins", Raises::Error,
        {"histogramdd: expected at least 1 bin in every dim", "dim 1"}, [] {
          histogramdd(zeros({5, 2}), std::vector<std::int64_t>{2, 0});
        });
  // ---- put, ormqr, the in-place view ops, resize_, set_, the accessors ----
  t.add("put_out_of_range", Raises::ShapeError,
        {"put: expected every index in [-6, 6)", "[2, 3]", "[2]"}, [] {
          put(zeros({2, 3}), arange(1.0, 7.0, 5.0, kInt64), zeros({2}));
        });
  t.add("put_counts", Raises::ShapeError,
        {"put: expected as many elements in source as in index", "[3]", "[2]"}, [] {
          put(zeros({2, 3}), arange(1.0, 3.0, 1.0, kInt64), zeros({3}));
        });
  t.add("put_source_dtype", Raises::DTypeError, {"put", "float32", "float64"}, [] {
    put(zeros({2, 3}), full({1}, 1.0, kInt64), zeros({1}, kFloat64));
  });
  t.add("put_index_dtype", Raises::DTypeError, {"put: expected an int64 index", "int32"}, [] {
    put(zeros({2, 3}), zeros({1}, kInt32), zeros({1}));
  });
  t.add("ormqr_other_rows", Raises::ShapeError,
        {"ormqr: expected other's rows to number input's 4 rows", "[4, 2]", "[3, 2]"}, [] {
          ormqr(zeros({4, 2}, kFloat64), zeros({2}, kFloat64), zeros({3, 2}, kFloat64));
        });
  t.add("ormqr_right_columns", Raises::ShapeError, {"ormqr", "columns", "[2, 3]"}, [] {
    ormqr(zeros({4, 2}, kFloat64), zeros({2}, kFloat64), zeros({2, 3}, kFloat64), false);
  });
  t.add("ormqr_tau_too_long", Raises::ShapeError, {"ormqr: expected tau (*, k)", "[3]"}, [] {
    ormqr(zeros({4, 2}, kFloat64), zeros({3}, kFloat64), zeros({4, 2}, kFloat64));
  });
  t.add("ormqr_batch", Raises::ShapeError, {"ormqr: expected other with input's batch dims"}, [] {
    ormqr(zeros({2, 4, 2}, kFloat64), zeros({2, 2}, kFloat64), zeros({3, 4, 2}, kFloat64));
  });
  t.add("t__of_3d", Raises::ShapeError, {"t: expected a tensor of at most 2 dims", "[2, 2, 2]"},
        [] {
          Tensor x = zeros({2, 2, 2});
          x.t_();
        });
  t.add("transpose__dim", Raises::ShapeError, {"transpose", "5"}, [] {
    Tensor x = zeros({2, 2});
    x.transpose_(0, 5);
  });
  t.add("unsqueeze__leaf_requires_grad", Raises::Error,
        {"unsqueeze_: in-place operation on a leaf tensor that requires grad", "[2]"}, [] {
          Tensor x = zeros({2}).requires_grad_();
          x.unsqueeze_(0);
        });
  t.add("as_strided__past_storage", Raises::ShapeError,
        {"as_strided", "reach element 4 of a storage of 4 elements"}, [] {
          Tensor x = zeros({4});
          x.as_strided_({3}, {2});
        });
  t.add("resize__negative", Raises::ShapeError, {"resize_: expected sizes of at least 0", "-2"},
        [] {
          Tensor x = zeros({2});
          x.resize_({3, -2});
        });
  t.add("resize__overflow", Raises::ShapeError, {"resize_"}, [] {
    Tensor x = zeros({2});
    x.resize_({std::int64_t{1} << 62, 8});
  });
  t.add("resize__requires_grad", Raises::Error,
        {"resize_: cannot resize a tensor (shape [2]) that requires grad"}, [] {
          Tensor x = zeros({2}).requires_grad_();
          x.resize_({4});
        });
  t.add("set__dtype", Raises::DTypeError,
        {"set_: expected source of this tensor's dtype float32", "int64"}, [] {
          Tensor x = zeros({2});
          x.set_(zeros({2}, kInt64));
        });
  t.add("set__source_requires_grad", Raises::Error, {"set_: the source (shape [3]) requires grad"},
        [] {
          Tensor x = zeros({2});
          x.set_(zeros({3}).requires_grad_());
        });
  t.add("accessor_dtype", Raises::DTypeError, {"accessor<float64, 2>", "float32", "[2, 3]"}, [] {
    const Tensor x = zeros({2, 3});
    x.accessor<double, 2>();
  });
  t.add("accessor_dims", Raises::ShapeError, {"accessor<float32, 3>", "3-d", "[2, 3]"}, [] {
    const Tensor x = zeros({2, 3});
    x.accessor<float, 3>();
  });
  t.add("packed_accessor32_offsets", Raises::ShapeError,
        {"packed_accessor32", "beyond int32", "use packed_accessor64"}, [] {
          const Tensor wide = zeros({1}).expand({std::int64_t{1} << 31});
          wide.packed_accessor32<float, 1>();
        });
  t.add("eq__result_shape", Raises::ShapeError, {"eq_", "[2, 3]", "does not fit", "[3]"}, [] {
    Tensor x = zeros({3});
    x.eq_(zeros({2, 3}));
  });
  return t.cases();
}
LG_MISUSE_SUITE(ArrayFunctions, array_function_cases());

}  // namespace
}  // namespace leangrad::test
