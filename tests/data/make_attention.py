"""PyTorch 1.13's attention (tests/nn/test_attention.cpp).

nn.MultiheadAttention in training mode without dropout (its Python path,
F.multi_head_attention_forward): outputs, attention weights and the gradients of
sum(out * wo) + sum(weights * ww) with respect to query, key, value and every parameter, for
self-attention, kdim/vdim, Bool and float masks, add_bias_kv / add_zero_attn, unbatched input,
batch_first, no bias, and float32; and F.multi_head_attention_forward called directly with
static_k / static_v, separate projection weights in evaluation mode and no biases.

scaled_dot_product_attention is PyTorch 2's; torch 1.13 has no public one, so its cases are
computed by torch's own softmax and matmul in float64 from the definition
softmax(q k^T * scale + mask) v, with PyTorch 2's conventions (a Bool mask is true where a query
may attend; is_causal is torch.ones(L, S).tril()).

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_attention.py
"""
import math

import torch
import torch.nn as nn

from reference import write

generator = torch.Generator().manual_seed(11)


def randn(*shape, dtype=torch.float64):
    return torch.randn(*shape, generator=generator, dtype=torch.float64).to(dtype)


cases = []

MHA = [
    # name, E, heads, L, S, N, options, masks
    ("self_packed", 8, 2, 4, 4, 3, {"self": True}, {}),
    ("cross_kdim_vdim_per_head", 6, 3, 3, 5, 2, {"kdim": 5, "vdim": 7, "average": False}, {}),
    ("bool_masks", 8, 4, 4, 5, 2, {}, {"attn_mask": "bool2d", "kpm": "bool"}),
    ("float_attn_mask_bool_padding", 8, 2, 3, 4, 2, {}, {"attn_mask": "float3d", "kpm": "bool"}),
    ("float_padding", 8, 2, 3, 4, 2, {}, {"kpm": "float"}),
    ("no_bias", 6, 2, 3, 3, 2, {"bias": False}, {"attn_mask": "float2d"}),
    ("bias_kv_zero_attn", 8, 2, 3, 4, 2, {"add_bias_kv": True, "add_zero_attn": True},
     {"attn_mask": "bool2d", "kpm": "bool"}),
    ("unbatched", 8, 2, 3, 5, None, {}, {"attn_mask": "bool3d", "kpm": "bool"}),
    ("batch_first", 8, 4, 3, 4, 2, {"batch_first": True}, {"kpm": "bool"}),
    ("self_packed_f32", 8, 2, 4, 4, 3, {"self": True, "dtype": "float32"}, {}),
]

