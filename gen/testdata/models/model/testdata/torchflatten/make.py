#!/usr/bin/env python3
"""Writes the PyTorch fixture of TestTorchFlatten (model/flatten_test.go in
the repository root and gen/testdata/models/model/torchflatten_test.go,
which have a copy of this directory).

Run from this directory with Debian's python3 and python3-torch:
/usr/bin/python3 make.py.

The network is a small CNN as PyTorch writes it, in float64, on NCHW
images: conv1 = nn.Conv2d(2, 3, 3, padding=1), ReLU, x.flatten(1) (the
channels slowest: index c*H*W + h*W + w), fc = nn.Linear(3*4*5, 4); the
loss is the sum of the squared differences of the logits from targets.
The image is 4 high and 5 wide, so that a swapped height and width, or a
flatten in another order, changes the result.

Outputs:
  torchflatten.safetensors  the state_dict (F64, PyTorch's layout:
                            conv1.weight [3][2][3][3], fc.weight [4][60]
                            in flatten(1)'s order)
  torchflatten.json         the images x (NHWC [2][4][5][2], flattened,
                            transposed from the NCHW tensor PyTorch ran
                            on), the targets y [2][4], the logits [2][4],
                            the loss, and each parameter's gradient
                            (flattened, PyTorch's layout)
"""
import json
import struct

import torch
from torch import nn

torch.manual_seed(6)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 4 * 5, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.conv1(x)).flatten(1))


net = Net().double()
x = torch.randn(2, 2, 4, 5, dtype=torch.float64)
y = torch.randn(2, 4, dtype=torch.float64)
logits = net(x)
loss = ((logits - y) ** 2).sum()
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
with open("torchflatten.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    for b in blobs:
        f.write(b)

grads = {name: p.grad.contiguous().view(-1).tolist() for name, p in net.named_parameters()}
with open("torchflatten.json", "w") as f:
    json.dump({"torch": torch.__version__,
               "x_nhwc": x.permute(0, 2, 3, 1).contiguous().view(-1).tolist(),
               "y": y.view(-1).tolist(),
               "logits": logits.detach().view(-1).tolist(),
               "loss": loss.item(), "grads": grads}, f, indent=1)
