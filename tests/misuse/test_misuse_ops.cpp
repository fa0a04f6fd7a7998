// Misuse of the tensor ops: elementwise arithmetic and comparisons with shapes that do not
// broadcast and dtypes they do not take (remainder, floor_divide and the bitwise ops included),
// reductions over dims that do not exist or hold nothing, matmul with mismatched operands, cat and
// stack of incompatible lists; the special functions' orders, dimensions and domains (the
// Special table); the decompositions' dtypes, shapes, singular and indefinite inputs, modes and
// the gradients they do not have (the Linalg table). Tables of the misuse suite
// (tests/misuse/misuse_testing.h).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/orthogonal_polynomials.h>
#include <leangrad/autograd/pointwise_functions.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

constexpr std::int64_t k2Pow31 = std::int64_t{1} << 31;
constexpr std::int64_t k2Pow62 = std::int64_t{1} << 62;

Tensor make_matrix(const std::vector<double>& values) {
  const auto n = static_cast<std::int64_t>(std::sqrt(static_cast<double>(values.size())));
  return tensor(values, {n, n}).to(kFloat32);
}

std::vector<MisuseCase> elementwise_cases() {
  MisuseTable t;
  t.add("add_shapes_do_not_broadcast", Raises::ShapeError, {"add", "[2, 3]", "[4]"}, [] {
    ones({2, 3}) + ones({4});
  });
  t.add("sub_shapes_do_not_broadcast", Raises::ShapeError, {"sub", "[2, 1, 3]", "[2, 2]"}, [] {
    ones({2, 1, 3}) - ones({2, 2});
  });
  t.add("mul_shapes_do_not_broadcast", Raises::ShapeError, {"mul", "[3]", "[0]"},
        [] { ones({3}) * ones({0}); });
  t.add("div_shapes_do_not_broadcast", Raises::ShapeError, {"div", "[5, 2]", "[2, 5, 4]"}, [] {
    ones({5, 2}) / ones({2, 5, 4});
  });
  t.add("pow_shapes_do_not_broadcast", Raises::ShapeError, {"pow", "[2]", "[3]"},
        [] { pow(ones({2}), ones({3})); });
  t.add("maximum_shapes_do_not_broadcast", Raises::ShapeError, {"maximum", "[2]", "[3]"},
        [] { maximum(ones({2}), ones({3})); });
  t.add("gt_shapes_do_not_broadcast", Raises::ShapeError, {"gt", "[2]", "[3]"},
        [] { gt(ones({2}), ones({3})); });
  t.add("eq_shapes_do_not_broadcast", Raises::ShapeError, {"eq", "[2, 2]", "[3, 1]"}, [] {
    eq(ones({2, 2}), ones({3, 1}));
  });
  t.add("where_shapes_do_not_broadcast", Raises::ShapeError, {"where", "[2]", "[3]"},
        [] { where(ones({2}, kBool), ones({3}), ones({2})); });
  t.add("where_float_condition", Raises::DTypeError, {"where", "bool", "float32"},
        [] { where(ones({2}), ones({2}), zeros({2})); });
  // add, mul, maximum and minimum of bools are or / and, as PyTorch (tests/core/test_ops_parity).
  t.add("sub_bool_tensors", Raises::DTypeError, {"sub", "bool"},
        [] { ones({2}, kBool) - ones({2}, kBool); });
  t.add("pow_bool_by_bool", Raises::DTypeError, {"pow", "bool"},
        [] { pow(ones({2}, kBool), ones({2}, kBool)); });
  t.add("neg_bool", Raises::DTypeError, {"neg", "bool"}, [] { ones({2}, kBool).neg(); });
  t.add("relu_bool", Raises::DTypeError, {"relu", "bool"}, [] { ones({2}, kBool).relu(); });
  t.add("atan2_shapes_do_not_broadcast", Raises::ShapeError, {"atan2", "[2, 3]", "[4]"}, [] {
    atan2(ones({2, 3}), ones({4}));
  });
  t.add("atan2_undefined", Raises::Error, {"atan2", "undefined"},
        [] { atan2(ones({1}), Tensor()); });
  t.add("asin_undefined", Raises::Error, {"asin", "undefined"}, [] { asin(Tensor()); });
  // PyTorch's round_cpu is not implemented for integral dtypes with decimals.
  t.add("round_decimals_integral", Raises::DTypeError, {"round", "decimals = 2", "int64"},
        [] { round(ones({2}, kInt64), 2); });
  t.add("round_decimals_bool", Raises::DTypeError, {"round", "decimals = -1", "bool"},
        [] { round(ones({2}, kBool), -1); });
  t.add("add_undefined", Raises::Error, {"add", "undefined"}, [] { Tensor() + ones({1}); });
  t.add("exp_undefined", Raises::Error, {"exp", "undefined"}, [] { exp(Tensor()); });
  t.add("lt_undefined", Raises::Error, {"lt", "undefined"}, [] { lt(ones({1}), Tensor()); });
  t.add("add_more_than_12_dims", Raises::ShapeError,
        {"add", "12", "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"},
        [] { empty(Shape(13, 1)) + 1.0; });
  // (2^31, 2^31) float32 outputs are 2^64 bytes (issue 14 defect 1 reached the allocator).
  t.add("add_scalar_to_huge_expanded", Raises::ShapeError, {"add", "[2147483648, 2147483648]"}, [] {
    ones({1}).expand({k2Pow31, k2Pow31}) + 1.0;
  });
  t.add("mul_huge_broadcast", Raises::ShapeError, {"mul", "[2147483648, 2147483648]"}, [] {
    ones({1, 1}).expand({k2Pow31, 1}) * ones({1, 1}).expand({1, k2Pow31});
  });
  // 2^62 + 1 bool results are more bytes than any memory.
  t.add("gt_huge_expanded", Raises::ShapeError, {"gt", "[4611686018427387905]"},
        [] { gt(ones({1}).expand({k2Pow62 + 1}), 0.0); });
  // remainder, fmod, floor_divide and the bitwise ops.
  t.add("bitwise_and_float", Raises::DTypeError, {"bitwise_and", "integral or bool", "float32"},
        [] { bitwise_and(ones({2}), ones({2}, kInt64)); });
  t.add("bitwise_or_float_scalar", Raises::Error, {"bitwise_or", "an integer", "1.5", "int64"},
        [] { bitwise_or(ones({2}, kInt64), 1.5); });
  t.add("bitwise_not_float", Raises::DTypeError, {"bitwise_not", "integral or bool", "float64"},
        [] { bitwise_not(ones({2}, kFloat64)); });
  t.add("bitwise_xor_shapes", Raises::ShapeError, {"bitwise_xor", "[2]", "[3]"},
        [] { bitwise_xor(ones({2}, kInt32), ones({3}, kInt32)); });
  t.add("remainder_bool", Raises::DTypeError, {"remainder", "bool"},
        [] { remainder(ones({2}, kBool), ones({2}, kBool)); });
  t.add("fmod_shapes", Raises::ShapeError, {"fmod", "[2, 3]", "[4]"}, [] {
    fmod(ones({2, 3}), ones({4}));
  });
  t.add("floor_divide_into_int_by_float", Raises::DTypeError,
        {"floor_divide_", "float32", "can't be cast", "int64"}, [] {
          Tensor x = ones({2}, kInt64);
          x.floor_divide_(ones({2}));
        });
  t.add("remainder_in_place_grows_self", Raises::ShapeError,
        {"remainder_", "[2, 3]", "does not fit in self of shape [3]"}, [] {
          Tensor x = ones({3});
          x.remainder_(ones({2, 3}));
        });
  return t.cases();
}
LG_MISUSE_SUITE(Elementwise, elementwise_cases());

