"""PyTorch reference cases for tests/autograd/test_strided_and_division.cpp: as_strided (on
contiguous tensors and on views: a slice, a transpose, an expanded tensor whose elements share
memory), Tensor.unfold, and div with rounding_mode "trunc" and "floor" over float, integer and
mixed dtypes, with a tensor or a number for the divisor. Each case lists its operands in
params["inputs"]; the float ones that require grad have a reference gradient "d_" + name for the
random upstream gradient "g" of the output "y". Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_strided_and_division.py
"""
import torch

from reference import write
from torch_cases import op_case, uniform

torch.manual_seed(0)

cases = []


def case(name, op, inputs, fn, **params):
    cases.append(op_case(name, op, inputs, fn, **params))


# ---- as_strided: "view" names what is taken of the base "a" first (C++ applies the same) ----
def view_of(a, view):
    if view == "none":
        return a
    if view == "slice":  # rows 1.. of a (4, 5): storage offset 5
        return a[1:]
    if view == "narrow":  # elements 2..5 of a (12): offset 2, the storage reaches past it
        return a[2:6]
    if view == "transpose":
        return a.t()
    assert view == "expand"  # a (1, 4) as (3, 4): stride 0, elements share memory
    return a.expand(3, 4)


def strided(name, shape, view, size, stride, offset=None):
    params = dict(view=view, size=list(size), stride=list(stride))
    if offset is not None:
        params["offset"] = offset
    case("as_strided__" + name, "as_strided", {"a": uniform(*shape)},
         lambda a: torch.as_strided(view_of(a, view), size, stride, offset), **params)


strided("window", (4, 5), "none", (3, 3), (5, 1))
strided("sliding_overlap", (12,), "none", (3, 4), (2, 1), 1)
strided("stride0", (12,), "none", (2, 3), (0, 2))
strided("on_slice_default_offset", (4, 5), "slice", (2, 2), (5, 2))
strided("on_narrow_reaching_outside", (12,), "narrow", (2, 3), (1, 2), 0)
strided("on_transpose", (4, 5), "transpose", (3, 2), (1, 5), 2)
strided("on_expanded", (1, 4), "expand", (2, 2), (1, 1), 0)
strided("to_3d", (24,), "none", (2, 3, 2), (12, 1, 3))
strided("empty", (6,), "none", (0, 3), (3, 1))
strided("scalar", (6,), "none", (), (), 4)


def unfold(name, shape, view, dim, size, step):
    case("unfold__" + name, "unfold", {"a": uniform(*shape)},
         lambda a: view_of(a, view).unfold(dim, size, step), view=view, dim=dim, size=size,
         step=step)


unfold("last_dim_step2", (2, 7), "none", 1, 3, 2)
unfold("first_dim_overlap", (4, 3), "none", 0, 2, 1)
unfold("transposed", (4, 5), "transpose", -1, 2, 2)
unfold("whole", (5,), "none", 0, 5, 1)
unfold("scalar", (), "none", 0, 1, 1)


# ---- div with rounding_mode ----
def div_case(name, a, b, mode):
    inputs = {"a": a}
    params = dict(mode=mode)
    if isinstance(b, torch.Tensor):
        inputs["b"] = b
        fn = lambda a, b: torch.div(a, b, rounding_mode=mode)  # noqa: E731
    else:
        params["scalar"] = b
        fn = lambda a: torch.div(a, b, rounding_mode=mode)  # noqa: E731
    case("div__" + name + "_" + mode, "div", inputs, fn, **params)


for mode in ("trunc", "floor"):
    b = uniform(4, low=-3.0, high=3.0, grad=False)
    b[1] = 0.0  # a / 0: infinities and NaN, as true division's
    a = uniform(3, 4, low=-8.0, high=8.0, grad=False)
    a[2, 1] = 0.0
    div_case("f32_broadcast", a, b, mode)
    div_case("f64", uniform(5, low=-1e3, high=1e3, grad=False, dtype=torch.float64),
             uniform(5, low=0.5, high=7.0, grad=False, dtype=torch.float64) *
             torch.tensor([1, -1, 1, -1, 1], dtype=torch.float64), mode)
    ints = torch.randint(-50, 50, (3, 5))
    divisors = torch.tensor([7, -7, 3, -2, 1])
    div_case("int64", ints, divisors, mode)
    div_case("int32_by_int64", ints.to(torch.int32), divisors, mode)
    div_case("uint8_by_int_scalar", torch.randint(0, 255, (6,), dtype=torch.uint8), 7, mode)
    div_case("int64_by_negative_int_scalar", ints, -4, mode)
    div_case("int64_by_float_scalar", ints, 2.5, mode)
    div_case("int64_by_float_tensor", ints, uniform(5, low=1.0, high=4.0, grad=False), mode)
    div_case("f32_by_scalar", uniform(7, low=-9.0, high=9.0, grad=False), -1.5, mode)
    div_case("f32_requires_grad", uniform(2, 3, low=-4.0, high=4.0),
             uniform(3, low=0.5, high=2.0), mode)

write("strided_and_division.json", "make_strided_and_division.py", cases)
