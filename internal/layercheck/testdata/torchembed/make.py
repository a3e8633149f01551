#!/usr/bin/env python3
"""Writes the PyTorch fixture of layercheck's TestTorchEmbedCE (model
EmbedCE in models.go).

Run from this directory with Debian's python3 and python3-torch:
/usr/bin/python3 make.py.

The network, in float64, as PyTorch writes it: emb = nn.Embedding(10, 5),
head = nn.Linear(5, 7); logits = head(emb(ids)) for ids of shape [4, 3];
the loss is F.cross_entropy over the 12 positions with class-index
targets y [4, 3] (the mean). Token 9 never occurs in ids and token 2
occurs four times, so the embedding gradient has a zero row and a row
summing several contributions.

Output torchembed.json: the weights (PyTorch's layouts, flattened:
emb.weight [10][5], head.weight [7][5], head.bias [7]), ids, y, the loss
and each parameter's gradient (same layouts).
"""
import json

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(31)
emb = nn.Embedding(10, 5).double()
head = nn.Linear(5, 7).double()
ids = torch.tensor([[2, 0, 7], [2, 5, 1], [3, 2, 8], [6, 2, 4]])
y = torch.tensor([[0, 6, 3], [1, 1, 5], [2, 4, 0], [6, 3, 2]])
logits = head(emb(ids))
loss = F.cross_entropy(logits.reshape(-1, 7), y.reshape(-1))
loss.backward()


def flat(t):
    return [float(v) for v in t.detach().reshape(-1)]


json.dump({
    "emb_weight": flat(emb.weight), "head_weight": flat(head.weight), "head_bias": flat(head.bias),
    "ids": ids.reshape(-1).tolist(), "y": y.reshape(-1).tolist(),
    "loss": float(loss),
    "emb_grad": flat(emb.weight.grad), "head_weight_grad": flat(head.weight.grad), "head_bias_grad": flat(head.bias.grad),
}, open("torchembed.json", "w"), indent=1)
