"""PyTorch's results for the inputs of the misuse suite that have a defined result
(tests/misuse/test_misuse_defined.cpp): empty tensors, NaN and infinities, zero-size dims, edge
points of gradients, the dtypes of mixed-dtype operands. Each case holds its inputs ("x", "t", ...), the output "y" and, for the
gradient cases, the input gradient "dx". Non-finite values are written as "nan", "inf", "-inf".

The misuse tables assert errors where PyTorch raises too; expect_error() (torch_cases.py)
checks, when this script runs, that PyTorch does raise for those inputs, so the tables follow
PyTorch's behaviour.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_misuse.py
"""
import math

import torch
import torch.nn.functional as F

from reference import write
from torch_cases import expect_error

nan, inf = math.nan, math.inf
cases = []


def case(name, y, **inputs):
    tensors = dict(inputs)
    tensors["y"] = y
    cases.append({"name": name, "tensors": tensors})


def grad_case(name, fn, x):
    x = x.clone().requires_grad_()
    y = fn(x)
    y.backward()
    cases.append({"name": name, "tensors": {"x": x, "y": y, "dx": x.grad}})


def summed_grad_case(name, fn, x):
    """y = fn(x) (not a scalar) and dx, the gradient of y.sum()."""
    x = x.clone().requires_grad_()
    y = fn(x)
    y.sum().backward()
    cases.append({"name": name, "tensors": {"x": x, "y": y, "dx": x.grad}})


def binary_grad_case(name, fn, x, t):
    """y = fn(x, t) and dx, dt, the gradients of y.sum()."""
    x, t = x.clone().requires_grad_(), t.clone().requires_grad_()
    y = fn(x, t)
    y.sum().backward()
    cases.append({"name": name, "tensors": {"x": x, "t": t, "y": y, "dx": x.grad, "dt": t.grad}})


f32 = torch.float32
i64 = torch.int64

# ---- Reductions over nothing, and over NaN and infinities ------------------------------------
case("sum_of_empty", torch.zeros(0).sum())
case("sum_over_empty_dim", torch.zeros(0, 3).sum(0))
case("sum_of_empty_int64", torch.zeros(0, dtype=i64).sum())
case("mean_of_empty", torch.zeros(0).mean())
case("mean_over_empty_dim", torch.zeros(0, 3).mean(0))
case("amax_of_empty_rows", torch.zeros(0, 3).amax(1))
case("argmax_of_empty_rows", torch.zeros(0, 3).argmax(1))
x = torch.tensor([1.0, nan, 3.0])
case("max_propagates_nan", x.max(), x=x)
case("argmax_picks_nan", x.argmax(), x=x)
x = torch.tensor([[1.0, nan], [2.0, 3.0]])
case("amax_rows_with_nan", x.amax(1), x=x)
x = torch.tensor([inf, -inf])
case("sum_of_opposite_infinities", x.sum(), x=x)
x = torch.tensor([inf, 1.0])
case("mean_with_infinity", x.mean(), x=x)
case("sum_of_0d", torch.tensor(3.0).sum())
expect_error("max of an empty tensor", lambda: torch.zeros(0).max())
expect_error("amax over an empty dim", lambda: torch.zeros(2, 0).amax(1))
expect_error("argmax of an empty tensor", lambda: torch.zeros(0, 3).argmax())
expect_error("mean of an int64 tensor", lambda: torch.ones(2, dtype=i64).mean())

