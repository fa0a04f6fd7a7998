"""Reference data for tests/optim: optimizer trajectories, clip_grad_norm_ and LR schedules.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_optim.py  (writes optim.json).
Every optimizer case runs 20 steps on three small parameters with given gradients and records
the parameters after each step (traj<k>: (20, *shape)). has_grad<k> (20,) marks the steps where
parameter k has a gradient (torch skips parameters whose .grad is None, step counts included).
"""
import torch

from reference import write
from torch_cases import clip_grad_norm_case, make_optimizer, run_steps

STEPS = 20
SHAPES = [(4, 5), (5,), (3, 2)]


def optimizer_case(name, opt, options, groups=None, skip_param2_on_even=False):
    gen = torch.Generator().manual_seed(sum(map(ord, name)))
    init = [torch.randn(s, generator=gen) for s in SHAPES]
    grads = [torch.randn((STEPS,) + s, generator=gen) for s in SHAPES]
    has_grad = [torch.ones(STEPS, dtype=torch.int64) for _ in SHAPES]
    if skip_param2_on_even:
        has_grad[2][0::2] = 0
    params = [p.clone().requires_grad_(True) for p in init]
    traj = run_steps(make_optimizer(opt, options, params, groups), params, grads, has_grad)
    tensors = {}
    for k in range(len(SHAPES)):
        tensors[f"param{k}"] = init[k]
        tensors[f"grad{k}"] = grads[k]
        tensors[f"has_grad{k}"] = has_grad[k]
        tensors[f"traj{k}"] = traj[k]
    params_json = {"optimizer": opt, "options": options}
    if groups is not None:
        params_json["groups"] = groups
    return {"name": name, "params": params_json, "tensors": tensors}


def clip_case(name, max_norm, norm_type, plant=None, scale=1.0):
    """plant: {(k, flat index): value} written into gradient k (NaN, Inf, huge values); scale
    multiplies every gradient first (0 gives all-zero gradients)."""
    gen = torch.Generator().manual_seed(len(name))
    grads = [torch.randn(s, generator=gen) * scale for s in SHAPES]
    for (k, index), value in (plant or {}).items():
        grads[k].view(-1)[index] = value
    return clip_grad_norm_case(name, grads, max_norm, norm_type)


def scheduler_case(name, make, base_lr=0.1):
    p = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=base_lr)
    scheduler, params = make(optimizer)
    lrs = []
    for _ in range(STEPS):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    params["base_lr"] = base_lr
    return {"name": name, "params": params,
            "tensors": {"lr": torch.tensor(lrs, dtype=torch.float64)}}


def scheduler_resume_case(name, make, params, epochs=30, resume_epoch=12,
                          group_lrs=(0.1, 0.02)):
    """A schedule over `epochs` epochs on an SGD of two groups, interrupted after `resume_epoch`
    epochs: a fresh optimizer and scheduler are built and given the saved state dicts (the
    optimizer's, then the scheduler's), and the run goes on. lr: (epochs, groups), each group's lr
    at the start of every epoch."""
    def build():
        ps = [torch.zeros(1, requires_grad=True) for _ in group_lrs]
        optimizer = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(ps, group_lrs)],
                                    lr=group_lrs[0])
        return optimizer, make(optimizer)
    optimizer, scheduler = build()
    lrs = []
    for epoch in range(epochs):
        if epoch == resume_epoch:
            saved_optimizer, saved_scheduler = optimizer.state_dict(), scheduler.state_dict()
            optimizer, scheduler = build()
            optimizer.load_state_dict(saved_optimizer)
            scheduler.load_state_dict(saved_scheduler)
        lrs.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    params = dict(params, scheduler=name.replace("resume_", ""), resume_epoch=resume_epoch,
                  group_lrs=list(group_lrs))
    return {"name": name, "params": params,
            "tensors": {"lr": torch.tensor(lrs, dtype=torch.float64)}}


