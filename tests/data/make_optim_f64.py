"""Reference data for tests/optim/test_optim_f64.cpp: the optimizers and clip_grad_norm_ on
float64 parameters and gradients, and on a float32 + float64 mix in one optimizer.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_optim_f64.py  (writes
optim_f64.json). Every optimizer case runs 10 steps (past RAdam's rectification threshold, step 6
with beta2 = 0.999) on three small parameters with given gradients and records the parameters
after each step (traj<k>: (10, *shape)) and the final state tensors (state<k>_<name>), each in its
parameter's dtype. dtypes lists each parameter's dtype. Values are written as float64 and read
back exactly.
"""
import torch

from reference import write
from torch_cases import clip_grad_norm_case, make_optimizer, run_steps

STEPS = 10
SHAPES = [(4, 5), (5,), (3, 2)]


def optimizer_case(name, opt, options, dtypes=("float64",) * 3, groups=None):
    gen = torch.Generator().manual_seed(sum(map(ord, name)))
    types = [getattr(torch, d) for d in dtypes]
    init = [torch.randn(s, generator=gen, dtype=torch.float64).to(t)
            for s, t in zip(SHAPES, types)]
    grads = [torch.randn((STEPS,) + s, generator=gen, dtype=torch.float64).to(t)
             for s, t in zip(SHAPES, types)]
    params = [p.clone().requires_grad_(True) for p in init]
    optimizer = make_optimizer(opt, options, params, groups)
    traj = run_steps(optimizer, params, grads)
    tensors = {}
    for k in range(len(SHAPES)):
        tensors[f"param{k}"] = init[k]
        tensors[f"grad{k}"] = grads[k]
        tensors[f"traj{k}"] = traj[k]
        for key, value in optimizer.state[params[k]].items():
            if torch.is_tensor(value) and value.dim() > 0:
                assert value.dtype == types[k]
                tensors[f"state{k}_{key}"] = value
    params_json = {"optimizer": opt, "options": options, "dtypes": list(dtypes)}
    if groups is not None:
        params_json["groups"] = groups
    return {"name": name, "params": params_json, "tensors": tensors}


def clip_case(name, max_norm, norm_type, dtypes=("float64",) * 3):
    gen = torch.Generator().manual_seed(len(name) + 100)
    types = [getattr(torch, d) for d in dtypes]
    grads = [torch.randn(s, generator=gen, dtype=torch.float64).to(t)
             for s, t in zip(SHAPES, types)]
    return clip_grad_norm_case(name, grads, max_norm, norm_type, {"dtypes": list(dtypes)})


def main():
    two_groups = [{"params": [0], "lr": 0.02, "weight_decay": 0.0},
                  {"params": [1, 2], "lr": 0.005, "weight_decay": 0.1}]
    mixed = ("float32", "float64", "float64")
    cases = [
        optimizer_case("sgd_plain", "sgd", {"lr": 0.1}),
        optimizer_case("sgd_momentum_dampening_wd", "sgd",
                       {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
        optimizer_case("sgd_nesterov_wd_maximize", "sgd",
                       {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01,
                        "maximize": True}),
        optimizer_case("adam_default", "adam", {"lr": 0.01}),
        optimizer_case("adam_wd_amsgrad", "adam",
                       {"lr": 0.01, "betas": [0.8, 0.99], "eps": 1e-6, "weight_decay": 0.1,
                        "amsgrad": True}),
        optimizer_case("adamw_amsgrad_maximize", "adamw",
                       {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
        optimizer_case("adamw_two_groups", "adamw", {"lr": 0.01}, groups=two_groups),
        optimizer_case("radam_default", "radam", {"lr": 0.01}),
        optimizer_case("radam_wd_beta", "radam",
                       {"lr": 0.01, "betas": [0.9, 0.99], "eps": 1e-6, "weight_decay": 0.1}),
        # One optimizer over a float32 parameter and two float64 ones (in two groups for Adam).
        optimizer_case("mixed_sgd_momentum", "sgd", {"lr": 0.05, "momentum": 0.9}, mixed),
        optimizer_case("mixed_adam_two_groups", "adam", {"lr": 0.01}, mixed, two_groups),
        optimizer_case("mixed_radam", "radam", {"lr": 0.01, "weight_decay": 0.1}, mixed),
        clip_case("clip_l2", 1.0, 2.0),
        clip_case("clip_l3_noop", 100.0, 3.0),
        clip_case("clip_inf", 0.5, float("inf")),
        clip_case("clip_mixed_l2", 1.0, 2.0, mixed),
        clip_case("clip_mixed_l1", 2.0, 1.0, mixed),
        clip_case("clip_mixed_inf", 0.5, float("inf"), mixed),
    ]
    write("optim_f64.json", "make_optim_f64.py", cases)


if __name__ == "__main__":
    main()
