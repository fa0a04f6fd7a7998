"""PyTorch 1.13's recurrent modules (tests/nn/test_rnn.cpp), float64, without dropout: RNN (tanh
and relu), LSTM (with projections too) and GRU, one and two layers, one and two directions,
sequence first, batch first and unbatched, with and without initial states and biases; and the
cells RNNCell, LSTMCell and GRUCell. Each case holds the input, the initial state when one is
given, every parameter, the outputs, weights w.* and the gradients of sum(output * w.output) +
sum(h_n * w.h_n) (+ sum(c_n * w.c_n)) with respect to the input, the initial state and every
parameter.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_rnn.py
"""
import torch
import torch.nn as nn

from reference import write

generator = torch.Generator().manual_seed(11)


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def weights_for(t):
    return torch.linspace(-1, 1, t.numel(), dtype=torch.float64).reshape(t.shape)


cases = []
MODULES = [
    # name, kind, input_size, hidden_size, T, N (None: unbatched), options
    ("rnn_tanh", "rnn", 3, 4, 5, 2, {"h0": True}),
    ("rnn_relu_two_layers_bidirectional", "rnn", 3, 4, 4, 2,
     {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("lstm_two_layers_states", "lstm", 3, 4, 4, 3, {"num_layers": 2, "h0": True}),
    ("lstm_bidirectional_batch_first", "lstm", 3, 5, 4, 2,
     {"num_layers": 2, "bidirectional": True, "batch_first": True, "h0": True}),
    ("lstm_proj_bidirectional", "lstm", 3, 5, 3, 2,
     {"num_layers": 2, "bidirectional": True, "proj_size": 2, "h0": True}),
    ("lstm_no_bias_unbatched", "lstm", 4, 3, 5, None, {"bias": False, "h0": True}),
    ("gru_two_layers_states", "gru", 3, 4, 5, 2, {"num_layers": 2, "h0": True}),
    ("gru_bidirectional_batch_first", "gru", 2, 3, 4, 3,
     {"bidirectional": True, "batch_first": True}),
    ("gru_unbatched_no_state", "gru", 3, 4, 3, None, {}),
]
for name, kind, input_size, hidden, T, N, opts in MODULES:
    common = dict(num_layers=opts.get("num_layers", 1), bias=opts.get("bias", True),
                  batch_first=opts.get("batch_first", False),
                  bidirectional=opts.get("bidirectional", False))
    if kind == "rnn":
        model = nn.RNN(input_size, hidden, nonlinearity=opts.get("nonlinearity", "tanh"),
                       **common)
    elif kind == "lstm":
        model = nn.LSTM(input_size, hidden, proj_size=opts.get("proj_size", 0), **common)
    else:
        model = nn.GRU(input_size, hidden, **common)
    model = model.double()
    with torch.no_grad():  # larger than the init's 1/sqrt(hidden), so the gates saturate unevenly
        for p in model.parameters():
            p.copy_(randn(*p.shape) * 0.6)
    directions = 2 if common["bidirectional"] else 1
    layers = common["num_layers"]
    out_size = opts.get("proj_size", 0) or hidden
    if N is None:
        x = randn(T, input_size)
        state_batch = ()
    else:
        x = randn(N, T, input_size) if common["batch_first"] else randn(T, N, input_size)
        state_batch = (N,)
    x.requires_grad_()
    tensors = {"input": x.detach()}
    state = None
    if opts.get("h0"):
        h0 = randn(layers * directions, *state_batch, out_size).requires_grad_()
        tensors["h0"] = h0.detach()
        state = h0
        if kind == "lstm":
            c0 = randn(layers * directions, *state_batch, hidden).requires_grad_()
            tensors["c0"] = c0.detach()
            state = (h0, c0)
    out, h_n = model(x, state)
    if kind == "lstm":
        h_n, c_n = h_n
        tensors["c_n"] = c_n.detach()
        tensors["w.c_n"] = weights_for(c_n)
    loss = (out * weights_for(out)).sum() + (h_n * weights_for(h_n)).sum()
    if kind == "lstm":
        loss = loss + (c_n * tensors["w.c_n"]).sum()
    loss.backward()
    tensors.update({"output": out.detach(), "h_n": h_n.detach(), "w.output": weights_for(out),
                    "w.h_n": weights_for(h_n), "d.input": x.grad})
    if opts.get("h0"):
        tensors["d.h0"] = h0.grad
        if kind == "lstm":
            tensors["d.c0"] = c0.grad
    for pname, p in model.named_parameters():
        tensors["p." + pname] = p.detach()
        tensors["d." + pname] = p.grad
    params = {"kind": kind, "input_size": input_size, "hidden_size": hidden,
              "nonlinearity": opts.get("nonlinearity", "tanh"),
              "proj_size": opts.get("proj_size", 0), **common,
              "parameter_names": [pname for pname, _ in model.named_parameters()]}
    cases.append({"name": name, "params": params, "tensors": tensors})

CELLS = [
    # name, kind, input_size, hidden_size, N (None: unbatched), given state
    ("rnn_cell_tanh", "rnn_cell", 3, 4, 2, True),
    ("rnn_cell_relu_no_state", "rnn_cell_relu", 3, 4, 3, False),
    ("lstm_cell", "lstm_cell", 3, 4, 2, True),
    ("lstm_cell_unbatched_no_state", "lstm_cell", 2, 3, None, False),
    ("gru_cell", "gru_cell", 3, 4, 2, True),
    ("gru_cell_unbatched", "gru_cell", 4, 2, None, True),
]
for name, kind, input_size, hidden, N, given in CELLS:
    if kind == "rnn_cell":
        model = nn.RNNCell(input_size, hidden)
    elif kind == "rnn_cell_relu":
        model = nn.RNNCell(input_size, hidden, nonlinearity="relu")
    elif kind == "lstm_cell":
        model = nn.LSTMCell(input_size, hidden)
    else:
        model = nn.GRUCell(input_size, hidden)
    model = model.double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(randn(*p.shape) * 0.6)
    batch = () if N is None else (N,)
    x = randn(*batch, input_size).requires_grad_()
    tensors = {"input": x.detach()}
    state = None
    if given:
        h0 = randn(*batch, hidden).requires_grad_()
        tensors["h0"] = h0.detach()
        state = h0
        if kind == "lstm_cell":
            c0 = randn(*batch, hidden).requires_grad_()
            tensors["c0"] = c0.detach()
            state = (h0, c0)
    result = model(x, state)
    if kind == "lstm_cell":
        h, c = result
        tensors.update({"c_n": c.detach(), "w.c_n": weights_for(c)})
        loss = (h * weights_for(h)).sum() + (c * tensors["w.c_n"]).sum()
    else:
        h = result
        loss = (h * weights_for(h)).sum()
    loss.backward()
    tensors.update({"h_n": h.detach(), "w.h_n": weights_for(h), "d.input": x.grad})
    if given:
        tensors["d.h0"] = h0.grad
        if kind == "lstm_cell":
            tensors["d.c0"] = c0.grad
    for pname, p in model.named_parameters():
        tensors["p." + pname] = p.detach()
        tensors["d." + pname] = p.grad
    params = {"kind": kind, "input_size": input_size, "hidden_size": hidden,
              "parameter_names": [pname for pname, _ in model.named_parameters()]}
    cases.append({"name": name, "params": params, "tensors": tensors})

write("rnn.json", "make_rnn.py", cases)