# ---- Elementwise at the edges of their domains -------------------------------------------------
x = torch.tensor([nan, -inf, inf, -0.0])
case("relu_of_non_finite", F.relu(x), x=x)
x = torch.tensor([-inf, inf, nan])
case("sigmoid_of_non_finite", torch.sigmoid(x), x=x)
case("tanh_of_non_finite", torch.tanh(x), x=x)
case("exp_of_non_finite", torch.exp(x), x=x)
x = torch.tensor([0.0, -1.0, inf, -0.0])
case("log_at_domain_edges", torch.log(x), x=x)
x = torch.tensor([-1.0, 0.0, inf])
case("sqrt_at_domain_edges", torch.sqrt(x), x=x)
x = torch.tensor([1.0, -1.0, 0.0])
case("div_by_zero", x / 0.0, x=x)
x, t = torch.tensor([1, 0, -3], dtype=i64), torch.tensor([0, 0, 0], dtype=i64)
case("int64_div_by_zero", x / t, x=x, t=t)
x, t = torch.tensor([0.0, -8.0]), torch.tensor([-1.0, 1.0 / 3.0])
case("pow_negative_and_fractional", torch.pow(x, t), x=x, t=t)
x, t = torch.tensor([nan, 1.0, nan]), torch.tensor([0.0, nan, nan])
case("maximum_propagates_nan", torch.maximum(x, t), x=x, t=t)
case("eq_of_nan", torch.eq(x, t), x=x, t=t)
x = torch.tensor([nan, 2.0])
case("where_keeps_nan", torch.where(torch.tensor([True, False]), x, torch.zeros(2)), x=x)
expect_error("add of bool tensors", lambda: torch.ones(2, dtype=torch.bool) - torch.ones(2, dtype=torch.bool))
expect_error("neg of a bool tensor", lambda: -torch.ones(2, dtype=torch.bool))

# ---- Empty operands of the layer ops -----------------------------------------------------------
case("matmul_inner_dim_zero", torch.zeros(2, 0) @ torch.zeros(0, 3))
case("matmul_empty_batch", torch.zeros(0, 2, 3) @ torch.zeros(3, 4))
case("cat_skips_legacy_empty", torch.cat([torch.zeros(0), torch.ones(2, 3)]))
case("softmax_over_empty_dim", F.softmax(torch.zeros(2, 0), 1))
case("conv2d_empty_batch", F.conv2d(torch.zeros(0, 1, 3, 3), torch.ones(2, 1, 2, 2)))
case("group_norm_empty_batch", F.group_norm(torch.zeros(0, 4, 2), 2))
case("group_norm_of_constant", F.group_norm(torch.ones(1, 2, 3), 1))
case("arange_empty", torch.arange(0, 0, dtype=f32))
case("arange_fractional_step", torch.arange(0, 1, 0.3))
case("softmax_of_0d", F.softmax(torch.tensor(2.0), 0))
# Adaptive pooling to an output size of 0: an empty output (PyTorch 1.13 refuses its backward,
# "Expected grad_output to have non-zero size"; leangrad's gradient is zeros: docs/api-notes.md).
case("adaptive_avg_pool2d_zero_output", F.adaptive_avg_pool2d(torch.ones(2, 3, 5, 4), (0, 2)))
case("adaptive_avg_pool2d_zero_output_unbatched", F.adaptive_avg_pool2d(torch.ones(3, 5, 4), 0))
case("adaptive_avg_pool2d_zero_output_empty_batch",
     F.adaptive_avg_pool2d(torch.ones(0, 3, 5, 4), (2, 0)))
case("adaptive_avg_pool2d_no_channels", F.adaptive_avg_pool2d(torch.ones(2, 0, 5, 4), (2, 2)))
case("adaptive_max_pool2d_zero_output", F.adaptive_max_pool2d(torch.ones(2, 3, 5, 4), (2, 0)))
case("adaptive_max_pool2d_zero_output_indices",
     F.adaptive_max_pool2d(torch.ones(2, 3, 5, 4), 0, return_indices=True)[1])
case("adaptive_max_pool2d_zero_output_empty_batch",
     F.adaptive_max_pool2d(torch.ones(0, 3, 5, 4), 0))
case("adaptive_max_pool1d_zero_output", F.adaptive_max_pool1d(torch.ones(3, 5), 0))
expect_error("adaptive_max_pool2d with no channels",
             lambda: F.adaptive_max_pool2d(torch.ones(2, 0, 4, 4), 1), "non-zero size")
