#!/usr/bin/env python3
"""Writes torchinit.json for initstats_test.go (model InitStats): the
statistics of PyTorch's default initialization of nn.Linear(512, 256) and
nn.Conv2d(32, 64, 3), over 20 seeds: for the weight and the bias, the
mean of the per-seed standard deviation and the largest absolute value.

Run from this directory with Debian's python3 and python3-torch:
/usr/bin/python3 make.py
"""
import json

import torch
from torch import nn

out = {"torch": torch.__version__}
for name, make in [("linear", lambda: nn.Linear(512, 256)), ("conv", lambda: nn.Conv2d(32, 64, 3))]:
    wstd, bstd, wmax, bmax = [], [], 0.0, 0.0
    for seed in range(20):
        torch.manual_seed(seed)
        m = make().double()
        wstd.append(m.weight.std().item())
        bstd.append(m.bias.std().item())
        wmax = max(wmax, m.weight.abs().max().item())
        bmax = max(bmax, m.bias.abs().max().item())
    out[name] = {"weight_std": sum(wstd) / len(wstd), "bias_std": sum(bstd) / len(bstd), "weight_max": wmax, "bias_max": bmax}
with open("torchinit.json", "w") as f:
    json.dump(out, f, indent=1)
