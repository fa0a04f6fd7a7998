"""PyTorch 1.13's nn.AdaptiveLogSoftmaxWithLoss (tests/nn/test_adaptive_log_softmax.cpp), float64:
the module's parameters under their state_dict names ("head.weight", "tail.0.1.weight", ...),
the "input" and "target", forward's "output" and "loss", "log_prob" and "predict" of the input,
and the gradients of the loss ("d" + each parameter's name, "dinput"). Head bias on and off,
div_value 4 and 2, a cluster no target falls in, one cutoff, and an unbatched input.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_adaptive_log_softmax.py
"""
import torch
import torch.nn as nn

from reference import write

torch.manual_seed(48)
cases = []


def case(name, in_features, n_classes, cutoffs, div_value, head_bias, input_shape, target):
    asm = nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=div_value,
                                        head_bias=head_bias).double()
    x = torch.randn(*input_shape, dtype=torch.float64, requires_grad=True)
    output, loss = asm(x, target)
    loss.backward()
    batched = x.unsqueeze(0) if x.dim() == 1 else x
    tensors = {"input": x.detach(), "target": target, "output": output.detach(),
               "loss": loss.detach(), "dinput": x.grad,
               "log_prob": asm.log_prob(batched).detach(), "predict": asm.predict(batched)}
    for key, p in asm.named_parameters():
        tensors[key] = p.detach()
        # A cluster no target falls in takes no part in the loss: no gradient (zeros here).
        tensors["d" + key] = p.grad if p.grad is not None else torch.zeros_like(p)
    cases.append({"name": name,
                  "params": {"in_features": in_features, "n_classes": n_classes,
                             "cutoffs": cutoffs, "div_value": div_value, "head_bias": head_bias,
                             "parameters": [k for k, _ in asm.named_parameters()]},
                  "tensors": tensors})


case("two_clusters_head_bias", 16, 20, [4, 10], 2.0, True, (12, 16),
     torch.tensor([0, 3, 4, 9, 10, 19, 5, 12, 2, 7, 15, 1]))
case("default_div_value", 8, 10, [3, 6], 4.0, False, (7, 8),
     torch.tensor([0, 1, 2, 3, 5, 4, 2]))  # no target in the second cluster
case("one_cutoff", 6, 9, [5], 4.0, True, (5, 6), torch.tensor([8, 0, 5, 4, 6]))
case("unbatched", 16, 20, [4, 10], 2.0, False, (16,), torch.tensor(13))

write("adaptive_log_softmax.json", "make_adaptive_log_softmax.py", cases)