expect_error("adaptive_avg_pool2d of an empty plane",
             lambda: F.adaptive_avg_pool2d(torch.ones(1, 3, 0, 5), 2), "non-zero size")
# ... but to 1 x 1 it is the mean over the plane, which PyTorch takes first: NaN.
case("adaptive_avg_pool2d_global_of_empty_plane", F.adaptive_avg_pool2d(torch.ones(1, 3, 0, 5), 1))
expect_error("adaptive_avg_pool2d to a negative size",
             lambda: F.adaptive_avg_pool2d(torch.ones(1, 3, 5, 5), (-1, 2)))
expect_error("adaptive_max_pool2d to a negative size",
             lambda: F.adaptive_max_pool2d(torch.ones(1, 3, 5, 5), (2, -1)))
expect_error("adaptive_max_pool1d to a negative size",
             lambda: F.adaptive_max_pool1d(torch.ones(2, 3, 7), -1))
expect_error("cat of no tensors", lambda: torch.cat([]))
expect_error("matmul of a 0-d tensor", lambda: torch.matmul(torch.tensor(2.0), torch.ones(2)))
expect_error("softmax over dim 3 of a 0-d tensor", lambda: F.softmax(torch.tensor(1.0), 3))
expect_error("transpose of dims 0, 3 of a 0-d tensor", lambda: torch.tensor(1.0).transpose(0, 3))
expect_error("squeeze of dim 2 of a 0-d tensor", lambda: torch.tensor(1.0).squeeze(2))
expect_error("copy_ into an expanded tensor",
             lambda: torch.zeros(1).expand(3).copy_(torch.arange(3.0)))
expect_error("abs_ into an expanded tensor", lambda: torch.zeros(1).expand(3).abs_())
expect_error("exp_ into an int64 tensor", lambda: torch.ones(2, dtype=i64).exp_())
expect_error("sin_ into a bool tensor", lambda: torch.ones(2, dtype=torch.bool).sin_())
expect_error("neg_ of a bool tensor", lambda: torch.ones(2, dtype=torch.bool).neg_())
expect_error("floor_ of a bool tensor", lambda: torch.ones(2, dtype=torch.bool).floor_())
expect_error("exp_ of a leaf that requires grad", lambda: torch.ones(2, requires_grad=True).exp_())
expect_error("tan_ into an int64 tensor", lambda: torch.ones(2, dtype=i64).tan_(), "can't be cast")
expect_error("exp2_ into an int32 tensor", lambda: torch.ones(2, dtype=torch.int32).exp2_(),
             "can't be cast")
expect_error("atan2_ into an int64 tensor",
             lambda: torch.ones(2, dtype=i64).atan2_(torch.ones(2, dtype=i64)), "can't be cast")
expect_error("atan2_ with other larger than self", lambda: torch.ones(2).atan2_(torch.ones(2, 2)))
expect_error("round_(decimals=1) of an int64 tensor",
             lambda: torch.ones(2, dtype=i64).round_(decimals=1))
expect_error("clamp_ without bounds", lambda: torch.ones(2).clamp_(), "At least one")
expect_error("clamp_ of int64 to a fraction", lambda: torch.ones(2, dtype=i64).clamp_(0.5, 2),
             "can't be cast")
expect_error("clamp_min_ of int64 to a fraction", lambda: torch.ones(2, dtype=i64).clamp_min_(1.5),
             "can't be cast")
expect_error("clamp_max_ of int64 to NaN", lambda: torch.ones(2, dtype=i64).clamp_max_(nan),
             "can't be cast")
expect_error("clamp_ of uint8 to 300", lambda: torch.ones(2, dtype=torch.uint8).clamp_(0, 300),
             "without overflow")
