"""Case builders that several make_<op>.py scripts share; reference.py writes the cases to JSON.

leaf, grad_case: random inputs and a case of an op's output and gradients (make_layers.py,
make_nn_layers.py, make_loss_options.py, make_loss_nd.py); class_loss_case: cross_entropy and
nll_loss (make_loss_options.py, make_loss_nd.py); make_optimizer, run_steps, clip_grad_norm_case:
the optimizers and clip_grad_norm_ (make_optim.py, make_optim_f64.py); expect_error: PyTorch
refuses an input that the C++ side refuses too; weighted_case and mpmath_case: one output and
its gradients against a fixed weight, or mpmath's values (make_special_math.py, make_scatter.py,
make_pointwise_math.py); uniform, op_case and op_outputs_case: an op's named operands listed in
params["inputs"], its output and gradients "d_" + name, or several outputs
(make_array_functions.py, make_strided_and_division.py, make_householder_and_ex.py). Random
draws come from torch's global generator
unless a generator is passed, in the order of the calls, as the scripts' own copies drew them.
"""
import torch
import torch.nn.functional as F


def leaf(*shape, low=-1.0, high=1.0):
    """A tensor uniform in [low, high) that requires grad."""
    return (torch.rand(*shape) * (high - low) + low).requires_grad_()


def grad_case(name, params, inputs, fn, extra=None):
    """fn(*inputs) backpropagated with a random upstream gradient "g": the case holds the inputs,
    `extra` (tensors stored as they are after the call: running statistics, indices), "y", "g" and
    "d" + key for each input that requires grad."""
    y = fn(*inputs.values())
    g = torch.randn(y.shape)
    y.backward(g)
    tensors = dict(inputs)
    tensors.update(extra or {})
    tensors["y"] = y
    tensors["g"] = g
    for key, t in inputs.items():
        if t.requires_grad:
            tensors["d" + key] = t.grad
    tensors = {k: v.detach().clone() for k, v in tensors.items()}
    return {"name": name, "params": params, "tensors": tensors}


def class_loss_case(name, op, x, target, weight=None, reduction="mean", ignore_index=-100,
                    label_smoothing=0.0):
    """op ("cross_entropy" or "nll_loss") of x and target: "x", "target", the class weight
    "weight" when there is one, a random upstream gradient "g", "y", and when y is finite the
    gradients "dx" (and "dtarget" for a target that requires grad: class probabilities)."""
    if op == "cross_entropy":
        y = F.cross_entropy(x, target, weight=weight, ignore_index=ignore_index,
                            reduction=reduction, label_smoothing=label_smoothing)
    else:
        y = F.nll_loss(x, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    g = torch.randn(y.shape)
    tensors = {"x": x, "target": target, "y": y, "g": g}
    if weight is not None:
        tensors["weight"] = weight
    if y.isfinite().all():
        y.backward(g)
        tensors["dx"] = x.grad
        if target.requires_grad:
            tensors["dtarget"] = target.grad
    params = {"op": op, "reduction": reduction, "ignore_index": ignore_index,
              "label_smoothing": label_smoothing}
    return {"name": name, "params": params,
            "tensors": {k: v.detach().clone() for k, v in tensors.items()}}


OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
              "radam": torch.optim.RAdam}


def make_optimizer(opt, options, params, groups=None):
    """OPTIMIZERS[opt] over params with the JSON options (betas as a list); groups: dicts whose
    "params" are indices into params, the other keys each group's options."""
    kwargs = dict(options)
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    if groups is None:
        return OPTIMIZERS[opt](params, **kwargs)
    return OPTIMIZERS[opt]([dict(params=[params[i] for i in g["params"]],
                                 **{k: v for k, v in g.items() if k != "params"})
                            for g in groups], **kwargs)


def run_steps(optimizer, params, grads, has_grad=None):
    """One optimizer.step() per row of grads[k] (parameter k's gradient at each step; None where
    has_grad[k][step] is 0): returns each parameter after each step, traj[k] (steps, *shape)."""
    steps = grads[0].shape[0]
    traj = [torch.empty((steps,) + tuple(p.shape), dtype=p.dtype) for p in params]
    for step in range(steps):
        for k, p in enumerate(params):
            p.grad = grads[k][step].clone() if has_grad is None or has_grad[k][step] else None
        optimizer.step()
        for k, p in enumerate(params):
            traj[k][step] = p.detach()
    return traj


