#!/usr/bin/env python3
"""Writes the PyTorch fixture of layercheck's TestTorchDropout (model Drop
in models.go).

Run from this directory with Debian's python3 and python3-torch:
/usr/bin/python3 make.py. It reads masks.json, the documented masks
(rt.DropoutMask of the mask's identity objective.dropout#1/mask, seed 5,
steps 0 to 2, p = 0.25: each cell 0 or 1/(1-p)), which
TestTorchDropout writes with -update.

The network, in float64, as PyTorch writes it: dropout with the given
mask (x * mask, what nn.Dropout(0.25) computes with that mask), then
nn.Linear(8, 3), then F.cross_entropy with class indices; 3 SGD steps
(lr 0.1), the k-th with the k-th mask. Then eval mode: no dropout.

Output torchdrop.json: the initial weights, x and y, and per step the
loss and the gradients of the weight and bias; the logits in eval mode
after the steps.
"""
import json

import torch
import torch.nn.functional as F
from torch import nn

masks = json.load(open("masks.json"))
torch.manual_seed(8)
fc = nn.Linear(8, 3).double()
x = torch.randn(5, 8, dtype=torch.float64)
y = torch.tensor([0, 2, 1, 1, 0])
out = {"weight": fc.weight.reshape(-1).tolist(), "bias": fc.bias.tolist(),
       "x": x.reshape(-1).tolist(), "y": y.tolist(), "steps": []}
opt = torch.optim.SGD(fc.parameters(), lr=0.1)
for m in masks["masks"]:
    mask = torch.tensor(m, dtype=torch.float64).reshape(5, 8)
    opt.zero_grad()
    loss = F.cross_entropy(fc(x * mask), y)
    loss.backward()
    out["steps"].append({"loss": float(loss), "weight_grad": fc.weight.grad.reshape(-1).tolist(),
                         "bias_grad": fc.bias.grad.tolist()})
    opt.step()
out["eval_logits"] = fc(x).detach().reshape(-1).tolist()
json.dump(out, open("torchdrop.json", "w"), indent=1)