for name, e, heads, L, S, N, opts, masks in MHA:
    dtype = torch.float32 if opts.get("dtype") == "float32" else torch.float64
    kdim, vdim = opts.get("kdim", e), opts.get("vdim", e)
    batch_first = opts.get("batch_first", False)
    module = nn.MultiheadAttention(e, heads, bias=opts.get("bias", True),
                                   add_bias_kv=opts.get("add_bias_kv", False),
                                   add_zero_attn=opts.get("add_zero_attn", False), kdim=kdim,
                                   vdim=vdim, batch_first=batch_first).to(dtype)
    with torch.no_grad():
        for p in module.parameters():  # away from the init's zeros, so biases matter
            p.copy_(randn(*p.shape, dtype=dtype) * 0.5)
    module.train()

    def shaped(length, features):
        if N is None:
            return (length, features)
        return (N, length, features) if batch_first else (length, N, features)

    q = randn(*shaped(L, e), dtype=dtype).requires_grad_()
    if opts.get("self"):
        k = v = q
    else:
        k = randn(*shaped(S, kdim), dtype=dtype).requires_grad_()
        v = randn(*shaped(S, vdim), dtype=dtype).requires_grad_()
    tensors = {"query": q.detach()}
    if not opts.get("self"):
        tensors.update({"key": k.detach(), "value": v.detach()})

    attn_mask = None
    kind = masks.get("attn_mask")
    if kind == "bool2d":  # every query keeps key 0
        attn_mask = torch.rand(L, S, generator=generator) < 0.4
        attn_mask[:, 0] = False
    elif kind == "bool3d":
        attn_mask = torch.rand(heads * (N or 1), L, S, generator=generator) < 0.4
        attn_mask[:, :, 0] = False
    elif kind == "float2d":
        attn_mask = randn(L, S, dtype=dtype)
    elif kind == "float3d":
        attn_mask = randn(heads * N, L, S, dtype=dtype)
        attn_mask[0, 1, 2] = -math.inf
    kpm = None
    kind = masks.get("kpm")
    if kind == "bool":  # key 0 is never padding
        kpm = torch.rand(*((N, S) if N is not None else (S,)), generator=generator) < 0.3
        kpm[..., 0] = False
    elif kind == "float":
        kpm = randn(N, S, dtype=dtype)
    if attn_mask is not None:
        tensors["attn_mask"] = attn_mask
    if kpm is not None:
        tensors["key_padding_mask"] = kpm

    average = opts.get("average", True)
    out, weights = module(q, k, v, key_padding_mask=kpm, need_weights=True, attn_mask=attn_mask,
                          average_attn_weights=average)
    wo = torch.linspace(-1, 1, out.numel(), dtype=dtype).reshape(out.shape)
    ww = torch.linspace(0.5, 2, weights.numel(), dtype=dtype).reshape(weights.shape)
    ((out * wo).sum() + (weights * ww).sum()).backward()
    tensors.update({"out": out.detach(), "weights": weights.detach(), "wo": wo, "ww": ww,
                    "d_query": q.grad})
    if not opts.get("self"):
        tensors.update({"d_key": k.grad, "d_value": v.grad})
    for pname, p in module.named_parameters():
        tensors["p." + pname] = p.detach()
        tensors["d." + pname] = p.grad
    params = {"embed_dim": e, "num_heads": heads, "kdim": kdim, "vdim": vdim,
              "bias": opts.get("bias", True), "add_bias_kv": opts.get("add_bias_kv", False),
              "add_zero_attn": opts.get("add_zero_attn", False), "batch_first": batch_first,
              "average": average, "self": bool(opts.get("self", False))}
    cases.append({"name": "mha_" + name, "params": params, "tensors": tensors})