expect_error("clamp_ of bool", lambda: torch.ones(2, dtype=torch.bool).clamp_(0, 1))
expect_error("clamp_ into an expanded tensor", lambda: torch.zeros(1).expand(3).clamp_(0, 1))
expect_error("masked_fill_ with a mask larger than self",
             lambda: torch.zeros(3).masked_fill_(torch.ones(2, 3, dtype=torch.bool), 1.0),
             "doesn't match the broadcast shape")
expect_error("masked_fill_ with a mask that does not broadcast",
             lambda: torch.zeros(2, 3).masked_fill_(torch.ones(4, dtype=torch.bool), 1.0))
expect_error("masked_fill_ with a 1-d value",
             lambda: torch.zeros(2, 3).masked_fill_(torch.ones(2, 3, dtype=torch.bool),
                                                    torch.ones(1)), "0-dimensional value")
expect_error("masked_fill_ of 300 into uint8",
             lambda: torch.zeros(2, dtype=torch.uint8).masked_fill_(torch.ones(2, dtype=torch.bool),
                                                                    300), "without overflow")
expect_error("clamp_ of a leaf that requires grad",
             lambda: torch.ones(2, requires_grad=True).clamp_(0, 1))
expect_error("masked_fill_ of a leaf that requires grad",
             lambda: torch.ones(2, requires_grad=True).masked_fill_(torch.ones(2, dtype=torch.bool),
                                                                    0.0))
expect_error("atan2_ of a leaf that requires grad",
             lambda: torch.ones(2, requires_grad=True).atan2_(torch.ones(2)))
x = torch.zeros(1, 2)
x.expand(3, 2).fill_(1.0)  # allowed: every element gets the one value
case("fill_of_expanded", x)

# ---- Softmax, pooling and losses over NaN and infinities ---------------------------------------
x = torch.tensor([-inf, 0.0, 0.0])
case("softmax_with_minus_infinity", F.softmax(x, 0), x=x)
case("log_softmax_with_minus_infinity", F.log_softmax(x, 0), x=x)
x = torch.tensor([-inf, -inf])
case("softmax_all_minus_infinity", F.softmax(x, 0), x=x)
x = torch.tensor([inf, 0.0])
case("softmax_with_infinity", F.softmax(x, 0), x=x)
case("log_softmax_with_infinity", F.log_softmax(x, 0), x=x)
x = torch.tensor([[[[nan, 1.0], [2.0, 3.0]]]])
case("max_pool2d_propagates_nan", F.max_pool2d(x, 2), x=x)
x = torch.tensor([[[[inf, 1.0], [2.0, 3.0]]]])
case("avg_pool2d_with_infinity", F.avg_pool2d(x, 2), x=x)
x, t = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([-100, -100])
case("cross_entropy_all_ignored_mean", F.cross_entropy(x, t), x=x, t=t)
case("cross_entropy_all_ignored_sum", F.cross_entropy(x, t, reduction="sum"), x=x, t=t)
x, t = torch.zeros(0, 3), torch.zeros(0, dtype=i64)
case("cross_entropy_empty_batch_mean", F.cross_entropy(x, t), x=x, t=t)
case("cross_entropy_empty_batch_sum", F.cross_entropy(x, t, reduction="sum"), x=x, t=t)
# Input (N, C, d1) with no positions: None gives the target's empty shape (2, 0), Mean 0 / 0.
x, t = torch.zeros(2, 3, 0), torch.zeros(2, 0, dtype=i64)
case("cross_entropy_empty_spatial_none", F.cross_entropy(x, t, reduction="none"), x=x, t=t)
case("cross_entropy_empty_spatial_mean", F.cross_entropy(x, t), x=x, t=t)
x, t = torch.tensor([[inf, 0.0]]), torch.tensor([1])
case("cross_entropy_infinite_logit", F.cross_entropy(x, t, reduction="none"), x=x, t=t)
case("mse_loss_of_empty", F.mse_loss(torch.zeros(0), torch.zeros(0)))
x, t = torch.tensor([nan, 1.0]), torch.tensor([0.0, 1.0])
case("l1_loss_with_nan", F.l1_loss(x, t), x=x, t=t)
expect_error("cross_entropy with a target past the classes",
             lambda: F.cross_entropy(torch.ones(2, 3), torch.tensor([0, 3])))
