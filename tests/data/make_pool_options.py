"""PyTorch 1.13's results for the pooling options (tests/kernels/test_pool_options.cpp, suite
PoolOptionsReference): max_pool2d with dilation and ceil_mode, avg_pool2d with ceil_mode,
count_include_pad and divisor_override, on rectangular kernels and strides other than the kernel.

Each case holds the input "x", the upstream gradient "g", the output "y", the input gradient "dx"
and, for max pooling, the int64 "indices" (return_indices=True); its params are the options in
at::'s spelling. The case "output_sizes" holds no tensors: its param "rows" lists
[n, kernel, stride, padding, dilation, ceil_mode, size] for one axis, size 0 where PyTorch raises
"Output size is too small". Bad options the C++ tests refuse are checked here to raise in PyTorch
too (expect_error).
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_pool_options.py
"""
import torch
import torch.nn.functional as F

import torch_cases
from reference import write

torch.manual_seed(0)
cases = []


def leaf(shape, dtype):
    return (torch.rand(*shape, dtype=dtype) * 2 - 1).requires_grad_()


def max_case(name, shape, kernel, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False,
             dtype=torch.float32):
    x = leaf(shape, dtype)
    y, indices = F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode,
                              return_indices=True)
    g = torch.randn(y.shape, dtype=dtype)
    y.backward(g)
    params = {"op": "max", "kernel": list(kernel), "stride": list(stride),
              "padding": list(padding), "dilation": list(dilation), "ceil_mode": ceil_mode}
    cases.append({"name": name, "params": params,
                  "tensors": {"x": x, "g": g, "y": y, "indices": indices, "dx": x.grad}})


def avg_case(name, shape, kernel, stride, padding=(0, 0), ceil_mode=False,
             count_include_pad=True, divisor_override=None, dtype=torch.float32):
    x = leaf(shape, dtype)
    y = F.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    g = torch.randn(y.shape, dtype=dtype)
    y.backward(g)
    params = {"op": "avg", "kernel": list(kernel), "stride": list(stride),
              "padding": list(padding), "ceil_mode": ceil_mode,
              "count_include_pad": count_include_pad, "divisor_override": divisor_override}
    cases.append({"name": name, "params": params,
                  "tensors": {"x": x, "g": g, "y": y, "dx": x.grad}})


# ---- max_pool2d ---------------------------------------------------------------------------------
# ceil_mode without padding: 7 x 5 by 2 x 2 gives 4 x 3, the last row and column of windows
# half outside the input.
max_case("max_ceil_no_padding", (2, 3, 7, 5), (2, 2), (2, 2), ceil_mode=True)
# ceil_mode with padding: 6 x 6, kernel 3, stride 2, padding 1: 4 x 4 (3 x 3 without ceil_mode).
max_case("max_ceil_padded", (1, 2, 6, 6), (3, 3), (2, 2), (1, 1), ceil_mode=True)
# A window that would start in the right padding: width 4, kernel 2, stride 3, padding 1 rounds
# up to 3 windows, the last starting at 5 = W + padding, so ceil_mode keeps 2.
max_case("max_ceil_last_window_in_right_padding", (1, 2, 5, 4), (2, 2), (3, 3), (1, 1),
         ceil_mode=True)
# stride other than the kernel, no padding, floor and ceil.
max_case("max_stride_not_kernel", (2, 2, 9, 8), (3, 3), (2, 2))
max_case("max_stride_not_kernel_ceil", (2, 2, 9, 8), (3, 3), (2, 2), ceil_mode=True)
# dilation 2: padded, overlapping; unpadded inside the input (the CPU's row-at-a-time path);
# with ceil_mode; non-overlapping (the CPU's scatter backward).
max_case("max_dilation2_padded", (1, 3, 7, 8), (3, 3), (1, 1), (1, 1), (2, 2))
max_case("max_dilation2_inside", (2, 2, 9, 10), (2, 3), (1, 2), dilation=(2, 2))
max_case("max_dilation2_ceil", (1, 2, 8, 7), (2, 2), (2, 2), (1, 1), (2, 2), ceil_mode=True)
max_case("max_dilation2_non_overlapping", (1, 2, 9, 12), (2, 2), (3, 4), dilation=(2, 3))
# rectangular kernel, stride and padding with ceil_mode; a 3-D (C, H, W) input.
max_case("max_rectangular_ceil", (2, 2, 9, 6), (3, 2), (2, 1), (1, 0), ceil_mode=True)
max_case("max_3d_input_dilation_ceil", (3, 8, 9), (3, 2), (2, 2), (1, 1), (2, 1), ceil_mode=True)
# float64
max_case("max_f64_dilation_ceil", (1, 2, 7, 9), (3, 2), (2, 3), (1, 1), (2, 2), ceil_mode=True,
         dtype=torch.float64)

