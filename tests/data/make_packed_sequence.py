"""PyTorch 1.13's recurrent modules over packed sequences (tests/nn/test_packed_sequence.cpp),
float64: a padded batch "input" of unequal "lengths" packed with pack_padded_sequence, run through
the module, unpacked with pad_packed_sequence; each case holds every parameter, the initial state
when given, the padded output, h_n (and c_n), weights w.* and the gradients of sum(output *
w.output) + sum(h_n * w.h_n) (+ sum(c_n * w.c_n)) with respect to the padded input, the initial
state and every parameter.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_packed_sequence.py
"""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from reference import write

generator = torch.Generator().manual_seed(13)


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def weights_for(t):
    return torch.linspace(-1, 1, t.numel(), dtype=torch.float64).reshape(t.shape)


cases = []
MODULES = [
    # name, kind, input_size, hidden_size, lengths, options
    ("lstm_two_layers_bidirectional_unsorted", "lstm", 3, 4, [3, 5, 2, 5],
     {"num_layers": 2, "bidirectional": True, "batch_first": True, "h0": True,
      "enforce_sorted": False}),
    ("lstm_proj_bidirectional_sorted", "lstm", 3, 5, [4, 4, 2],
     {"bidirectional": True, "proj_size": 2, "h0": True, "enforce_sorted": True}),
    ("gru_sorted_no_state", "gru", 2, 3, [5, 3, 3, 1], {"enforce_sorted": True}),
    ("gru_bidirectional_unsorted", "gru", 3, 4, [2, 6, 1],
     {"bidirectional": True, "h0": True, "enforce_sorted": False}),
    ("rnn_relu_two_layers_unsorted", "rnn", 3, 4, [1, 4, 3],
     {"nonlinearity": "relu", "num_layers": 2, "batch_first": True, "h0": True,
      "enforce_sorted": False}),
    ("rnn_tanh_equal_lengths", "rnn", 2, 3, [3, 3], {"bidirectional": True, "enforce_sorted": True}),
]
for name, kind, input_size, hidden, lengths, opts in MODULES:
    common = dict(num_layers=opts.get("num_layers", 1), batch_first=opts.get("batch_first", False),
                  bidirectional=opts.get("bidirectional", False))
    if kind == "rnn":
        model = nn.RNN(input_size, hidden, nonlinearity=opts.get("nonlinearity", "tanh"),
                       **common)
    elif kind == "lstm":
        model = nn.LSTM(input_size, hidden, proj_size=opts.get("proj_size", 0), **common)
    else:
        model = nn.GRU(input_size, hidden, **common)
    model = model.double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(randn(*p.shape) * 0.6)
    directions = 2 if common["bidirectional"] else 1
    layers = common["num_layers"]
    out_size = opts.get("proj_size", 0) or hidden
    N, T = len(lengths), max(lengths)
    x = randn(N, T, input_size) if common["batch_first"] else randn(T, N, input_size)
    x.requires_grad_()
    tensors = {"input": x.detach(), "lengths": torch.tensor(lengths, dtype=torch.int64)}
    state = None
    if opts.get("h0"):
        h0 = randn(layers * directions, N, out_size).requires_grad_()
        tensors["h0"] = h0.detach()
        state = h0
        if kind == "lstm":
            c0 = randn(layers * directions, N, hidden).requires_grad_()
            tensors["c0"] = c0.detach()
            state = (h0, c0)
    packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=common["batch_first"],
                                  enforce_sorted=opts["enforce_sorted"])
    out_packed, h_n = model(packed, state)
    out, out_lengths = pad_packed_sequence(out_packed, batch_first=common["batch_first"])
    assert out_lengths.tolist() == lengths
    if kind == "lstm":
        h_n, c_n = h_n
        tensors["c_n"] = c_n.detach()
        tensors["w.c_n"] = weights_for(c_n)
    loss = (out * weights_for(out)).sum() + (h_n * weights_for(h_n)).sum()
    if kind == "lstm":
        loss = loss + (c_n * tensors["w.c_n"]).sum()
    loss.backward()
    tensors.update({"output": out.detach(), "h_n": h_n.detach(), "w.output": weights_for(out),
                    "w.h_n": weights_for(h_n), "d.input": x.grad,
                    "packed_data": packed.data.detach(), "batch_sizes": packed.batch_sizes})
    if opts.get("h0"):
        tensors["d.h0"] = h0.grad
        if kind == "lstm":
            tensors["d.c0"] = c0.grad
    for pname, p in model.named_parameters():
        tensors["p." + pname] = p.detach()
        tensors["d." + pname] = p.grad
    params = {"kind": kind, "input_size": input_size, "hidden_size": hidden,
              "nonlinearity": opts.get("nonlinearity", "tanh"),
              "proj_size": opts.get("proj_size", 0), "enforce_sorted": opts["enforce_sorted"],
              **common, "parameter_names": [pname for pname, _ in model.named_parameters()]}
    cases.append({"name": name, "params": params, "tensors": tensors})

write("packed_sequence.json", "make_packed_sequence.py", cases)