expect_error("mse_loss of int64 tensors",
             lambda: F.mse_loss(torch.ones(2, dtype=i64), torch.ones(2, dtype=i64)))

# ---- Gradients at kinks and singular points ------------------------------------------------------
grad_case("sqrt_gradient_at_zero", lambda x: torch.sqrt(x).sum(), torch.tensor([0.0, 4.0]))
grad_case("abs_gradient_at_zero", lambda x: torch.abs(x).sum(), torch.tensor([0.0, -2.0, 3.0]))
grad_case("relu_gradient_at_zero", lambda x: F.relu(x).sum(), torch.tensor([0.0, -1.0, 1.0]))
grad_case("max_gradient_split_among_ties", lambda x: x.max(), torch.tensor([1.0, 3.0, 3.0]))
grad_case("log_gradient_at_zero", lambda x: torch.log(x).sum(), torch.tensor([0.0, 2.0]))
grad_case("mean_gradient_of_empty", lambda x: x.mean(), torch.zeros(0))

x = torch.zeros(2).requires_grad_()
y = (x + 1.0).sum()
y.backward()
y.backward()  # nothing was saved: a second backward is allowed and accumulates
cases.append({"name": "backward_twice_without_saved_tensors",
              "tensors": {"dx": x.grad}})


def backward_twice_with_saved():
    x = torch.ones(2).requires_grad_()
    y = (x * x).sum()
    y.backward()
    y.backward()


expect_error("backward twice through a saved tensor", backward_twice_with_saved)

p = torch.ones(2).requires_grad_()
p.grad = torch.tensor([nan, 1.0])
norm = torch.nn.utils.clip_grad_norm_([p], 1.0)
cases.append({"name": "clip_grad_norm_with_nan", "tensors": {"total_norm": norm, "grad": p.grad}})
p = torch.ones(2).requires_grad_()
norm = torch.nn.utils.clip_grad_norm_([p], 1.0)
cases.append({"name": "clip_grad_norm_without_gradients", "tensors": {"total_norm": norm}})
expect_error("an optimizer without parameters", lambda: torch.optim.SGD([], lr=0.1))
expect_error("an optimizer of a non-leaf tensor",
             lambda: torch.optim.SGD([torch.ones(2, requires_grad=True) * 2], lr=0.1))

# ---- Added by the review of the nn ops against PyTorch (2026-11-26) ------------------------------
# Reductions over nothing with the unbiased estimator: N - 1 = -1 is clamped to 0, so 0 / 0 = NaN.
case("var_of_empty", torch.zeros(0).var())
case("var_over_empty_dim", torch.zeros(0, 3).var(0))
case("std_of_empty", torch.zeros(0).std())
case("var_biased_of_empty", torch.zeros(0).var(unbiased=False))
# The gradient of max() / min() over everything goes to the NaN(s): they are the extremum.
grad_case("max_gradient_goes_to_nan", lambda x: x.max(), torch.tensor([1.0, nan, 3.0]))
grad_case("max_gradient_split_among_nans", lambda x: x.max(), torch.tensor([1.0, nan, nan]))
grad_case("min_gradient_goes_to_nan", lambda x: x.min(), torch.tensor([1.0, nan, -3.0]))
# relu passes the gradient of a NaN input (threshold_backward: zero only where the output <= 0).
grad_case("relu_gradient_of_nan", lambda x: F.relu(x).sum(), torch.tensor([nan, 1.0, -1.0]))
# clamp passes no gradient to a NaN input (its mask min <= x <= max is false there).
grad_case("clamp_gradient_of_nan", lambda x: x.clamp(-0.5, 0.5).sum(),
          torch.tensor([nan, 1.0, -1.0, 0.0]))
