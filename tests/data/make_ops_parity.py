"""PyTorch 1.13's results for the tensor-op parity review (tests/core/test_ops_parity.cpp):
logical add/mul/maximum/minimum of bool tensors, pow of integers, clamp of integral tensors,
masked_fill with a broadcasting mask, arange of integral dtypes, the values full and fill_
accept. Each case holds its inputs ("x", "t", ...) and the output "y"; the printing cases hold
a tensor "x" and, as the parameter "repr", what PyTorch prints for it.

Where the C++ test expects an error, expect_error() below checks, when this script runs, that
PyTorch raises for those inputs too.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_ops_parity.py
"""
import math

import torch

from reference import write
from torch_cases import expect_error

cases = []
i64, i32, u8, f16 = torch.int64, torch.int32, torch.uint8, torch.float16
T = torch.tensor


def case(name, y, **inputs):
    tensors = dict(inputs)
    tensors["y"] = y
    cases.append({"name": name, "tensors": tensors})


# ---- Two bool operands: add and maximum are or, mul and minimum and; sub and pow raise --------
x, t = T([True, True, False, False]), T([True, False, True, False])
case("bool_add", x + t, x=x, t=t)
case("bool_mul", x * t, x=x, t=t)
case("bool_maximum", torch.maximum(x, t), x=x, t=t)
case("bool_minimum", torch.minimum(x, t), x=x, t=t)
case("bool_add_inplace", x.clone().add_(t), x=x, t=t)
case("bool_mul_inplace", x.clone().mul_(t), x=x, t=t)
case("bool_add_broadcast_0d", x + T(True), x=x)
case("bool_div", x / T([True, True, True, True]), x=x)
expect_error("sub of bool tensors", lambda: x - t, "Subtraction")
expect_error("pow of bool tensors", lambda: x ** t, "not implemented for 'Bool'")
expect_error("add_ of an int64 tensor into a bool one", lambda: x.clone().add_(T([1, 1, 1, 1])),
             "result type Long can't be cast to the desired output type Bool")

# ---- pow of integers: a negative scalar exponent raises, a tensor of them does not -------------
x = T([2, 1, -1, 0, 3])
case("int64_pow_scalar", x ** 3, x=x)
case("int64_pow_zero", x ** 0, x=x)
case("int64_pow_negative_tensor", x ** T([-1, -1, -3, -1, -2]), x=x)
expect_error("int64 to the power -1", lambda: x ** -1, "Integers to negative integer powers")
expect_error("uint8 to the power -2", lambda: x.to(u8) ** -2, "Integers to negative integer powers")
expect_error("int32 pow_(-1)", lambda: x.to(i32).pow_(-1), "Integers to negative integer powers")

# ---- clamp of integral tensors: a non-integral bound gives float32 -----------------------------
x = T([0, 1, 2, 3])
case("clamp_int64_fractional_bounds", x.clamp(0.5, 2.5), x=x)
case("clamp_int64_fractional_min", x.clamp(min=1.5), x=x)
case("clamp_int32_fractional_max", x.to(i32).clamp(max=1.25), x=x.to(i32))
case("clamp_int64_integral_bounds", x.clamp(1, 2), x=x)
case("clamp_min_above_max", x.float().clamp(2.5, 1.5), x=x.float())
expect_error("clamp of uint8 at 300", lambda: x.to(u8).clamp(max=300), "without overflow")

# ---- masked_fill (out of place) broadcasts the tensor and the mask together ---------------------
x, mask = T([1.0, 2.0, 3.0]), T([[True], [False]])
case("masked_fill_broadcast_mask", x.masked_fill(mask, -1.0), x=x, mask=mask)
x = T([1, 2])
case("masked_fill_int64_fractional_value", x.masked_fill(T([True, False]), 2.5), x=x)
expect_error("masked_fill of uint8 with 300",
             lambda: torch.zeros(2, dtype=u8).masked_fill(T([True, False]), 300), "without overflow")

# ---- arange of integral dtypes: start, end and step truncated; int64 counts truncated values ----
case("arange_int64_fractional_step", torch.arange(0, 5, 1.5, dtype=i64))
case("arange_int64_fractional_start", torch.arange(0.5, 5, 1, dtype=i64))
case("arange_int64_negative_start", torch.arange(-2.5, 2, 1.5, dtype=i64))
case("arange_int32_fractional_step", torch.arange(0, 5, 1.5, dtype=i32))
case("arange_int32_negative_start", torch.arange(-2.5, 2, 1.5, dtype=i32))
case("arange_int32_fractional_end", torch.arange(0, 2.5, 1, dtype=i32))
case("arange_uint8_fractional_end", torch.arange(0, 2.5, 1, dtype=u8))
case("arange_int64_negative_step", torch.arange(5, 0.5, -1.5, dtype=i64))
case("arange_float32_fractional_step", torch.arange(0, 3, 0.1))
expect_error("arange of int64 with step 0.5", lambda: torch.arange(0, 5, 0.5, dtype=i64),
             "step must be nonzero")

