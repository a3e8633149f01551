#!/usr/bin/env python3
"""Writes the PyTorch fixture of layercheck's TestTorchBatchNorm (model
BN in models.go).

Run from this directory with Debian's python3 and python3-torch:
/usr/bin/python3 make.py.

nn.BatchNorm2d(3) in float64 (momentum 0.1, eps 1e-5) with random gamma
and beta, trained for 3 steps of SGD (lr 0.1) on the loss sum(bn(x) * r)
for batches x, r of shape [4, 3, 5, 2] (N, C, H, W), then evaluated on
another batch in eval mode. The fixture stores every tensor in the
channels-last order of the ocannlgen model ([4][5][2][3]: N, H, W, C).

Outputs torchbn.safetensors (the state_dict after training, the names
prefixed bn1.) and torchbn.json: gamma and beta before training; per step x, r, the
loss and the gradients of gamma and beta; after the steps gamma, beta,
running_mean, running_var and num_batches_tracked; the eval batch and
bn's output on it.
"""
import json
import struct

import torch
from torch import nn

torch.manual_seed(5)
bn = nn.BatchNorm2d(3).double()
with torch.no_grad():
    bn.weight.copy_(torch.rand(3, dtype=torch.float64) + 0.5)
    bn.bias.copy_(torch.randn(3, dtype=torch.float64))
opt = torch.optim.SGD(bn.parameters(), lr=0.1)


def cl(t):  # NCHW -> NHWC, flattened
    return [float(v) for v in t.permute(0, 2, 3, 1).reshape(-1)]


out = {"gamma0": bn.weight.tolist(), "beta0": bn.bias.tolist(), "steps": []}
bn.train()
for step in range(3):
    x = torch.randn(4, 3, 5, 2, dtype=torch.float64) * 2 + 1
    r = torch.randn(4, 3, 5, 2, dtype=torch.float64)
    opt.zero_grad()
    loss = (bn(x) * r).sum()
    loss.backward()
    out["steps"].append({"x": cl(x), "r": cl(r), "loss": float(loss),
                         "gamma_grad": bn.weight.grad.tolist(), "beta_grad": bn.bias.grad.tolist()})
    opt.step()
out["gamma"] = bn.weight.tolist()
out["beta"] = bn.bias.tolist()
out["running_mean"] = bn.running_mean.tolist()
out["running_var"] = bn.running_var.tolist()
out["num_batches_tracked"] = int(bn.num_batches_tracked)
bn.eval()
xe = torch.randn(4, 3, 5, 2, dtype=torch.float64)
out["eval_x"] = cl(xe)
out["eval_y"] = cl(bn(xe).detach())
json.dump(out, open("torchbn.json", "w"), indent=1)

# The state_dict after training as safetensors (F64, num_batches_tracked
# I64), for TestTorchBatchNormSafetensors.
header = {"__metadata__": {"format": "pt"}}
blobs = []
offset = 0
for name, t in bn.state_dict().items():
    data = t.detach().contiguous().view(-1).tolist()
    if t.dtype == torch.int64:
        blob, dt = struct.pack("<%dq" % len(data), *data), "I64"
    else:
        blob, dt = struct.pack("<%dd" % len(data), *data), "F64"
    header["bn1." + name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open("torchbn.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    for b in blobs:
        f.write(b)
