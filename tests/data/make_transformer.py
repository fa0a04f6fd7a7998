"""PyTorch 1.13's Transformer modules (tests/nn/test_transformer.cpp), in training mode without
dropout (their Python path): the output and the gradients of sum(out * w) with respect to the
inputs and every parameter. Encoder layers: the default post-norm layer with ReLU, norm_first
with GELU, batch_first, a Bool mask with key padding, unbatched input, and a two-layer encoder
with a final LayerNorm. Decoder layers with all four masks, and norm_first GELU batch_first;
nn.Transformer (one encoder and two decoder layers) with a causal target mask and every key
padding mask; generate_square_subsequent_mask.
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

# The decoder side: decoder layers, and nn.Transformer with a causal target mask.
DECODER = [
    # name, d_model, nhead, dim_feedforward, T, S, N, options
    ("decoder_post_norm_masks", 8, 2, 16, 4, 5, 2, {"masks": True}),
    ("decoder_norm_first_gelu_batch_first", 6, 3, 12, 3, 4, 2,
     {"norm_first": True, "activation": "gelu", "batch_first": True}),
    ("transformer_causal", 8, 2, 16, 4, 5, 2, {"transformer": True, "masks": True}),
]
for name, e, heads, ff, T, S, N, opts in DECODER:
    common = dict(dim_feedforward=ff, dropout=0.0, activation=opts.get("activation", "relu"),
                  batch_first=opts.get("batch_first", False),
                  norm_first=opts.get("norm_first", False))
    if opts.get("transformer"):
        model = nn.Transformer(e, heads, num_encoder_layers=1, num_decoder_layers=2,
                               **common).double()
    else:
        model = nn.TransformerDecoderLayer(e, heads, **common).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(randn(*p.shape) * 0.5)
    model.train()
    first = opts.get("batch_first", False)
    src = randn(*((N, S, e) if first else (S, N, e))).requires_grad_()
    tgt = randn(*((N, T, e) if first else (T, N, e))).requires_grad_()
    tensors = {"src": src.detach(), "tgt": tgt.detach()}
    kwargs = {}
    if opts.get("masks"):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(T).double()
        memory_mask = torch.rand(T, S, generator=generator) < 0.3
        memory_mask[:, 0] = False
        tgt_padding = torch.rand(N, T, generator=generator) < 0.3
        tgt_padding[:, 0] = False
        memory_padding = torch.rand(N, S, generator=generator) < 0.3
        memory_padding[:, 0] = False
        tensors.update({"tgt_mask": tgt_mask, "memory_mask": memory_mask,
                        "tgt_padding": tgt_padding, "memory_padding": memory_padding})
        kwargs = {"tgt_mask": tgt_mask, "memory_mask": memory_mask,
                  "tgt_key_padding_mask": tgt_padding,
                  "memory_key_padding_mask": memory_padding}
    if opts.get("transformer"):
        src_padding = torch.rand(N, S, generator=generator) < 0.3
        src_padding[:, 0] = False
        tensors["src_padding"] = src_padding
        out = model(src, tgt, src_key_padding_mask=src_padding, **kwargs)
    else:
        out = model(tgt, src, **kwargs)  # src is the memory
    w = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    tensors.update({"out": out.detach(), "w": w, "d_src": src.grad, "d_tgt": tgt.grad})
    for pname, p in model.named_parameters():
        tensors["p." + pname] = p.detach()
        tensors["d." + pname] = p.grad
    params = {"d_model": e, "nhead": heads, "dim_feedforward": ff,
              "activation": opts.get("activation", "relu"), "batch_first": first,
              "norm_first": opts.get("norm_first", False),
              "transformer": bool(opts.get("transformer", False))}
    cases.append({"name": name, "params": params, "tensors": tensors})

# generate_square_subsequent_mask itself.
cases.append({"name": "square_subsequent_mask", "params": {},
              "tensors": {"mask": nn.Transformer.generate_square_subsequent_mask(5)}})

write("transformer.json", "make_transformer.py", cases)
