#!/usr/bin/env python3
"""Writes the PyTorch fixture of torchgelu_test.go (model TorchGelu).

Run from this directory with Debian's python3 and python3-torch:
/usr/bin/python3 make.py.

The network is TorchGelu's (torchgelu.go) as PyTorch writes it, in
float64: fc1 = nn.Linear(3, 6), nn.GELU(), fc2 = nn.Linear(6, 6),
nn.GELU(approximate="tanh"), fc3 = nn.Linear(6, 2); the loss is the sum
of the squared differences from the targets.

Outputs:
  torchgelu.safetensors  the state_dict (F64, PyTorch's layout)
  torchgelu.json         the inputs x [4][3] and targets y [4][2], the
                         loss, and each parameter's gradient (flattened,
                         PyTorch's layout, which for a Linear weight
                         [out][in] is ocannlgen's too)
"""
import json
import struct

import torch
from torch import nn

torch.manual_seed(24)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 6)
        self.fc2 = nn.Linear(6, 6)
        self.fc3 = nn.Linear(6, 2)
        self.g1 = nn.GELU()
        self.g2 = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.fc3(self.g2(self.fc2(self.g1(self.fc1(x)))))


net = Net().double()
x = torch.randn(4, 3, dtype=torch.float64) * 2
y = torch.randn(4, 2, dtype=torch.float64)
loss = ((net(x) - y) ** 2).sum()
loss.backward()

header = {"__metadata__": {"format": "pt"}}
blobs = []
offset = 0
for name, t in net.state_dict().items():
    data = t.detach().contiguous().view(-1).tolist()
    blob = struct.pack("<%dd" % len(data), *data)
    header[name] = {"dtype": "F64", "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open("torchgelu.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    for b in blobs:
        f.write(b)

grads = {name: p.grad.contiguous().view(-1).tolist() for name, p in net.named_parameters()}
with open("torchgelu.json", "w") as f:
    json.dump({"torch": torch.__version__, "x": x.view(-1).tolist(), "y": y.view(-1).tolist(),
               "loss": loss.item(), "grads": grads}, f, indent=1)
