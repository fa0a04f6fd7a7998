"""PyTorch 1.13's F.embedding_bag (tests/nn/test_embedding_bag.cpp), float64: the output and the
gradients of sum(y * w) for fixed weights "w" with respect to the weight and the per-sample
weights, in the modes sum, mean and max, for 2-D input (a bag a row), 1-D input with offsets,
empty bags, include_last_offset, padding_idx (left out of its bag, so out of a mean's count too),
per-sample weights (sum only) and repeated indices.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_embedding_bag.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []
generator = torch.Generator().manual_seed(19)

CASES = [
    # name, num_embeddings, dim, input, offsets, mode, per_sample_weights, include_last, padding
    ("sum_2d", 10, 3, [[1, 2, 4], [4, 3, 9]], None, "sum", False, False, None),
    ("mean_2d_padding", 10, 3, [[1, 0, 4], [0, 0, 9], [0, 0, 0]], None, "mean", False, False, 0),
    ("max_2d", 8, 4, [[1, 2, 5, 7], [6, 6, 3, 0]], None, "max", False, False, None),
    ("sum_offsets_empty_bags", 9, 3, [2, 5, 5, 1, 8, 0, 3], [0, 3, 3, 6], "sum", False, False,
     None),
    ("mean_offsets_repeats", 9, 4, [2, 2, 5, 7, 1, 1, 1, 8], [0, 2, 5], "mean", False, False,
     None),
    ("max_offsets_empty_bag_padding", 9, 3, [2, 5, 4, 1, 8, 0, 3, 4], [0, 3, 3, 5], "max",
     False, False, 4),
    ("sum_per_sample_weights_last_offset", 9, 3, [2, 5, 4, 1, 8, 0], [0, 2, 2, 6], "sum", True,
     True, None),
    ("mean_last_offset_negative_padding", 7, 2, [1, 6, 6, 3, 2], [0, 3, 5], "mean", False, True,
     -1),
]
for name, n, dim, input_list, offsets_list, mode, with_weights, include_last, padding in CASES:
    weight = torch.randn(n, dim, generator=generator, dtype=torch.float64).requires_grad_()
    indices = torch.tensor(input_list, dtype=torch.int64)
    offsets = None if offsets_list is None else torch.tensor(offsets_list, dtype=torch.int64)
    per_sample = None
    if with_weights:
        per_sample = torch.randn(indices.shape, generator=generator,
                                 dtype=torch.float64).requires_grad_()
    y = F.embedding_bag(indices, weight, offsets, mode=mode, per_sample_weights=per_sample,
                        include_last_offset=include_last, padding_idx=padding)
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    tensors = {"weight": weight.detach(), "input": indices, "y": y.detach(), "w": w,
               "dweight": weight.grad}
    if offsets is not None:
        tensors["offsets"] = offsets
    if per_sample is not None:
        tensors["per_sample_weights"] = per_sample.detach()
        tensors["dper_sample_weights"] = per_sample.grad
    cases.append({"name": name, "params": {"mode": mode, "include_last_offset": include_last,
                                           "padding_idx": padding},
                  "tensors": tensors})

write("embedding_bag.json", "make_embedding_bag.py", cases)