std::vector<MisuseCase> reduction_cases() {
  MisuseTable t;
  t.add("sum_dim_out_of_range", Raises::ShapeError, {"sum", "dim 2", "[2, 3]"}, [] {
    ones({2, 3}).sum({2});
  });
  t.add("sum_negative_dim_out_of_range", Raises::ShapeError, {"sum", "-3", "[2, 3]"}, [] {
    ones({2, 3}).sum({-3});
  });
  t.add("sum_repeated_dim", Raises::ShapeError, {"sum", "[0, -2]"}, [] {
    ones({2, 3}).sum({0, -2});
  });
  t.add("sum_dim_of_0d", Raises::ShapeError, {"sum", "1", "[]"}, [] { full({}, 1.0).sum({1}); });
  t.add("mean_integral", Raises::DTypeError, {"mean", "int64"}, [] { ones({2}, kInt64).mean(); });
  t.add("mean_bool", Raises::DTypeError, {"mean", "bool"}, [] { ones({2}, kBool).mean({0}); });
  t.add("mean_dim_out_of_range", Raises::ShapeError, {"mean", "1", "[2]"},
        [] { ones({2}).mean({1}); });
  // PyTorch: the max of nothing is an error (the sum of nothing is 0, the mean NaN).
  t.add("max_of_empty", Raises::ShapeError, {"max", "[0]"}, [] { zeros({0}).max(); });
  t.add("max_over_empty_dim", Raises::ShapeError, {"max", "[2, 0]"}, [] {
    zeros({2, 0}).amax({1});
  });
  t.add("matmul_0d_operand", Raises::ShapeError, {"matmul", "at least 1 dim", "[] and [2]"},
        [] { matmul(ones({}), ones({2})); });
  t.add("max_dim_out_of_range", Raises::ShapeError, {"amax:", "dimension 5", "2-d"}, [] {
    ones({2, 3}).amax({5});
  });
  t.add("argmax_of_empty", Raises::ShapeError, {"argmax", "[0, 3]"}, [] {
    zeros({0, 3}).argmax();
  });
  t.add("argmax_over_empty_dim", Raises::ShapeError, {"argmax", "[3, 0]"}, [] {
    zeros({3, 0}).argmax(1);
  });
  t.add("argmax_dim_out_of_range", Raises::ShapeError, {"argmax", "1", "[2]"},
        [] { ones({2}).argmax(1); });
  t.add("sum_undefined", Raises::Error, {"sum", "undefined"}, [] { sum(Tensor()); });
  t.add("argmax_undefined", Raises::Error, {"argmax", "undefined"}, [] { argmax(Tensor()); });
  return t.cases();
}
LG_MISUSE_SUITE(Reductions, reduction_cases());

