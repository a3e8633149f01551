#!/usr/bin/env python3
"""Writes the PyTorch twin of zoo's ResNetBN for resnetbn_test.go.

Run from this directory with Debian's Python: /usr/bin/python3 make.py
(needs torch). Output: resnetbn.json.

The model is zoo.ResNetBN (models.go) in float64: conv (2 -> 4 channels,
3x3, padding 1, bias), BatchNorm2d, ReLU, then a basic block: conv A,
BatchNorm2d A, ReLU, conv B, BatchNorm2d B, plus the block's input, ReLU;
the mean over the 4x4 positions, a Linear(4, 3), and F.cross_entropy
with class indices. SGD with lr 0.1 and momentum 0.9 trains it for 3
steps on 3 batches of 4 images (train mode), then it runs in eval mode
on a fourth batch.

Every tensor is written flattened in ocannlgen's memory order: images
[B][4][4][2] (NHWC), conv kernels [out][kh][kw][in]. Keys of "params",
"grads" and "after" are the generated Params field names. Inside the
basic block the first application (conv A, BN A) is the model's
conv2d#2 and batch_norm#2, the outer one (conv B, BN B) #1.
"""
import json

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(31)
dt = torch.float64
B = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conva = nn.Conv2d(4, 4, 3, padding=1)
        self.bna = nn.BatchNorm2d(4)
        self.convb = nn.Conv2d(4, 4, 3, padding=1)
        self.bnb = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h0 = F.relu(self.bn(self.conv(x)))
        h1 = F.relu(h0 + self.bnb(self.convb(F.relu(self.bna(self.conva(h0))))))
        return self.fc(h1.mean(dim=(2, 3)))


net = Net().double()
with torch.no_grad():
    for bn in (net.bn, net.bna, net.bnb):
        bn.weight.copy_(torch.rand(4, dtype=dt) + 0.5)
        bn.bias.copy_(torch.randn(4, dtype=dt) * 0.3)

fields = {
    "NetConv2d1Kernel": net.conv.weight, "NetConv2d1Bias": net.conv.bias,
    "NetBatchNorm1Gamma": net.bn.weight, "NetBatchNorm1Beta": net.bn.bias,
    "NetBasic1Conv2d2Kernel": net.conva.weight, "NetBasic1Conv2d2Bias": net.conva.bias,
    "NetBasic1BatchNorm2Gamma": net.bna.weight, "NetBasic1BatchNorm2Beta": net.bna.bias,
    "NetBasic1Conv2d1Kernel": net.convb.weight, "NetBasic1Conv2d1Bias": net.convb.bias,
    "NetBasic1BatchNorm1Gamma": net.bnb.weight, "NetBasic1BatchNorm1Beta": net.bnb.bias,
    "NetLinear1W": net.fc.weight, "NetLinear1B": net.fc.bias,
}
buffers = {
    "NetBatchNorm1": net.bn, "NetBasic1BatchNorm2": net.bna, "NetBasic1BatchNorm1": net.bnb,
}


def ours(t):
    """A tensor in ocannlgen's memory order, flattened."""
    if t.dim() == 4:
        t = t.permute(0, 2, 3, 1)
    return [float(v) for v in t.detach().reshape(-1)]


out = {"torch": torch.__version__, "params": {k: ours(v) for k, v in fields.items()}, "steps": []}
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
net.train()
for step in range(3):
    x = torch.randn(B, 2, 4, 4, dtype=dt) + 0.5
    y = torch.tensor([(step + b) % 3 for b in range(B)])
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    rec = {"images": ours(x), "labels": y.tolist(), "loss": float(loss)}
    if step == 0:
        rec["grads"] = {k: ours(v.grad) for k, v in fields.items()}
    out["steps"].append(rec)
    opt.step()
after = {k: ours(v) for k, v in fields.items()}
for k, bn in buffers.items():
    after[k + "RunningMean"] = ours(bn.running_mean)
    after[k + "RunningVar"] = ours(bn.running_var)
    after[k + "NumBatchesTracked"] = [float(bn.num_batches_tracked)]
out["after"] = after
net.eval()
xe = torch.randn(B, 2, 4, 4, dtype=dt)
out["eval_images"] = ours(xe)
out["eval_logits"] = ours(net(xe))
json.dump(out, open("resnetbn.json", "w"), indent=1)