def main():
    two_groups = [{"params": [0], "lr": 0.02, "weight_decay": 0.0},
                  {"params": [1, 2], "lr": 0.005, "weight_decay": 0.1}]
    cases = [
        optimizer_case("sgd_plain", "sgd", {"lr": 0.1}),
        optimizer_case("sgd_momentum", "sgd", {"lr": 0.1, "momentum": 0.9}),
        optimizer_case("sgd_momentum_dampening_wd", "sgd",
                       {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
        optimizer_case("sgd_nesterov_wd", "sgd",
                       {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01}),
        optimizer_case("sgd_two_groups", "sgd", {"lr": 0.1, "momentum": 0.9}, two_groups),
        optimizer_case("adam_default", "adam", {"lr": 0.01}),
        optimizer_case("adam_wd_amsgrad", "adam",
                       {"lr": 0.01, "betas": [0.8, 0.99], "eps": 1e-6, "weight_decay": 0.1,
                        "amsgrad": True}),
        optimizer_case("adam_two_groups_skip", "adam", {"lr": 0.01}, two_groups,
                       skip_param2_on_even=True),
        optimizer_case("adamw_default", "adamw", {"lr": 0.01}),
        optimizer_case("adamw_amsgrad", "adamw",
                       {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
        optimizer_case("adamw_two_groups", "adamw", {"lr": 0.01}, two_groups),
        # maximize: the gradient negated before weight decay and momentum (AdamW: before the
        # moments; its decay of the weights is unchanged).
        optimizer_case("sgd_maximize_nesterov_wd", "sgd",
                       {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01,
                        "maximize": True}),
        optimizer_case("sgd_maximize_dampening", "sgd",
                       {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "maximize": True}),
        optimizer_case("adam_maximize_wd_amsgrad", "adam",
                       {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
        optimizer_case("adamw_maximize", "adamw", {"lr": 0.01, "maximize": True}),
        optimizer_case("radam_default", "radam", {"lr": 0.01}),
        optimizer_case("radam_wd_beta", "radam",
                       {"lr": 0.01, "betas": [0.9, 0.99], "eps": 1e-6, "weight_decay": 0.1}),
        optimizer_case("radam_two_groups", "radam", {"lr": 0.01}, two_groups),
        clip_case("clip_l2", 1.0, 2.0),
        clip_case("clip_l1", 2.0, 1.0),
        clip_case("clip_inf", 0.5, float("inf")),
        clip_case("clip_noop", 100.0, 2.0),
        # Non-finite and extreme gradients: a NaN anywhere makes the norm NaN and, through the
        # clip coefficient, every gradient NaN, for every norm type (the inf-norm's max too); an
        # Inf makes the norm Inf and the coefficient 0; |g|^p overflows float32 as PyTorch's does.
        clip_case("clip_l2_nan", 1.0, 2.0, plant={(1, 3): float("nan")}),
        clip_case("clip_l1_nan", 1.0, 1.0, plant={(2, 0): float("nan")}),
        clip_case("clip_inf_nan", 1.0, float("inf"), plant={(0, 7): float("nan")}),
        clip_case("clip_inf_nan_inf", 1.0, float("inf"),
                  plant={(0, 2): float("inf"), (2, 5): float("nan")}),
        clip_case("clip_inf_inf", 1.0, float("inf"), plant={(1, 0): float("-inf")}),
        clip_case("clip_l2_inf", 1.0, 2.0, plant={(0, 19): float("inf")}),
        clip_case("clip_l2_overflow", 1.0, 2.0, plant={(0, 0): 1e20}),
        clip_case("clip_l3_overflow", 1.0, 3.0, plant={(2, 1): -1e13}),
        clip_case("clip_zero_grads", 1.0, 2.0, scale=0.0),
        clip_case("clip_inf_zero_grads", 1.0, float("inf"), scale=0.0),
        scheduler_case("step_lr", lambda o: (torch.optim.lr_scheduler.StepLR(o, 3, 0.5),
                                             {"step_size": 3, "gamma": 0.5})),
        scheduler_case("cosine", lambda o: (
            torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
            {"t_max": 10, "eta_min": 0.001})),
        # OneCycleLR (cosine annealing, momentum cycling off: leangrad cycles only the lr).
        scheduler_case("one_cycle", lambda o: (
            torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=STEPS, pct_start=0.3,
                                                div_factor=25.0, final_div_factor=1e4,
                                                cycle_momentum=False),
            {"max_lr": 0.5, "total_steps": STEPS, "pct_start": 0.3, "div_factor": 25.0,
             "final_div_factor": 1e4})),
        # Cosine with linear warm-up (leangrad's CosineWithWarmupLR) built from PyTorch's own
        # pieces: LinearLR from 1/W to 1 over W - 1 steps, then CosineAnnealingLR over the rest.
        scheduler_case("cosine_with_warmup", lambda o: (
            torch.optim.lr_scheduler.SequentialLR(o, [
                torch.optim.lr_scheduler.LinearLR(o, start_factor=1.0 / 4, end_factor=1.0,
                                                  total_iters=3),
                torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=STEPS - 4, eta_min=0.002)],
                milestones=[4]),
            {"warmup_steps": 4, "total_steps": STEPS, "eta_min": 0.002})),
        # Resumed schedules (two groups, 30 epochs, state dicts loaded after epoch 12); the cosine
        # runs past t_max, where PyTorch's recursive form climbs back as the closed form does.
        scheduler_resume_case("resume_step_lr",
                              lambda o: torch.optim.lr_scheduler.StepLR(o, 7, 0.3),
                              {"step_size": 7, "gamma": 0.3}),
        scheduler_resume_case("resume_cosine",
                              lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 10, 0.001),
                              {"t_max": 10, "eta_min": 0.001}),
    ]
    write("optim.json", "make_optim.py", cases)


if __name__ == "__main__":
    main()