std::vector<MisuseCase> matmul_cases() {
  MisuseTable t;
  t.add("matmul_inner_dims_differ", Raises::ShapeError, {"matmul", "[2, 3]", "[4, 5]", "3 != 4"},
        [] {
          matmul(ones({2, 3}), ones({4, 5}));
        });
  t.add("matmul_vectors_differ", Raises::ShapeError, {"matmul", "[3]", "[4]"},
        [] { matmul(ones({3}), ones({4})); });
  t.add("matmul_0d_operand", Raises::ShapeError, {"matmul", "[]", "[2]"},
        [] { matmul(full({}, 2.0), ones({2})); });
  t.add("matmul_4d_batches_do_not_broadcast", Raises::ShapeError, {"matmul", "[2, 3]", "[4]"}, [] {
    matmul(ones({2, 3, 2, 2}), ones({4, 2, 2}));
  });
  t.add("matmul_4d_inner_dims_differ", Raises::ShapeError,
        {"matmul", "[1, 1, 2, 3]", "[4, 5]", "3 != 4"}, [] {
          matmul(ones({1, 1, 2, 3}), ones({4, 5}));
        });
  t.add("matmul_batches_differ", Raises::ShapeError, {"matmul", "[2, 2, 3]", "[3, 3, 4]", "2 != 3"},
        [] {
          matmul(ones({2, 2, 3}), ones({3, 3, 4}));
        });
  t.add("matmul_dtypes_differ", Raises::DTypeError, {"matmul", "float32", "float64"}, [] {
    matmul(ones({2, 2}), ones({2, 2}, kFloat64));
  });
  t.add("matmul_integral", Raises::DTypeError, {"matmul", "int64"}, [] {
    matmul(ones({2, 2}, kInt64), ones({2, 2}, kInt64));
  });
  t.add("matmul_undefined", Raises::Error, {"matmul", "defined"}, [] {
    matmul(ones({2, 2}), Tensor());
  });
  return t.cases();
}
LG_MISUSE_SUITE(Matmul, matmul_cases());