def clip_grad_norm_case(name, grads, max_norm, norm_type, params_json=None):
    """clip_grad_norm_ over zero parameters holding `grads`: "total_norm" (1,), and grad<k> and
    clipped<k> per parameter. params: max_norm, norm_type (the inf-norm as the string "inf": JSON
    has no infinity), then params_json's."""
    params = [torch.zeros(g.shape, dtype=g.dtype, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    tensors = {"total_norm": total.reshape(1)}
    for k, (p, g) in enumerate(zip(params, grads)):
        tensors[f"grad{k}"] = g
        tensors[f"clipped{k}"] = p.grad
    norm_json = "inf" if norm_type == float("inf") else norm_type
    return {"name": name, "params": {"max_norm": max_norm, "norm_type": norm_json,
                                     **(params_json or {})},
            "tensors": tensors}


def expect_error(what, fn, message=None, errors=(RuntimeError, ValueError, IndexError)):
    """PyTorch refuses fn() too, raising one of `errors` (and when `message` is given, with it in
    its text): the C++ side (a row of a misuse table, a test) that expects an Error follows
    PyTorch. Checked each time the script runs."""
    try:
        fn()
    except errors as e:
        assert message is None or message in str(e), \
            f"{what}: PyTorch raised '{e}', without '{message}'"
        return
    raise AssertionError(f"PyTorch does not raise for {what}: the C++ side should not either")


def weighted_case(name, inputs, fn, params=None, differentiable=True, no_grad=()):
    """inputs: name -> tensor; fn(*inputs) -> tensor. The case holds the inputs, out0 and, for a
    differentiable floating output, w0 = linspace(-1, 2) and d_<input> = d sum(out0 * w0) / d input
    for each floating input not in no_grad; params gets the inputs' order and no_grad."""
    leaves = {k: (v.clone().requires_grad_()
                  if differentiable and v.is_floating_point() and k not in no_grad else v)
              for k, v in inputs.items()}
    out = fn(*leaves.values())
    tensors = dict(inputs)
    tensors["out0"] = out.detach()
    if differentiable and out.is_floating_point():
        w = torch.linspace(-1, 2, out.numel(), dtype=out.dtype).reshape(out.shape)
        tensors["w0"] = w
        (out * w).sum().backward()
        for k, v in leaves.items():
            if v.requires_grad and v.grad is not None:
                tensors["d_" + k] = v.grad
    return {"name": name,
            "params": dict(params or {}, inputs=list(inputs.keys()), no_grad=list(no_grad)),
            "tensors": tensors}


def mpmath_case(name, inputs, fn):
    """fn evaluated by mpmath (at its current precision) at each element of the inputs (of one
    shape), rounded once to float64: a values-only case."""
    import mpmath as mp
    args = list(inputs.values())
    flat = [a.reshape(-1).tolist() for a in args]
    values = [float(fn(*[mp.mpf(v) for v in point])) for point in zip(*flat)]
    out = torch.tensor(values, dtype=torch.float64).reshape(args[0].shape)
    return {"name": name, "params": {"inputs": list(inputs.keys()), "no_grad": []},
            "tensors": dict(inputs, out0=out)}


def uniform(*shape, low=-1.0, high=1.0, grad=True, dtype=torch.float32):
    """A tensor of `shape` (none: 0-d) uniform in [low, high), requiring grad unless grad=False."""
    t = torch.rand(shape, dtype=dtype) * (high - low) + low
    return t.requires_grad_(grad)


def op_case(name, op, inputs, fn, **params):
    """fn(*inputs) as the case's "y", backpropagated with a random "g" when it has a gradient;
    "d_" + key for each input that requires grad, and params["inputs"] the inputs' names."""
    y = fn(*inputs.values())
    tensors = dict(inputs)
    tensors["y"] = y
    if y.requires_grad:
        g = torch.randn(y.shape, dtype=y.dtype)
        y.backward(g)
        tensors["g"] = g
        for key, t in inputs.items():
            if t.requires_grad:
                tensors["d_" + key] = t.grad
    return {"name": name, "params": dict(params, op=op, inputs=list(inputs)),
            "tensors": {k: v.detach().clone() for k, v in tensors.items()}}


def op_outputs_case(name, op, inputs, outputs, **params):
    """A case of several outputs (a dict of tensors) of an op not differentiated."""
    tensors = dict(inputs)
    tensors.update(outputs)
    return {"name": name, "params": dict(params, op=op, inputs=list(inputs)),
            "tensors": {k: v.detach().clone() for k, v in tensors.items()}}
