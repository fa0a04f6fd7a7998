"""PyTorch reference cases for the nn layers LayerNorm, BatchNorm1d/2d/3d, Embedding, ConvTranspose2d,
interpolate and conv1d (tests/nn/test_nn_layers.cpp, suite NnLayersReference).

Each case holds float32 inputs, the upstream gradient "g", the output "y" and the gradients of the
inputs that require grad ("dx", "dw", "db"); batch_norm cases also hold the running statistics
before ("rm", "rv") and after ("rm_out", "rv_out") the call. Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_nn_layers.py
"""
import torch
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)


cases = []

# ---- LayerNorm ----
cases.append(grad_case("layer_norm_last_dim", {"normalized_shape": [6], "eps": 1e-5},
                       {"x": leaf(2, 3, 6, low=-2, high=3), "w": leaf(6, low=0.5, high=1.5),
                        "b": leaf(6)},
                       lambda x, w, b: F.layer_norm(x, [6], w, b, 1e-5)))
cases.append(grad_case("layer_norm_two_dims", {"normalized_shape": [3, 4], "eps": 1e-3},
                       {"x": leaf(5, 3, 4, low=-2, high=3), "w": leaf(3, 4, low=0.5, high=1.5),
                        "b": leaf(3, 4)},
                       lambda x, w, b: F.layer_norm(x, [3, 4], w, b, 1e-3)))
cases.append(grad_case("layer_norm_no_affine", {"normalized_shape": [7], "eps": 1e-5},
                       {"x": leaf(4, 7, low=-2, high=3)},
                       lambda x: F.layer_norm(x, [7], None, None, 1e-5)))

# ---- BatchNorm ----
for training in [True, False]:
    for name, shape in [("4d", (4, 3, 5, 6)), ("2d", (8, 5))]:
        c = shape[1]
        rm = torch.rand(c) - 0.5
        rv = torch.rand(c) + 0.5
        rm_in, rv_in = rm.clone(), rv.clone()
        cases.append(grad_case("batch_norm_" + name + ("_train" if training else "_eval"),
                               {"training": training, "momentum": 0.1, "eps": 1e-5},
                               {"x": leaf(*shape, low=-2, high=3), "w": leaf(c, low=0.5, high=1.5),
                                "b": leaf(c)},
                               lambda x, w, b, t=training, rm=rm, rv=rv:
                                   F.batch_norm(x, rm, rv, w, b, t, 0.1, 1e-5),
                               {"rm": rm_in, "rv": rv_in, "rm_out": rm, "rv_out": rv}))

# nn.BatchNorm2d over two training steps and one evaluation, with momentum 0.1 and None.
for momentum in [0.1, None]:
    bn = torch.nn.BatchNorm2d(3, momentum=momentum)
    with torch.no_grad():
        bn.weight.copy_(torch.rand(3) + 0.5)
        bn.bias.copy_(torch.rand(3) - 0.5)
    xs = [torch.rand(2, 3, 4, 5) * 4 - 1 for _ in range(3)]
    bn.train()
    y1 = bn(xs[0])
    y2 = bn(xs[1])
    bn.eval()
    y3 = bn(xs[2])
    cases.append({"name": "batch_norm2d_module_momentum_" + str(momentum),
                  "params": {"momentum": momentum},
                  "tensors": {"w": bn.weight.detach(), "b": bn.bias.detach(), "x1": xs[0],
                              "x2": xs[1], "x3": xs[2], "y1": y1.detach(), "y2": y2.detach(),
                              "y3": y3.detach(), "rm": bn.running_mean, "rv": bn.running_var,
                              "num_batches_tracked": bn.num_batches_tracked}})

# ---- Embedding ----
# Indices of shape (2, 4) with repeats (their gradients add up) and the padding row among them.
indices = torch.tensor([[1, 3, 3, 0], [4, 1, 2, 3]], dtype=torch.int64)
for padding_idx in [None, 3]:
    cases.append(grad_case("embedding_padding_" + str(padding_idx), {"padding_idx": padding_idx},
                           {"w": leaf(5, 6)},
                           lambda w, p=padding_idx: F.embedding(indices, w, padding_idx=p),
                           {"indices": indices}))