std::vector<MisuseCase> join_cases() {
  MisuseTable t;
  t.add("cat_empty_list", Raises::Error, {"cat", "non-empty"}, [] { cat({}); });
  t.add("cat_undefined_tensor", Raises::Error, {"cat", "undefined", "position 1"}, [] {
    cat({ones({2}), Tensor()});
  });
  t.add("cat_0d_tensors", Raises::ShapeError, {"cat", "zero-dimensional", "position 0"}, [] {
    cat({full({}, 1.0), full({}, 2.0)});
  });
  t.add("cat_dim_out_of_range", Raises::ShapeError, {"cat", "dimension 1", "1-d"}, [] {
    cat({ones({2}), ones({2})}, 1);
  });
  t.add("cat_ranks_differ", Raises::ShapeError, {"cat", "[2, 3]", "[3]", "tensor 1"}, [] {
    cat({ones({2, 3}), ones({3})});
  });
  t.add("cat_sizes_differ_off_dim", Raises::ShapeError, {"cat", "[2, 3]", "[2, 4]", "dimension 0"},
        [] {
          cat({ones({2, 3}), ones({2, 4})}, 0);
        });
  // Two views of 2^62 elements each: the concatenation's size overflows int64.
  t.add("cat_size_overflows", Raises::ShapeError, {"cat", "4611686018427387904", "overflows"}, [] {
    cat({ones({1}).expand({k2Pow62}), ones({1}).expand({k2Pow62})});
  });
  t.add("stack_empty_list", Raises::Error, {"stack", "non-empty"}, [] { stack({}); });
  t.add("stack_shapes_differ", Raises::ShapeError, {"stack", "[2]", "[3]"}, [] {
    stack({ones({2}), ones({3})});
  });
  t.add("stack_dim_out_of_range", Raises::ShapeError, {"stack", "3"}, [] {
    stack({ones({2}), ones({2})}, 3);
  });
  return t.cases();
}
LG_MISUSE_SUITE(Join, join_cases());