# ---- avg_pool2d ---------------------------------------------------------------------------------
avg_case("avg_ceil_no_padding", (2, 3, 7, 5), (2, 2), (2, 2), ceil_mode=True)
# count_include_pad counts the padding but not the part of the last window past it.
avg_case("avg_ceil_padded_include_pad", (1, 2, 6, 6), (3, 3), (2, 2), (1, 1), ceil_mode=True)
avg_case("avg_ceil_padded_exclude_pad", (1, 2, 6, 6), (3, 3), (2, 2), (1, 1), ceil_mode=True,
         count_include_pad=False)
avg_case("avg_padded_exclude_pad", (2, 2, 7, 6), (3, 3), (2, 2), (1, 1), count_include_pad=False)
avg_case("avg_ceil_last_window_in_right_padding", (1, 2, 5, 4), (2, 2), (3, 3), (1, 1),
         ceil_mode=True)
avg_case("avg_stride_not_kernel_exclude_pad", (2, 2, 9, 8), (3, 3), (2, 2), (1, 1),
         count_include_pad=False)
avg_case("avg_divisor_override", (1, 2, 6, 7), (3, 3), (2, 2), (1, 1), ceil_mode=True,
         divisor_override=5)
avg_case("avg_divisor_override_exclude_pad", (2, 1, 5, 5), (2, 2), (1, 1), (1, 1),
         count_include_pad=False, divisor_override=3)
avg_case("avg_negative_divisor_override", (1, 1, 4, 4), (2, 2), (2, 2), divisor_override=-2)
avg_case("avg_rectangular_ceil_exclude_pad", (2, 2, 7, 9), (2, 3), (1, 2), (1, 1), ceil_mode=True,
         count_include_pad=False)
avg_case("avg_3d_input_ceil", (3, 7, 6), (3, 2), (2, 2), (1, 1), ceil_mode=True)
avg_case("avg_f64_ceil_exclude_pad", (1, 2, 7, 8), (3, 3), (2, 3), (1, 1), ceil_mode=True,
         count_include_pad=False, dtype=torch.float64)
avg_case("avg_f64_divisor_override", (1, 2, 6, 5), (2, 3), (2, 2), (1, 1), ceil_mode=True,
         divisor_override=4, dtype=torch.float64)

# ---- The output size rule along one axis, from PyTorch's output shapes -------------------------
rows = []
for n in range(1, 10):
    for k in range(1, 5):
        for s in range(1, 4):
            for p in range(0, k // 2 + 1):
                for d in range(1, 4):
                    for ceil_mode in (False, True):
                        x = torch.zeros(1, 1, n, 1)
                        try:
                            size = F.max_pool2d(x, (k, 1), (s, 1), (p, 0), (d, 1), ceil_mode).shape[2]
                        except RuntimeError as e:
                            assert "Output size is too small" in str(e), str(e)
                            size = 0
                        rows.append([n, k, s, p, d, ceil_mode, size])
cases.append({"name": "output_sizes", "params": {"rows": rows}, "tensors": {}})


# ---- Options the C++ tests refuse: PyTorch refuses them too ------------------------------------
def expect_error(what, fn, message):
    """torch_cases.expect_error with RuntimeError only: PyTorch's pooling checks raise that."""
    torch_cases.expect_error(what, fn, message, errors=(RuntimeError,))


x = torch.zeros(1, 1, 5, 5)
expect_error("dilation 0", lambda: F.max_pool2d(x, 2, 2, 0, 0), "dilation should be greater")
expect_error("negative dilation", lambda: F.max_pool2d(x, 2, 2, 0, (1, -1)),
             "dilation should be greater")
expect_error("padding over half the kernel", lambda: F.avg_pool2d(x, 2, 2, 2, True),
             "pad should be")
expect_error("divisor_override 0", lambda: F.avg_pool2d(x, 2, divisor_override=0),
             "divisor must be not zero")
expect_error("dilated window larger than the input", lambda: F.max_pool2d(x, 3, 1, 0, 3),
             "Output size is too small")

# A max-pooling window holding no input (Note [Pooling windows] in kernels/layers_math.h): taps
# -1 and 2 of a width of 2. PyTorch gives -inf and an index past the window (2 and 4: the
# elements (1, 0) and past the plane), and its backward sends the first window's gradient to
# (1, 0); the C++ test expects -inf, index -1 and no gradient.
x = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], requires_grad=True)
y, indices = F.max_pool2d(x, (1, 2), 1, (0, 1), (1, 3), return_indices=True)
assert (y == -float("inf")).all() and indices.flatten().tolist() == [2, 4], (y, indices)
y.backward(torch.ones_like(y))
assert x.grad.flatten().tolist() == [0.0, 0.0, 1.0, 0.0], x.grad

write("pool_options.json", "make_pool_options.py", cases)