grad_case("clamp_min_gradient_of_nan", lambda x: x.clamp(min=0.0).sum(),
          torch.tensor([nan, 1.0, -1.0, 0.0]))
# max pooling: of several NaNs in a window, the last one is the maximum (PyTorch's
# `val > maxval || isnan(val)`), so the gradient goes there.
grad_case("max_pool2d_gradient_to_last_nan", lambda x: F.max_pool2d(x, 2).sum(),
          torch.tensor([[[[nan, 1.0], [nan, 3.0]]]]))
grad_case("max_pool2d_gradient_to_last_nan_padded", lambda x: F.max_pool2d(x, 3, 1, 1).sum(),
          torch.tensor([[[[nan, 1.0, nan], [2.0, nan, 3.0]]]]))


# pow's gradients at x = 0: d/dx = e x^(e-1) (0 where e == 0); d/de = x^e log x, taken as 0 only
# where x == 0 and e >= 0 (for e < 0, inf * -inf = -inf).
def pow_gradients():
    x = torch.tensor([0.0, 0.0, 0.0, 2.0]).requires_grad_()
    t = torch.tensor([-1.0, 2.0, 0.0, 0.0]).requires_grad_()
    y = torch.pow(x, t)
    y.sum().backward()
    cases.append({"name": "pow_gradients_at_zero",
                  "tensors": {"x": x, "t": t, "y": y, "dx": x.grad, "dt": t.grad}})


pow_gradients()

# Type promotion with 0-d tensors (result_type): a 0-d tensor decides the dtype only when its
# category (bool < integral < floating) is above the other operand's; otherwise the dims' dtype
# wins, as for a Python scalar. Each case holds x (not 0-d), t (0-d) and y = x op t.
s = lambda v, dtype: torch.tensor(v, dtype=dtype)
promotions = [
    ("promote_float16_times_0d_float32", torch.tensor([1.5, -2.25], dtype=torch.float16),
     s(3.0, f32), torch.mul),
    ("promote_float32_plus_0d_float64", torch.tensor([1.0, 2.0]), s(0.1, torch.float64), torch.add),
    ("promote_bfloat16_times_0d_float16", torch.tensor([1.5, 3.0], dtype=torch.bfloat16),
     s(2.0, torch.float16), torch.mul),
    ("promote_int32_plus_0d_int64", torch.tensor([1, 2], dtype=torch.int32), s(3000000000, i64),
     torch.add),
    ("promote_uint8_plus_0d_int32", torch.tensor([1, 200], dtype=torch.uint8),
     s(-1, torch.int32), torch.add),
    ("promote_int64_plus_0d_float64", torch.tensor([1, 2], dtype=i64), s(0.5, torch.float64),
     torch.add),
    ("promote_bool_plus_0d_int64", torch.tensor([True, False]), s(2, i64), torch.add),
    ("promote_int32_div_0d_int64", torch.tensor([1, 3], dtype=torch.int32), s(2, i64), torch.div),
    ("promote_0d_float64_plus_0d_int64", s(1.5, torch.float64), s(2, i64), torch.add),
    ("promote_float16_maximum_0d_float64", torch.tensor([1.0, 4.0], dtype=torch.float16),
     s(3.0, torch.float64), torch.maximum),
    ("promote_float16_ge_0d_float64", torch.tensor([1.0, 2.0], dtype=torch.float16),
     s(1.0000001, torch.float64), torch.ge),
    ("promote_where_float16_0d_float32", torch.tensor([1.5, 2.5], dtype=torch.float16),
     s(7.0, f32), lambda x, t: torch.where(torch.tensor([True, False]), x, t)),
]
for name, x, t, fn in promotions:
    case(name, fn(x, t), x=x, t=t)