std::vector<MisuseCase> special_cases() {
  MisuseTable t;
  t.add("polygamma_negative_order", Raises::Error, {"polygamma: expected n >= 0, got -1"},
        [] { polygamma(-1, ones({2})); });
  t.add("polygamma_undefined", Raises::Error, {"polygamma", "defined input"},
        [] { polygamma(1, Tensor()); });
  t.add("mvlgamma_p_zero", Raises::Error, {"mvlgamma: expected p >= 1, got 0"},
        [] { mvlgamma(ones({2}), 0); });
  t.add("mvlgamma_element_too_small", Raises::Error,
        {"mvlgamma: every element must be greater than (p - 1) / 2 = 1", "p = 3", "[3]"},
        [] { mvlgamma(full({3}, 1.0), 3); });
  t.add("mvlgamma_nan_element", Raises::Error, {"mvlgamma: every element must be greater"},
        [] { mvlgamma(full({1}, std::numeric_limits<double>::quiet_NaN()), 1); });
  t.add("special_zeta_gradient_in_x", Raises::Error,
        {"special_zeta: the derivative with respect to x (the exponent) is not implemented"}, [] {
          const Tensor x = full({2}, 2.0).requires_grad_();
          sum(special_zeta(x, ones({2}))).backward();
        });
  t.add("special_zeta_shapes", Raises::ShapeError, {"zeta", "[2]", "[3]"},
        [] { special_zeta(ones({2}), ones({3})); });
  t.add("chebyshev_polynomial_undefined_degree", Raises::Error,
        {"special_chebyshev_polynomial_t: expected a defined degree"},
        [] { special_chebyshev_polynomial_t(ones({2}), Tensor()); });
  t.add("hermite_polynomial_undefined_input", Raises::Error,
        {"special_hermite_polynomial_h: expected a defined input"},
        [] { special_hermite_polynomial_h(Tensor(), 3.0); });
  t.add("legendre_polynomial_shapes", Raises::ShapeError,
        {"special_legendre_polynomial_p", "[2]", "[3]"},
        [] { special_legendre_polynomial_p(ones({2}), ones({3})); });
  t.add("laguerre_polynomial_degree_above_limit", Raises::Error,
        {"special_laguerre_polynomial_l: a degree above 2^20 = 1048576 (in n of shape [2])",
         "Laguerre and Legendre polynomials run n steps"},
        [] { special_laguerre_polynomial_l(ones({2}), full({2}, 2e6)); });
  t.add("chebyshev_polynomial_gradient_degree_above_limit", Raises::Error,
        {"special_chebyshev_polynomial_u: a degree above 2^20", "the gradient runs n steps"}, [] {
          const Tensor x = full({2}, 0.5).requires_grad_();
          sum(special_chebyshev_polynomial_u(x, 3e6)).backward();
        });
  t.add("lgamma_in_place_integral", Raises::DTypeError, {"lgamma"}, [] {
    Tensor x = ones({2}, kInt64);
    x.lgamma_();
  });
  return t.cases();
}
LG_MISUSE_SUITE(Special, special_cases());

