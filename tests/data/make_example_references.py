"""PyTorch's numbers for the LibTorch ports in examples/ (run by ctest with --reference).

For each port this writes, in float64, the model's initial parameters (<name>.init.safetensors,
which the port loads with torch::load) and one batch with what PyTorch computed from it
(<name>.reference.safetensors): "x", "y", the training loss "loss" and the gradient of every
parameter, "grad.<name>".
- mlp_regression: the mse loss of 1024 samples of its regression problem.
- cnn_classifier: in eval() (dropout off, so both libraries compute one function), the
  cross-entropy of 32 random images and labels.
The optimizers' steps are checked against PyTorch in tests/optim (make_optim.py); leangrad's
optimizers take float32 parameters only, so the ports' training itself is not compared here.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_example_references.py
"""
import json
import math
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def write_safetensors(filename, tensors):
    """A safetensors file (little-endian f64/i64, C order), as the format's spec lays it out."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        dtype = {torch.float64: "F64", torch.int64: "I64"}[t.dtype]
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"generator": "tests/data/make_example_references.py",
                              "torch_version": torch.__version__}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path = os.path.join(HERE, filename)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    print(f"wrote {path}")


# ---- mlp_regression: examples/mlp_regression.cpp -------------------------------------------------
class Net(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, n_out)

    def forward(self, x):
        return self.fc3(torch.tanh(self.fc2(torch.tanh(self.fc1(x)))))


def mlp_data(n, noise_std=0.05):
    x = torch.rand(n, 2, dtype=torch.float64) * 4.0 - 2.0
    x0, x1 = x[:, 0], x[:, 1]
    y = torch.tanh(x0 * 2.0) * x1 + x1.pow(2) * 0.5 - torch.exp(-x0.pow(2))
    y = y + torch.randn(n, dtype=torch.float64) * noise_std
    return x, y.unsqueeze(1)


def mlp_regression():
    torch.manual_seed(0)
    net = Net(2, 32, 1).double()
    init = {k: v.clone() for k, v in net.state_dict().items()}
    x_train, y_train = mlp_data(1024)
    loss = F.mse_loss(net(x_train), y_train)
    loss.backward()
    reference = {"x": x_train, "y": y_train, "loss": loss.detach().reshape(1)}
    for name, p in net.named_parameters():
        reference["grad." + name] = p.grad
    write_safetensors("example_mlp_regression.init.safetensors", init)
    write_safetensors("example_mlp_regression.reference.safetensors", reference)


# ---- cnn_classifier: examples/cnn_classifier.cpp -------------------------------------------------
class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.norm1 = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.norm2 = nn.GroupNorm(4, 16)
        self.pool = nn.MaxPool2d(2, stride=2)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 4 * 4, 4)

    def forward(self, x):
        x = self.pool(F.relu(self.norm1(self.conv1(x))))
        x = self.pool(F.relu(self.norm2(self.conv2(x))))
        return self.fc(self.dropout(x.flatten(1)))


def cnn_classifier(batch=32):
    torch.manual_seed(0)
    model = ConvNet().double()
    init = {k: v.clone() for k, v in model.state_dict().items()}
    # Random images and labels: the gradients of any batch are a check; the square is not needed.
    images = torch.randn(batch, 1, 16, 16, dtype=torch.float64) * 0.75
    labels = torch.randint(0, 4, (batch,))
    model.eval()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    reference = {"x": images, "y": labels, "loss": loss.detach().reshape(1)}
    for name, p in model.named_parameters():
        reference["grad." + name] = p.grad
    write_safetensors("example_cnn_classifier.init.safetensors", init)
    write_safetensors("example_cnn_classifier.reference.safetensors", reference)


if __name__ == "__main__":
    mlp_regression()
    cnn_classifier()
