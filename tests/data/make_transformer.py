"""PyTorch 1.13's nn.TransformerEncoderLayer and nn.TransformerEncoder
(tests/nn/test_transformer.cpp), in training mode without dropout (their Python path): the
output and the gradients of sum(out * w) with respect to the input and every parameter, for the
default post-norm layer with ReLU, norm_first with GELU, batch_first, a Bool mask with key
padding, unbatched input, and a two-layer encoder with a final LayerNorm.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_transformer.py
"""
import torch
import torch.nn as nn

from reference import write

generator = torch.Generator().manual_seed(5)


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


cases = []
CASES = [
    # name, d_model, nhead, dim_feedforward, S, N, options
    ("post_norm_relu", 8, 2, 16, 5, 3, {}),
    ("norm_first_gelu", 8, 4, 12, 4, 2, {"norm_first": True, "activation": "gelu"}),
    ("batch_first_masks", 6, 3, 10, 5, 2, {"batch_first": True, "masks": True}),
    ("unbatched", 8, 2, 16, 4, None, {}),
    ("encoder_two_layers_norm", 8, 2, 16, 5, 2, {"layers": 2, "final_norm": True,
                                                 "masks": True}),
]
for name, e, heads, ff, S, N, opts in CASES:
    layer = nn.TransformerEncoderLayer(e, heads, dim_feedforward=ff, dropout=0.0,
                                       activation=opts.get("activation", "relu"),
                                       layer_norm_eps=1e-5,
                                       batch_first=opts.get("batch_first", False),
                                       norm_first=opts.get("norm_first", False)).double()
    with torch.no_grad():
        for p in layer.parameters():  # away from the init's ones and zeros
            p.copy_(randn(*p.shape) * 0.5)
    if "layers" in opts:
        norm = nn.LayerNorm(e).double() if opts.get("final_norm") else None
        model = nn.TransformerEncoder(layer, opts["layers"], norm=norm,
                                      enable_nested_tensor=False)
        with torch.no_grad():  # the copies differ from here on, so each layer is checked
            for p in model.parameters():
                p.copy_(randn(*p.shape) * 0.5)
    else:
        model = layer
    model.train()
    if N is None:
        shape = (S, e)
    else:
        shape = (N, S, e) if opts.get("batch_first") else (S, N, e)
    x = randn(*shape).requires_grad_()
    tensors = {"src": x.detach()}
    kwargs = {}
    if opts.get("masks"):
        mask = torch.rand(S, S, generator=generator) < 0.3
        mask.fill_diagonal_(False)  # every position attends to itself
        padding = torch.rand(N, S, generator=generator) < 0.3
        padding[:, 0] = False
        mask[:, 0] = False
        tensors.update({"mask": mask, "padding": padding})
        kwargs = {"src_key_padding_mask": padding}
        if "layers" in opts:
            kwargs["mask"] = mask
        else:
            kwargs["src_mask"] = mask
    out = model(x, **kwargs)
    w = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    tensors.update({"out": out.detach(), "w": w, "d_src": x.grad})
    for pname, p in model.named_parameters():
        tensors["p." + pname] = p.detach()
        tensors["d." + pname] = p.grad
    params = {"d_model": e, "nhead": heads, "dim_feedforward": ff,
              "activation": opts.get("activation", "relu"),
              "batch_first": opts.get("batch_first", False),
              "norm_first": opts.get("norm_first", False), "layers": opts.get("layers", 0),
              "final_norm": opts.get("final_norm", False)}
    cases.append({"name": name, "params": params, "tensors": tensors})

write("transformer.json", "make_transformer.py", cases)