std::vector<MisuseCase> pointwise_cases() {
  MisuseTable t;
  t.add("gcd_float", Raises::DTypeError, {"gcd", "expected integral operands", "float32"},
        [] { gcd(ones({2}), ones({2}, kInt64)); });
  t.add("lcm_bool", Raises::DTypeError, {"lcm", "bool"},
        [] { lcm(ones({2}, kBool), ones({2}, kBool)); });
  t.add("left_shift_float", Raises::DTypeError, {"bitwise_left_shift", "float64"},
        [] { bitwise_left_shift(ones({2}, kFloat64), 1.0); });
  t.add("right_shift_fractional_count", Raises::Error,
        {"bitwise_right_shift", "an integer", "1.5", "int64"},
        [] { bitwise_right_shift(ones({2}, kInt64), 1.5); });
  t.add("left_shift_shapes", Raises::ShapeError, {"bitwise_left_shift", "[2]", "[3]"},
        [] { bitwise_left_shift(ones({2}, kInt32), ones({3}, kInt32)); });
  t.add("nextafter_float16", Raises::DTypeError, {"nextafter", "float32 or float64", "float16"},
        [] { nextafter(ones({2}, kFloat16), ones({2}, kFloat16)); });
  t.add("nextafter_gradient", Raises::Error, {"nextafter: the derivative is not implemented"}, [] {
    const Tensor a = ones({2}, kFloat64).requires_grad_();
    sum(nextafter(a, zeros({2}, kFloat64))).backward();
  });
  t.add("hypot_shapes", Raises::ShapeError, {"hypot", "[2]", "[3]"},
        [] { hypot(ones({2}), ones({3})); });
  t.add("hypot_undefined", Raises::Error, {"hypot", "undefined Tensor()"},
        [] { hypot(ones({2}), Tensor()); });
  t.add("fmax_devices_or_shapes", Raises::ShapeError, {"fmax", "[4]", "[5]"},
        [] { fmax(ones({4}), ones({5})); });
  t.add("heaviside_dtypes", Raises::DTypeError, {"heaviside", "float32", "float64"},
        [] { heaviside(ones({2}), ones({2}, kFloat64)); });
  t.add("logaddexp2_integral", Raises::DTypeError, {"logaddexp2", "int64"},
        [] { logaddexp2(ones({2}, kInt64), ones({2}, kInt64)); });
  t.add("frac_integral", Raises::DTypeError, {"frac", "int64"}, [] { frac(ones({2}, kInt64)); });
  t.add("positive_bool", Raises::DTypeError, {"positive", "bool"},
        [] { positive(ones({2}, kBool)); });
  t.add("igamma_gradient_in_a", Raises::Error,
        {"igamma: the derivative with respect to a (the first operand) is not implemented"}, [] {
          const Tensor a = full({2}, 2.0).requires_grad_();
          sum(igamma(a, ones({2}))).backward();
        });
  t.add("igammac_shapes", Raises::ShapeError, {"igammac", "[2]", "[3]"},
        [] { igammac(ones({2}), ones({3})); });
  t.add("xlogy_undefined", Raises::Error, {"xlogy", "defined"}, [] { xlogy(Tensor(), ones({2})); });
  t.add("erfc_in_place_integral", Raises::DTypeError, {"erfc_"}, [] {
    Tensor x = ones({2}, kInt64);
    x.erfc_();
  });
  t.add("float_power_in_place_float32", Raises::DTypeError, {"float_power_", "float32", "float64"},
        [] {
          Tensor x = ones({2});
          x.float_power_(2.0);
        });
  t.add("special_ndtri_undefined", Raises::Error, {"special_ndtri"},
        [] { special_ndtri(Tensor()); });
  t.add("frexp_integral", Raises::DTypeError, {"frexp", "floating", "int64"},
        [] { frexp(ones({2}, kInt64)); });
  t.add("frexp_undefined", Raises::Error, {"frexp", "undefined Tensor()"}, [] { frexp(Tensor()); });
  t.add("bessel_y0_undefined", Raises::Error, {"special_bessel_y0", "undefined"},
        [] { special_bessel_y0(Tensor()); });
  t.add("modified_bessel_k1_undefined", Raises::Error, {"special_modified_bessel_k1", "undefined"},
        [] { special_modified_bessel_k1(Tensor()); });
  t.add("index_put_method_undefined_values", Raises::Error, {"index_put"},
        [] { ones({3}).index_put({make_tensor({0}, {1}, kInt64)}, Tensor()); });
  return t.cases();
}
LG_MISUSE_SUITE(Pointwise, pointwise_cases());