SDPA = [
    # name, query shape, key shape, value shape, mask, is_causal, scale
    ("plain_4d", (2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, False, None),
    ("bool_mask_broadcast", (2, 2, 4, 3), (2, 2, 5, 3), (2, 2, 5, 3), "bool", False, None),
    ("float_mask", (3, 4, 5), (3, 6, 5), (3, 6, 2), "float", False, None),
    ("causal_square", (2, 5, 4), (2, 5, 4), (2, 5, 4), None, True, None),
    ("causal_wide", (1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4), None, True, None),
    ("causal_tall", (2, 6, 4), (2, 3, 4), (2, 3, 5), None, True, None),
    ("scale", (2, 4, 8), (2, 4, 8), (2, 4, 8), None, False, 0.3),
    ("batch_broadcast", (2, 1, 3, 4), (3, 5, 4), (3, 5, 6), None, False, None),
    ("two_d", (4, 3), (5, 3), (5, 2), "bool", False, None),
]

for name, qs, ks, vs, mask_kind, is_causal, scale in SDPA:
    q = randn(*qs).requires_grad_()
    k = randn(*ks).requires_grad_()
    v = randn(*vs).requires_grad_()
    L, S = qs[-2], ks[-2]
    s = scale if scale is not None else 1 / math.sqrt(qs[-1])
    scores = torch.matmul(q, k.transpose(-2, -1)) * s
    tensors = {"query": q.detach(), "key": k.detach(), "value": v.detach()}
    if mask_kind == "bool":  # true: may attend; every query keeps key 0
        mask = torch.rand(L, S, generator=generator) < 0.6
        mask[:, 0] = True
        scores = scores.masked_fill(~mask, -math.inf)
        tensors["attn_mask"] = mask
    elif mask_kind == "float":
        mask = randn(L, S)
        scores = scores + mask
        tensors["attn_mask"] = mask
    if is_causal:
        scores = scores.masked_fill(torch.ones(L, S, dtype=torch.bool).tril().logical_not(),
                                    -math.inf)
    out = torch.matmul(torch.softmax(scores, -1), v)
    w = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    tensors.update({"out": out.detach(), "w": w, "d_query": q.grad, "d_key": k.grad,
                    "d_value": v.grad})
    params = {"is_causal": is_causal}
    if scale is not None:
        params["scale"] = scale
    cases.append({"name": "sdpa_" + name, "params": params, "tensors": tensors})

# F.multi_head_attention_forward called directly, for what the module never passes: static_k
# and static_v (keys and values already split into heads), separate projection weights with
# training=False (dropout_p then has no effect), and no biases.
FMHA = [
    # name, E, heads, L, S, N, options
    ("static_kv", 8, 2, 3, 4, 2, {"static_k": True, "static_v": True, "kpm": True,
                                  "average": False}),
    ("static_k_only", 6, 3, 4, 5, 2, {"static_k": True, "attn_mask": True}),
    ("separate_eval_no_bias", 6, 2, 3, 4, 2, {"separate": True, "kdim": 5, "vdim": 7,
                                              "bias": False, "training": False,
                                              "dropout_p": 0.5}),
    ("unbatched_static_kv", 8, 4, 3, 5, None, {"static_k": True, "static_v": True}),
]

for name, e, heads, L, S, N, opts in FMHA:
    head_dim = e // heads
    kdim, vdim = opts.get("kdim", e), opts.get("vdim", e)
    batch = N or 1
    shaped = (lambda length, f: (length, N, f)) if N is not None else (lambda length, f: (length, f))
    q = randn(*shaped(L, e)).requires_grad_()
    k = randn(*shaped(S, kdim)).requires_grad_()
    v = randn(*shaped(S, vdim)).requires_grad_()
    weights = {}
    if opts.get("separate"):
        weights["q_proj_weight"] = randn(e, e) * 0.5
        weights["k_proj_weight"] = randn(e, kdim) * 0.5
        weights["v_proj_weight"] = randn(e, vdim) * 0.5
    else:
        weights["in_proj_weight"] = randn(3 * e, e) * 0.5
    if opts.get("bias", True):
        weights["in_proj_bias"] = randn(3 * e) * 0.5
        weights["out_proj_bias"] = randn(e) * 0.5
    weights["out_proj_weight"] = randn(e, e) * 0.5
    for t in weights.values():
        t.requires_grad_()
    static_k = randn(batch * heads, S, head_dim).requires_grad_() if opts.get("static_k") else None
    static_v = randn(batch * heads, S, head_dim).requires_grad_() if opts.get("static_v") else None
    kpm = None
    if opts.get("kpm"):
        kpm = torch.rand(N, S, generator=generator) < 0.3
        kpm[:, 0] = False
    attn_mask = randn(L, S) if opts.get("attn_mask") else None
    average = opts.get("average", True)
    out, w = torch.nn.functional.multi_head_attention_forward(
        q, k, v, e, heads, weights.get("in_proj_weight"), weights.get("in_proj_bias"), None, None,
        False, opts.get("dropout_p", 0.0), weights["out_proj_weight"],
        weights.get("out_proj_bias"), training=opts.get("training", True), key_padding_mask=kpm,
        need_weights=True, attn_mask=attn_mask,
        use_separate_proj_weight=bool(opts.get("separate")),
        q_proj_weight=weights.get("q_proj_weight"), k_proj_weight=weights.get("k_proj_weight"),
        v_proj_weight=weights.get("v_proj_weight"), static_k=static_k, static_v=static_v,
        average_attn_weights=average)
    wo = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape)
    ww = torch.linspace(0.5, 2, w.numel(), dtype=torch.float64).reshape(w.shape)
    ((out * wo).sum() + (w * ww).sum()).backward()
    tensors = {"query": q.detach(), "key": k.detach(), "value": v.detach(), "out": out.detach(),
               "weights": w.detach(), "wo": wo, "ww": ww, "d_query": q.grad}
    if static_k is None:
        tensors["d_key"] = k.grad
    if static_v is None:
        tensors["d_value"] = v.grad
    for wname, t in weights.items():
        tensors["p." + wname] = t.detach()
        tensors["d." + wname] = t.grad
    for sname, t in (("static_k", static_k), ("static_v", static_v)):
        if t is not None:
            tensors[sname] = t.detach()
            tensors["d_" + sname] = t.grad
    if kpm is not None:
        tensors["key_padding_mask"] = kpm
    if attn_mask is not None:
        tensors["attn_mask"] = attn_mask
    params = {"embed_dim": e, "num_heads": heads, "training": opts.get("training", True),
              "dropout_p": opts.get("dropout_p", 0.0), "average": average,
              "separate": bool(opts.get("separate"))}
    cases.append({"name": "fmha_" + name, "params": params, "tensors": tensors})

write("attention.json", "make_attention.py", cases)
