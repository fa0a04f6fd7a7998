"""PyTorch reference cases for instance_norm and nn.InstanceNorm1d/2d/3d (tests/nn/test_instance_norm.cpp,
suite InstanceNormReference).

Function cases hold float32 input "x", the affine parameters "w", "b" when there are some, the
running statistics before ("rm", "rv") and after ("rm_out", "rv_out") the call when there are
some, the output "y", a random upstream gradient "g" and the gradients ("dx", "dw", "db"). Module
cases run two training steps and one evaluation ("x0", "x1", "x2" -> "y0", "y1", "y2"), with the
module's buffers after each ("rm0", "rv0", ...), and its repr. Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_instance_norm.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []


def function_case(name, shape, affine, running, use_input_stats, momentum=0.1, eps=1e-5):
    c = shape[1]
    inputs = {"x": leaf(*shape, low=-2, high=3)}
    if affine:
        inputs["w"] = leaf(c, low=0.5, high=1.5)
        inputs["b"] = leaf(c)
    extra = {}
    rm = rv = None
    if running:
        rm = torch.rand(c) - 0.5
        rv = torch.rand(c) + 0.5
        extra["rm"] = rm.clone()
        extra["rv"] = rv.clone()

    def fn(x, w=None, b=None):
        return F.instance_norm(x, rm, rv, w, b, use_input_stats, momentum, eps)

    case = grad_case(name, {"affine": affine, "running": running,
                            "use_input_stats": use_input_stats, "momentum": momentum, "eps": eps},
                     inputs, fn, extra)
    if running:
        case["tensors"]["rm_out"] = rm.clone()
        case["tensors"]["rv_out"] = rv.clone()
    cases.append(case)


function_case("instance_norm_2d", (2, 3, 4, 5), affine=False, running=False, use_input_stats=True)
function_case("instance_norm_2d_affine_running", (3, 4, 5, 3), affine=True, running=True,
              use_input_stats=True, momentum=0.3)
function_case("instance_norm_1d_affine", (4, 3, 7), affine=True, running=False,
              use_input_stats=True, eps=1e-3)
function_case("instance_norm_3d_running", (2, 2, 3, 2, 4), affine=False, running=True,
              use_input_stats=True)
function_case("instance_norm_eval_running", (2, 3, 4, 4), affine=True, running=True,
              use_input_stats=False)


def module_case(name, module, shapes):
    params = {"op": type(module).__name__, "repr": repr(module),
              "num_features": module.num_features, "eps": module.eps,
              "momentum": module.momentum, "affine": module.affine,
              "track_running_stats": module.track_running_stats}
    tensors = {}
    if module.affine:
        with torch.no_grad():
            module.weight.uniform_(0.5, 1.5)
            module.bias.uniform_(-0.5, 0.5)
        tensors["w"] = module.weight.detach().clone()
        tensors["b"] = module.bias.detach().clone()
    for step, shape in enumerate(shapes):
        module.train(step < 2)
        x = torch.rand(*shape) * 4 - 1
        tensors[f"x{step}"] = x
        tensors[f"y{step}"] = module(x).detach()
        if module.track_running_stats:
            tensors[f"rm{step}"] = module.running_mean.clone()
            tensors[f"rv{step}"] = module.running_var.clone()
            # PyTorch's InstanceNorm keeps the buffer but never counts: 0 after every step.
            tensors[f"nbt{step}"] = module.num_batches_tracked.clone()
    cases.append({"name": name, "params": params, "tensors": tensors})


module_case("module_instance_norm2d_tracking",
            nn.InstanceNorm2d(3, affine=True, track_running_stats=True), [(2, 3, 4, 5)] * 3)
module_case("module_instance_norm2d_plain", nn.InstanceNorm2d(2), [(3, 2, 3, 3)] * 3)
module_case("module_instance_norm1d_momentum",
            nn.InstanceNorm1d(4, momentum=0.25, track_running_stats=True), [(2, 4, 6)] * 3)
module_case("module_instance_norm1d_unbatched", nn.InstanceNorm1d(3, affine=True), [(3, 8)] * 3)
module_case("module_instance_norm3d_tracking_unbatched",
            nn.InstanceNorm3d(2, eps=1e-3, track_running_stats=True), [(2, 3, 2, 4)] * 3)

write("instance_norm.json", "make_instance_norm.py", cases)