std::vector<MisuseCase> linalg_cases() {
  MisuseTable t;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  t.add("inv_integral", Raises::DTypeError, {"linalg_inv", "float32 or float64", "int64"}, [] {
    linalg::inv(ones({2, 2}, kInt64));
  });
  t.add("det_float16", Raises::DTypeError, {"linalg_det", "float16", "16-bit"}, [] {
    linalg::det(ones({2, 2}, kFloat16));
  });
  t.add("det_not_square", Raises::ShapeError, {"linalg_det", "square", "[2, 3]"}, [] {
    linalg::det(ones({2, 3}));
  });
  t.add("qr_one_dim", Raises::ShapeError, {"linalg_qr", "at least 2 dims", "[4]"},
        [] { linalg::qr(ones({4})); });
  t.add("svd_undefined", Raises::Error, {"linalg_svd", "undefined"}, [] { linalg::svd(Tensor()); });
  t.add("inv_singular", Raises::Error, {"linalg_inv", "diagonal element 2", "singular"}, [] {
    linalg::inv(ones({2, 2}));
  });
  t.add("inv_singular_batch_element", Raises::Error, {"linalg_inv (batch element 1)", "singular"},
        [] {
          linalg::inv(stack({eye(2), zeros({2, 2})}));
        });
  t.add("solve_singular", Raises::Error, {"linalg_solve", "singular"}, [] {
    linalg::solve(zeros({3, 3}), ones({3, 1}));
  });
  t.add("solve_rows_mismatch", Raises::ShapeError, {"linalg_solve", "[3, 3]", "[2, 1]"}, [] {
    linalg::solve(eye(3), ones({2, 1}));
  });
  t.add("solve_batches_do_not_broadcast", Raises::ShapeError, {"linalg_solve", "[2]", "[3]"}, [] {
    linalg::solve(ones({2, 3, 3}), ones({3, 3, 1}));
  });
  t.add("solve_dtypes_differ", Raises::DTypeError, {"linalg_solve", "float32", "float64"}, [] {
    linalg::solve(eye(2), ones({2, 1}, kFloat64));
  });
  t.add("solve_right_vector", Raises::ShapeError, {"linalg_solve", "left=false", "[3]"},
        [] { linalg::solve(eye(3), ones({3}), /*left=*/false); });
  t.add("solve_triangular_rows_mismatch", Raises::ShapeError,
        {"linalg_solve_triangular", "(*, n, k)", "n = 3", "[4, 2]"}, [] {
          linalg::solve_triangular(eye(3), ones({4, 2}), /*upper=*/true);
        });
  t.add("cholesky_not_positive_definite", Raises::Error,
        {"linalg_cholesky", "not positive definite", "leading minor of order 2"}, [] {
          linalg::cholesky(make_matrix({1, 2, 2, 1}));
        });
  t.add("cholesky_nan", Raises::Error, {"linalg_cholesky", "order 1"}, [nan] {
    linalg::cholesky(full({2, 2}, nan));
  });
  t.add("qr_bad_mode", Raises::Error,
        {"linalg_qr", "\"reduced\", \"complete\" or \"r\"", "\"full\""},
        [] { linalg::qr(eye(3), "full"); });
  t.add("qr_mode_r_backward", Raises::Error, {"linalg_qr", "mode \"r\""}, [] {
    const Tensor a = eye(3).requires_grad_();
    sum(std::get<1>(linalg::qr(a, "r"))).backward();
  });
  t.add("qr_complete_tall_backward", Raises::Error,
        {"linalg_qr", "\"complete\"", "m > n", "[4, 2]"}, [] {
          const Tensor a = ones({4, 2}).requires_grad_();
          sum(std::get<0>(linalg::qr(a, "complete"))).backward();
        });
  t.add("eigh_bad_uplo", Raises::Error, {"linalg_eigh", "\"L\" or \"U\"", "\"X\""},
        [] { linalg::eigh(eye(3), "X"); });
  t.add("eigh_nan", Raises::Error, {"linalg_eigh", "failed to converge", "NaN"}, [nan] {
    linalg::eigh(full({3, 3}, nan));
  });
  t.add("svd_infinity", Raises::Error, {"linalg_svd", "failed to converge", "infinity"}, [] {
    linalg::svd(full({2, 3}, std::numeric_limits<double>::infinity()));
  });
  t.add("lu_factor_without_pivoting", Raises::Error, {"linalg_lu_factor", "pivot must be true"},
        [] { linalg::lu_factor(eye(3), /*pivot=*/false); });
  t.add("lu_solve_pivots_dtype", Raises::DTypeError, {"linalg_lu_solve", "int32", "int64"}, [] {
    linalg::lu_solve(eye(2), ones({2}, kInt64), ones({2, 1}));
  });
  t.add("lu_solve_pivot_out_of_range", Raises::Error, {"lu_solve", "pivots[0] = 5", "[1, 2]"}, [] {
    linalg::lu_solve(eye(2), full({2}, 5.0, TensorOptions(kInt32)), ones({2, 1}));
  });
  // getrf never swaps a row with one above it: a pivot pointing up is not lu_factor's.
  t.add("lu_solve_pivot_above_its_row", Raises::Error,
        {"lu_solve", "pivots[1] = 1 is outside [2, 2]"}, [] {
          linalg::lu_solve(eye(2), full({2}, 1.0, TensorOptions(kInt32)), ones({2, 1}));
        });
  t.add("matrix_norm_bad_ord", Raises::Error, {"linalg_matrix_norm", "ord 1, -1, 2, -2", "3"},
        [] { linalg::matrix_norm(eye(3), 3.0); });
  t.add("matrix_norm_bad_name", Raises::Error,
        {"linalg_matrix_norm", "\"fro\" or \"nuc\"", "\"max\""},
        [] { linalg::matrix_norm(eye(3), "max"); });
  t.add("matrix_norm_same_dims", Raises::ShapeError, {"linalg_matrix_norm", "two different dims"},
        [] {
          linalg::matrix_norm(ones({2, 3, 3}), "fro", {1, -2});
        });
  t.add("cond_one_norm_not_square", Raises::ShapeError, {"linalg_cond", "square", "[2, 3]"}, [] {
    linalg::cond(ones({2, 3}), 1.0);
  });
  t.add("multi_dot_one_tensor", Raises::Error, {"linalg_multi_dot", "at least 2", "got 1"},
        [] { linalg::multi_dot({eye(2)}); });
  t.add("multi_dot_mismatch", Raises::ShapeError,
        {"linalg_multi_dot", "tensors 1 and 2", "[3, 4]", "[5, 2]"}, [] {
          linalg::multi_dot({ones({2, 3}), ones({3, 4}), ones({5, 2})});
        });
  t.add("multi_dot_middle_vector", Raises::ShapeError,
        {"linalg_multi_dot", "tensor 1 to be 2-d", "[3]"}, [] {
          linalg::multi_dot({ones({2, 3}), ones({3}), ones({3, 2})});
        });
  t.add("pinv_hermitian_not_square", Raises::ShapeError, {"linalg_pinv", "square", "[2, 3]"}, [] {
    linalg::pinv(ones({2, 3}), std::nullopt, std::nullopt, /*hermitian=*/true);
  });
  t.add("lstsq_bad_driver", Raises::Error, {"linalg_lstsq", "\"gelsy\"", "\"qr\""}, [] {
    linalg::lstsq(ones({3, 2}), ones({3, 1}), std::nullopt, "qr");
  });
  t.add("lstsq_rows_mismatch", Raises::ShapeError, {"linalg_lstsq", "[3, 2]", "[4, 1]"}, [] {
    linalg::lstsq(ones({3, 2}), ones({4, 1}));
  });
  t.add("norm_ord_of_a_3d_input", Raises::ShapeError,
        {"linalg_norm", "one or two dims", "[2, 3, 4]"}, [] {
          linalg::norm(ones({2, 3, 4}), 2.0);
        });
  t.add("tensorinv_not_square", Raises::ShapeError, {"linalg_tensorinv", "6 and 4", "[2, 3, 4]"},
        [] {
          linalg::tensorinv(ones({2, 3, 4}), 2);
        });
  t.add("tensorsolve_leading_dims", Raises::ShapeError, {"linalg_tensorsolve", "[3]", "[2, 2, 2]"},
        [] {
          linalg::tensorsolve(ones({2, 2, 2}), ones({3}));
        });
  t.add("matrix_exp_nan", Raises::Error, {"linalg_matrix_exp", "NaN or an infinity"}, [nan] {
    linalg::matrix_exp(full({2, 2}, nan));
  });
  return t.cases();
}
LG_MISUSE_SUITE(Linalg, linalg_cases());

}  // namespace
}  // namespace leangrad::test
