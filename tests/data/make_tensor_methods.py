"""PyTorch reference cases for tests/autograd/test_tensor_methods.cpp: angle, put (written and
accumulated, negative and repeated positions), ormqr (each side and transpose, batched),
the deprecated triangular_solve (each triangle, transpose and unit diagonal, a broadcast
right-hand side), the comparisons and logic written into self (eq_ ... logical_not_, their
dtypes kept), and a chain of view ops done in place (squeeze_, t_, unsqueeze_, transpose_)
differentiated through. Each case lists its operands in params["inputs"]; those that require
grad have a reference gradient "d_" + name for the random upstream gradient "g" of "y". Run
with Debian's python3-torch:
/usr/bin/python3 tests/data/make_tensor_methods.py
"""
import warnings

import torch

from reference import write
from torch_cases import op_case, op_outputs_case, uniform

torch.manual_seed(0)
warnings.filterwarnings("ignore", message=".*triangular_solve is deprecated.*")

cases = []


def case(name, op, inputs, fn, **params):
    cases.append(op_case(name, op, inputs, fn, **params))


# ---- angle: pi below 0, 0 from -0.0 up, NaN kept; integers and bools give float32 ----
special = torch.tensor([-2.0, -0.0, 0.0, 3.0, float("nan"), -float("inf"), float("inf"), -1e-30])
case("angle__f32", "angle", {"a": special.clone().requires_grad_()}, torch.angle)
case("angle__f64", "angle", {"a": special.to(torch.float64).requires_grad_()}, torch.angle)
case("angle__f16", "angle", {"a": special.to(torch.float16)}, torch.angle)
case("angle__int64", "angle", {"a": torch.tensor([-5, 0, 7])}, torch.angle)
case("angle__bool", "angle", {"a": torch.tensor([True, False])}, torch.angle)


# ---- put: positions in the flattened input ----
def put_case(name, shape, index, source_shape, accumulate):
    case("put__" + name, "put",
         {"a": uniform(*shape), "index": torch.as_tensor(index), "source": uniform(*source_shape)},
         lambda a, index, source: a.put(index, source, accumulate=accumulate),
         accumulate=accumulate)


put_case("write_negative", (3, 4), [0, 5, -1, -11], (4,), False)
put_case("write_index_2d", (2, 3), [[1, 4], [2, 0]], (2, 2), False)
put_case("accumulate_repeated", (2, 3), [0, 0, -6, 5, 2], (5,), True)
put_case("accumulate_source_2d", (5,), [[4, 3], [4, 1]], (2, 2), True)
put_case("write_none", (2, 2), torch.zeros(0, dtype=torch.int64), (0,), False)


# ---- ormqr: Q (from geqrf) times other, from either side, transposed or not ----
def ormqr_case(name, a_shape, other_shape, left, transpose, k=None):
    a, tau = torch.geqrf(uniform(*a_shape, grad=False, dtype=torch.float64))
    if k is not None:
        tau = tau[..., :k].contiguous()
    other = uniform(*other_shape, grad=False, dtype=torch.float64)
    y = torch.ormqr(a, tau, other, left=left, transpose=transpose)
    cases.append(op_outputs_case("ormqr__" + name, "ormqr",
                                 {"a": a, "tau": tau, "other": other}, {"y": y}, left=left,
                                 transpose=transpose))


ormqr_case("left", (5, 3), (5, 4), True, False)
ormqr_case("left_transpose", (5, 3), (5, 2), True, True)
ormqr_case("right", (4, 4), (3, 4), False, False)
ormqr_case("right_transpose", (4, 2), (2, 4), False, True)
ormqr_case("batched_fewer_reflections", (2, 4, 3), (2, 4, 3), True, False, k=2)
ormqr_case("wide_input", (3, 5), (3, 2), True, True)


# ---- triangular_solve(b, A): op(A) X = b, the deprecated spelling ----
def well_conditioned(n, upper):
    """A triangular matrix with a dominant diagonal (its other triangle holds values that must
    not be read)."""
    m = uniform(n, n, grad=False, dtype=torch.float64)
    m = m + torch.diag(torch.tensor([3.0, -2.5, 4.0, 2.0][:n], dtype=torch.float64))
    return m.requires_grad_()


for upper in (True, False):
    for transpose in (False, True):
        for unit in (False, True):
            name = ("upper" if upper else "lower") + ("_transpose" if transpose else "") + \
                ("_unit" if unit else "")
            case("triangular_solve__" + name, "triangular_solve",
                 {"b": uniform(3, 2, dtype=torch.float64), "A": well_conditioned(3, upper)},
                 lambda b, A: torch.triangular_solve(b, A, upper=upper, transpose=transpose,
                                                     unitriangular=unit).solution,
                 upper=upper, transpose=transpose, unitriangular=unit)
case("triangular_solve__batch_broadcast", "triangular_solve",
     {"b": uniform(2, 4, 3, dtype=torch.float64), "A": well_conditioned(4, True)},
     lambda b, A: torch.triangular_solve(b, A).solution, upper=True, transpose=False,
     unitriangular=False)


# ---- comparisons and logic written into self: self's dtype kept ----
def predicate_case(name, method, a, other):
    inputs = {"a": a}
    params = dict(method=method)
    if isinstance(other, torch.Tensor):
        inputs["b"] = other
    else:
        params["scalar"] = other
    y = getattr(a.clone(), method)(*([other] if other is not None else []))
    cases.append(op_outputs_case("predicate__" + name, "predicate", inputs, {"y": y}, **params))


x = torch.tensor([[1.0, -2.0, float("nan")], [0.0, 3.5, -0.0]])
row = torch.tensor([1.0, 3.5, float("nan")])
predicate_case("eq_f32_broadcast", "eq_", x, row)
predicate_case("ne_f32_broadcast", "ne_", x, row)
predicate_case("lt_f32_scalar", "lt_", x, 0.5)
predicate_case("le_f64_tensor", "le_", x.to(torch.float64), torch.zeros(2, 3))
predicate_case("gt_int64_scalar", "gt_", torch.tensor([1, 2, 3, -4]), 2.5)
predicate_case("ge_uint8_int_tensor", "ge_", torch.tensor([0, 7, 200], dtype=torch.uint8),
               torch.tensor([1, 7, 100]))
predicate_case("logical_and_f32", "logical_and_", x, row)
predicate_case("logical_or_int32", "logical_or_", torch.tensor([0, 2, 0], dtype=torch.int32),
               torch.tensor([0.0, 0.0, 0.5]))
predicate_case("logical_xor_bool", "logical_xor_", torch.tensor([True, False, True]),
               torch.tensor([True, True, False]))
predicate_case("logical_not_f32", "logical_not_", x, None)


# ---- view ops in place, differentiated through: y = 1.5 x, then y's own geometry changed ----
def view_chain(x):
    y = x * 1.5
    y.squeeze_(1)      # (2, 1, 3) -> (2, 3)
    y.t_()             # (3, 2)
    y.unsqueeze_(0)    # (1, 3, 2)
    y.transpose_(0, 2)  # (2, 3, 1)
    y.swapdims_(1, 2)  # (2, 1, 3)
    return y


chain = view_chain(torch.zeros(2, 1, 3))
case("view_chain", "view_chain", {"x": uniform(2, 1, 3)}, view_chain,
     strides=list(chain.stride()))


def strided_in_place(x):
    y = x * 2.0
    y.as_strided_((3, 2), (1, 3), 1)
    return y


case("as_strided_", "as_strided_", {"x": uniform(4, 3)}, strided_in_place)

write("tensor_methods.json", "make_tensor_methods.py", cases)