# ---- ConvTranspose2d ----
# (name, x shape, weight shape, stride, padding, output_padding, groups, dilation, bias)
for name, xs, ws, st, pd, op, gr, dl, bias in [
        ("plain", (2, 3, 4, 5), (3, 2, 3, 3), 1, 0, 0, 1, 1, True),
        ("stride2_pad1_outpad1", (2, 4, 3, 4), (4, 3, 3, 3), 2, 1, 1, 1, 1, True),
        ("groups2_dilation2", (1, 4, 5, 3), (4, 3, 2, 3), (1, 2), (1, 0), 0, 2, 2, False),
        ("stride3_rect_kernel", (2, 2, 3, 3), (2, 5, 2, 4), (3, 2), (0, 1), (2, 1), 1, 1, True)]:
    pair = lambda v: list(v) if isinstance(v, tuple) else [v, v]
    inputs = {"x": leaf(*xs), "w": leaf(*ws)}
    if bias:
        inputs["b"] = leaf(ws[1] * gr)
    cases.append(grad_case("conv_transpose2d_" + name,
                           {"stride": pair(st), "padding": pair(pd), "output_padding": pair(op),
                            "groups": gr, "dilation": pair(dl)},
                           inputs,
                           lambda x, w, b=None, st=st, pd=pd, op=op, gr=gr, dl=dl:
                               F.conv_transpose2d(x, w, b, st, pd, op, gr, dl)))

# ---- interpolate ----
# (name, x shape, size, scale_factor, mode, align_corners): up and down, integer and fractional
# factors (whose step 1 / factor differs from in / out), equal sizes along one axis.
for name, xs, size, scale, mode, corners in [
        ("nearest_scale2", (2, 3, 4, 5), None, (2.0, 2.0), "nearest", None),
        ("nearest_size_down", (1, 2, 7, 9), (3, 4), None, "nearest", None),
        ("nearest_scale_fraction", (1, 2, 5, 6), None, (1.7, 0.6), "nearest", None),
        ("bilinear_scale2", (2, 3, 4, 5), None, (2.0, 2.0), "bilinear", False),
        ("bilinear_size_corners", (1, 2, 4, 5), (7, 9), None, "bilinear", True),
        ("bilinear_size_down", (1, 2, 9, 7), (4, 7), None, "bilinear", False),
        ("bilinear_scale_fraction_corners", (2, 1, 5, 6), None, (1.5, 2.5), "bilinear", True),
        ("bilinear_scale_fraction", (2, 1, 5, 6), None, (1.3, 0.7), "bilinear", False)]:
    cases.append(grad_case("interpolate_" + name,
                           {"size": list(size) if size else None,
                            "scale_factor": list(scale) if scale else None,
                            "mode": mode, "align_corners": corners},
                           {"x": leaf(*xs)},
                           lambda x, size=size, scale=scale, mode=mode, corners=corners:
                               F.interpolate(x, size=size, scale_factor=scale, mode=mode,
                                             align_corners=corners)))

# ---- BatchNorm1d and BatchNorm3d modules ----
# As the BatchNorm2d cases above, on the inputs the other two take: (N, C), (N, C, L) and
# (N, C, D, H, W); momentum 0.1. Last in the file, so that the cases above keep their numbers.
for module, shape in [("batch_norm1d_2d", (6, 3)), ("batch_norm1d_3d", (2, 3, 5)),
                      ("batch_norm3d", (2, 3, 2, 3, 4))]:
    bn = (torch.nn.BatchNorm3d if module == "batch_norm3d" else torch.nn.BatchNorm1d)(3)
    with torch.no_grad():
        bn.weight.copy_(torch.rand(3) + 0.5)
        bn.bias.copy_(torch.rand(3) - 0.5)
    xs = [torch.rand(*shape) * 4 - 1 for _ in range(3)]
    bn.train()
    y1 = bn(xs[0])
    y2 = bn(xs[1])
    bn.eval()
    y3 = bn(xs[2])
    cases.append({"name": module + "_module",
                  "params": {"momentum": 0.1},
                  "tensors": {"w": bn.weight.detach(), "b": bn.bias.detach(), "x1": xs[0],
                              "x2": xs[1], "x3": xs[2], "y1": y1.detach(), "y2": y2.detach(),
                              "y3": y3.detach(), "rm": bn.running_mean, "rv": bn.running_var,
                              "num_batches_tracked": bn.num_batches_tracked}})

# ---- conv1d ----
# (name, x shape, weight shape, stride, padding, dilation, groups, bias)
for name, xs, ws, st, pd, dl, gr, bias in [
        ("plain", (2, 3, 9), (4, 3, 3), 1, 0, 1, 1, True),
        ("stride2_pad1", (2, 3, 10), (5, 3, 4), 2, 1, 1, 1, True),
        ("dilation2_groups2_nobias", (1, 4, 11), (6, 2, 3), 1, 2, 2, 2, False),
        ("stride3_pad2_dilation3", (3, 2, 13), (2, 2, 2), 3, 2, 3, 1, True)]:
    inputs = {"x": leaf(*xs), "w": leaf(*ws)}
    if bias:
        inputs["b"] = leaf(ws[0])
    cases.append(grad_case("conv1d_" + name,
                           {"stride": st, "padding": pd, "dilation": dl, "groups": gr},
                           inputs,
                           lambda x, w, b=None, st=st, pd=pd, dl=dl, gr=gr:
                               F.conv1d(x, w, b, st, pd, dl, gr)))

write("nn_layers.json", "make_nn_layers.py", cases)
