#!/usr/bin/env python3
"""Writes the PyTorch fixture of torchconv_test.go (model TorchConv).

Run from this directory: python3 make.py (needs torch; numpy is not used).

The network is TorchConv's (torchconv.go) as PyTorch writes it:
conv1 = nn.Conv2d(3, 4, 3, padding=1), relu, conv2 = nn.Conv2d(4, 2, 3,
padding=1). conv1's weight, [4][3][3][3] ([out][in][kh][kw]), has the
same shape in ocannlgen's order [out][kh][kw][in]: the case where a
forgotten layout conversion would load silently and give wrong results.

Outputs:
  torchconv.safetensors  the state_dict (float32, PyTorch's layout),
                         written with the standard library (8-byte
                         little-endian header length, JSON header padded
                         with spaces to a multiple of 8, little-endian data)
  torchconv.json         a fixed input and PyTorch's output for it, both
                         flattened in NHWC order (ocannlgen's memory order
                         batch, h, w, c), the output computed in float64
                         from the float32 weights and input
"""
import json
import struct

import torch
from torch import nn

torch.manual_seed(26)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv1(x)))


net = Net()
x = torch.randn(2, 3, 5, 5)  # NCHW, float32

# The reference output in float64, from exactly the saved float32 values.
net64 = Net()
net64.load_state_dict(net.state_dict())
net64 = net64.double()
with torch.no_grad():
    y = net64(x.double())  # [2][2][5][5], NCHW

# The state_dict as a safetensors file.
header = {"__metadata__": {"format": "pt"}}
blobs = []
offset = 0
for name, t in net.state_dict().items():
    data = t.detach().contiguous().view(-1).tolist()
    blob = struct.pack("<%df" % len(data), *data)
    header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
hdr = json.dumps(header, separators=(",", ":")).encode()
hdr += b" " * (-(8 + len(hdr)) % 8)
with open("torchconv.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(hdr)))
    f.write(hdr)
    for b in blobs:
        f.write(b)

# NCHW -> NHWC for ocannlgen's `batch | h, w, c` tensors.
with open("torchconv.json", "w") as f:
    json.dump({
        "torch": torch.__version__,
        "input_nhwc_shape": [2, 5, 5, 3],
        "input_nhwc": x.double().permute(0, 2, 3, 1).contiguous().view(-1).tolist(),
        "output_nhwc_shape": [2, 5, 5, 2],
        "output_nhwc": y.permute(0, 2, 3, 1).contiguous().view(-1).tolist(),
    }, f, indent=1)
    f.write("\n")
