#!/usr/bin/env python3
"""Writes torchinit.json for initstats_test.go (model InitStats): the
statistics of PyTorch's default initialization of nn.Linear(512, 256) and
nn.Conv2d(32, 64, 3), over 20 seeds: for the weight and the bias, the
mean of the per-seed standard deviation and the largest absolute value;
of nn.Embedding(1000, 64), the mean over 20 seeds of the weight's
standard deviation and mean; and the constant initial values of
nn.BatchNorm2d (weight, bias, running_mean, running_var,
num_batches_tracked) and nn.LayerNorm (weight, bias).

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
wstd, wmean = [], []
for seed in range(20):
    torch.manual_seed(seed)
    w = nn.Embedding(1000, 64).double().weight
    wstd.append(w.std().item())
    wmean.append(w.mean().item())
out["embedding"] = {"weight_std": sum(wstd) / len(wstd), "weight_mean": sum(wmean) / len(wmean)}
bn, ln = nn.BatchNorm2d(64), nn.LayerNorm(512)
out["batchnorm"] = {"weight": bn.weight[0].item(), "bias": bn.bias[0].item(), "running_mean": bn.running_mean[0].item(),
                    "running_var": bn.running_var[0].item(), "num_batches_tracked": int(bn.num_batches_tracked)}
out["layernorm"] = {"weight": ln.weight[0].item(), "bias": ln.bias[0].item()}
with open("torchinit.json", "w") as f:
    json.dump(out, f, indent=1)
