"""PyTorch reference data for mixed precision (tests/autograd/test_autocast.cpp,
tests/autograd/test_tensor_api.cpp). Run: /usr/bin/python3 tests/data/make_amp.py

- var_* / std_*: torch.var and torch.std of float16 and bfloat16 tensors whose spread is small
  beside their mean (where rounding each step of the two-pass formula to 16 bits shows): PyTorch
  computes in float and rounds the result once.
- autocast_*: the dtypes torch.autocast gives on the CPU (bfloat16; this torch has no CUDA).
  "nested_cuda_off": a torch.autocast("cuda", enabled=False) inside torch.autocast("cpu") leaves
  the CPU ops autocast (each device type has its own setting); "mean": mean is in none of
  autocast's lists, so a bfloat16 input gives bfloat16 under autocast. Each case holds the input
  inputs (a and b for torch.mm, x for mean) and the output y, in the dtype PyTorch gave. (The
  test takes only the dtype of the mm: PyTorch 1.13's CPU bfloat16 mm rounds partial sums to
  16 bits, so its values are not the once-rounded product leangrad computes.)
"""
import torch

from reference import write


def spread_input(shape, centre, spread, dtype):
    return (centre + spread * torch.randn(shape, dtype=torch.float64)).to(dtype)


def var_std_cases():
    cases = []
    for dtype, centre, spread in [(torch.bfloat16, 100.0, 0.7), (torch.float16, 1000.0, 1.5)]:
        short = "bf16" if dtype == torch.bfloat16 else "f16"
        x = spread_input((5, 9), centre, spread, dtype)
        for dims, unbiased, keepdim in [([1], True, False), ([0], False, True),
                                        ([0, 1], True, False)]:
            tag = f"{short}_dims{''.join(map(str, dims))}_{'unbiased' if unbiased else 'biased'}"
            cases.append({"name": f"var_{tag}",
                          "params": {"dims": dims, "unbiased": unbiased, "keepdim": keepdim},
                          "tensors": {"x": x, "y": torch.var(x, dims, unbiased=unbiased,
                                                             keepdim=keepdim)}})
            cases.append({"name": f"std_{tag}",
                          "params": {"dims": dims, "unbiased": unbiased, "keepdim": keepdim},
                          "tensors": {"x": x, "y": torch.std(x, dims, unbiased=unbiased,
                                                             keepdim=keepdim)}})
    return cases


def autocast_cases():
    a = torch.randn(3, 4)
    b = torch.randn(4, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.autocast("cuda", enabled=False):
            assert torch.is_autocast_cpu_enabled()
            nested = torch.mm(a, b)
        h = torch.mm(a, b)
        mean = h.mean()
    return [{"name": "autocast_nested_cuda_off", "tensors": {"a": a, "b": b, "y": nested}},
            {"name": "autocast_mean", "tensors": {"x": h, "y": mean}}]


def main():
    torch.manual_seed(0)
    write("amp.json", "make_amp.py", var_std_cases() + autocast_cases())


if __name__ == "__main__":
    main()