# ---- Added by the numerics pass (2026-11-29) -----------------------------------------------------
# maximum / minimum: derivatives.yaml's
# where(self == other, grad / 2, grad).masked_fill_(self < other, 0) (> for minimum): a NaN on
# either side is neither a tie nor a loss, so both inputs get the whole gradient; ties (+0 and -0
# too) split it.
x = torch.tensor([1.0, nan, 2.0, nan, 3.0, 4.0, 0.0])
t = torch.tensor([nan, 1.0, 2.0, nan, 1.0, 5.0, -0.0])
binary_grad_case("maximum_gradient_with_nan_and_ties", torch.maximum, x, t)
binary_grad_case("minimum_gradient_with_nan_and_ties", torch.minimum, x, t)
binary_grad_case("maximum_gradient_broadcast_with_nan", torch.maximum,
                 torch.tensor([[1.0, nan, 2.0], [nan, 0.0, 5.0]]), torch.tensor([2.0]))
# amax / amin over dims (scale_grad_by_count): split evenly among the elements equal to the
# extremum; a NaN equals nothing, so a slice holding a NaN gets (grad / 0) * 0 = NaN gradients.
rows = torch.tensor([[1.0, nan, 3.0, nan], [2.0, 5.0, 5.0, 1.0], [nan, nan, 0.0, 0.0],
                     [1.0, 2.0, 3.0, 4.0]])
summed_grad_case("amax_gradient_nan_rows_and_ties", lambda x: x.amax(1), rows)
summed_grad_case("amax_gradient_over_dim0_keepdim_with_nan", lambda x: x.amax(0, keepdim=True),
                 rows)
summed_grad_case("amax_gradient_over_all_with_nan", lambda x: x.amax(), rows)
summed_grad_case("amax_gradient_over_all_ties", lambda x: x.amax(),
                 torch.tensor([[1.0, 5.0], [5.0, 2.0]]))
summed_grad_case("amax_gradient_of_infinities", lambda x: x.amax(1),
                 torch.tensor([[inf, 1.0], [-inf, -inf], [nan, inf]]))
low_rows = torch.tensor([[1.0, nan, 3.0, nan], [2.0, 1.0, 1.0, 5.0], [nan, nan, 0.0, 0.0],
                         [1.0, 2.0, 3.0, 4.0]])
summed_grad_case("amin_gradient_nan_rows_and_ties", lambda x: x.amin(1), low_rows)


# max(dim) / min(dim) (value_selecting_reduction_backward): the index of the first extremum, or of
# the first NaN, gets the whole gradient; ties are not split.
def dim_extremum_case(name, fn, x):
    x = x.clone().requires_grad_()
    values, indices = fn(x)
    values.sum().backward()
    cases.append({"name": name, "tensors": {"x": x, "values": values, "indices": indices,
                                            "dx": x.grad}})


dim_extremum_case("max_dim_gradient_to_first_nan_or_tie", lambda x: x.max(1), rows)
dim_extremum_case("max_dim0_keepdim_gradient_to_first_nan_or_tie",
                  lambda x: x.max(0, keepdim=True), rows)
dim_extremum_case("min_dim_gradient_to_first_nan_or_tie", lambda x: x.min(1), low_rows)
# clip_grad_norm_ with error_if_nonfinite raises for a NaN or infinite total norm (an overflowing
# one too) and leaves the gradients as they were.
for bad in ([nan, 1.0], [inf, 1.0], [1e20, 1e20]):
    p = torch.ones(2).requires_grad_()
    p.grad = torch.tensor(bad)
    expect_error(f"clip_grad_norm_ of {bad} with error_if_nonfinite",
                 lambda: torch.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True))
    assert torch.allclose(p.grad, torch.tensor(bad), rtol=0, atol=0, equal_nan=True)

write("misuse.json", "make_misuse.py", cases)