# ---- full and fill_: values the dtype cannot hold raise; integral negatives wrap in uint8 -------
case("full_uint8_minus_one", torch.full((2,), -1, dtype=u8))
case("full_uint8_minus_255", torch.full((2,), -255, dtype=u8))
case("full_float16_largest", torch.full((2,), 65504.0, dtype=f16))
case("full_float16_infinity", torch.full((2,), math.inf, dtype=f16))
case("full_bool_two", torch.full((2,), 2, dtype=torch.bool))
case("fill_int64_fractional", torch.zeros(2, dtype=i64).fill_(-2.7))
for what, fn in [
    ("full of uint8 with 300", lambda: torch.full((2,), 300, dtype=u8)),
    ("full of uint8 with -256", lambda: torch.full((2,), -256, dtype=u8)),
    ("full of int32 with 3e9", lambda: torch.full((2,), 3e9, dtype=i32)),
    ("full of int64 with NaN", lambda: torch.full((2,), math.nan, dtype=i64)),
    ("full of int64 with infinity", lambda: torch.full((2,), math.inf, dtype=i64)),
    ("full of float16 with 65505", lambda: torch.full((2,), 65505.0, dtype=f16)),
    ("full of float32 with 1e300", lambda: torch.full((2,), 1e300)),
    ("fill_ of uint8 with -1.5", lambda: torch.zeros(2, dtype=u8).fill_(-1.5)),
    ("fill_ of uint8 with 255.5", lambda: torch.zeros(2, dtype=u8).fill_(255.5)),
    ("full_like of uint8 with 300", lambda: torch.full_like(torch.zeros(2, dtype=u8), 300)),
]:
    expect_error(what, fn, "without overflow")


# ---- Printing: repr(x) with the default print options ----------------------------------------
# PRINT_OPS[op](x) is what is printed (after requires_grad_ if asked): an op gives the result a
# grad_fn, whose name PyTorch prints with a digit leangrad's names lack (test_ops_parity.cpp).
PRINT_OPS = {"": lambda x: x, "mul_2": lambda x: x * 2, "sum": lambda x: x.sum(),
             "exp": lambda x: x.exp()}


def print_case(name, x, requires_grad=False, op=""):
    if requires_grad:
        x = x.clone().requires_grad_()
    params = {"repr": repr(PRINT_OPS[op](x)), "requires_grad": requires_grad}
    if op:
        params["op"] = op
    cases.append({"name": name, "params": params, "tensors": {"x": x}})


nan, inf = math.nan, math.inf
print_case("print_fractional", T([1.5, -2.25, 3.0]))
print_case("print_integral_floats", T([1.0, 2.0, 3.0]))
print_case("print_zeros", torch.zeros(3))
print_case("print_negative_zero", T([-0.0, 1.0]))
print_case("print_0d", T(2.5))
print_case("print_0d_integral", T(-2.0))
print_case("print_0d_int64", T(7))
print_case("print_0d_bool", T(True))
print_case("print_matrix", T([[1.0, -2.0], [3.0, 4.5]]))
print_case("print_3d", torch.arange(8.0).reshape(2, 2, 2))
print_case("print_4d_int64", torch.arange(16).reshape(2, 2, 2, 2))
print_case("print_small_magnitude", T([1e-5, 1.0]))
print_case("print_large_magnitude", T([1e9, 1.0]))
print_case("print_magnitude_ratio_over_1000", T([0.001, 10.0]))
print_case("print_magnitude_ratio_1000", T([0.01, 10.0]))
print_case("print_integral_ratio_over_1000", T([1.0, 2000.0]))
print_case("print_integral_over_1e8", T([123456789.0, 1.0]))
print_case("print_nan_and_infinities", T([nan, 1.0, -inf]))
print_case("print_nan_beside_fraction", T([nan, 1.5, inf]))
print_case("print_all_nan", T([nan, nan]))
print_case("print_int64", T([1, -20, 300]))
print_case("print_int64_large", T([123456789012, -1]))
print_case("print_bool", T([True, False]))
print_case("print_float64", T([1.0, 2.5], dtype=torch.float64))
print_case("print_float16", T([1.0, 2.5], dtype=f16))
print_case("print_bfloat16", T([1.0, 2.5], dtype=torch.bfloat16))
print_case("print_int32", T([1, 2], dtype=i32))
print_case("print_uint8", T([1, 200], dtype=u8))
print_case("print_empty", torch.zeros(0))
print_case("print_empty_2d", torch.zeros(2, 0))
print_case("print_empty_int64", torch.zeros(0, dtype=i64))
print_case("print_empty_2d_int32", torch.zeros(0, 3, dtype=i32))
print_case("print_summarized_1d", torch.arange(2000.0))
print_case("print_summarized_2d", torch.arange(2000.0).reshape(40, 50))
print_case("print_summarized_3d", torch.arange(1100.0).reshape(10, 10, 11) / 8)
print_case("print_summarized_int64", torch.arange(1001))
print_case("print_summarized_rows_only", torch.arange(1010.0).reshape(505, 2))
x = torch.arange(2000.0)
x[1000] = 0.5  # not shown, so it does not leave int mode
print_case("print_summarized_hidden_fraction", x)
print_case("print_wrapped_row", torch.arange(30.0) / 7)
print_case("print_wrapped_int64_row", torch.arange(40) * 1000)
print_case("print_wrapped_matrix", torch.arange(60.0).reshape(2, 30) / 7)
print_case("print_dtype_on_new_line", torch.arange(9, dtype=torch.float64) / 7)
print_case("print_requires_grad", T([1.0, 2.0]), requires_grad=True)
print_case("print_requires_grad_float64", torch.arange(9, dtype=torch.float64) / 7,
           requires_grad=True)
print_case("print_grad_fn_mul", T([1.0, 2.0]), requires_grad=True, op="mul_2")
print_case("print_grad_fn_sum", T([1.5, 2.0]), requires_grad=True, op="sum")
print_case("print_grad_fn_float64", torch.arange(9, dtype=torch.float64) / 7, requires_grad=True,
           op="exp")
print_case("print_no_grad_fn_without_requires_grad", T([1.0, 2.0]), op="mul_2")

write("ops_parity.json", "make_ops_parity.py", cases)
