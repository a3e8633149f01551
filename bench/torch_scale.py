#!/usr/bin/python3
"""The PyTorch twins of the scale benchmarks (bench/models/scale.go,
bench/scale.sh, docs/benchmarks.md "Scale benchmarks"): the same two
networks as the generated GPT and ResNet20, timed per training step
(zero_grad, forward, loss, backward, optimizer step) on random data, in
float32 or with the forward and the loss under
torch.autocast("cpu", dtype=torch.bfloat16) (the parameters, gradients and
optimizer stay float32, as in mixed-precision training).

Usage: /usr/bin/python3 bench/torch_scale.py MODEL THREADS DTYPE [WARMUP] [STEPS]
  MODEL gpt or resnet; THREADS for torch.set_num_threads; DTYPE f32 or bf16.

Prints one line

  result impl=torch model=gpt dtype=f32 threads=1 steps=5 wall_ms=... cpu_ms=... losses=... walls=... cpus=...

with the median wall time and process CPU time (time.process_time, all
threads) per step over STEPS timed steps after WARMUP untimed ones, whose
losses must be finite and decrease (as bench/scale's check).

The networks (the same contractions as the generated code, so the FLOP
counts of bench/scale/flops.go apply):

- gpt: token ids (8 x 128, int64) looked up in a 256 x 384
  nn.Embedding, plus a learned 128 x 384 positional embedding;
  6 pre-norm blocks: x + Wo(causal attention(LN(x))) with 6 heads of 64,
  q/k/v/o projections without bias, scores / 8, the mask applied as
  where(mask, scores, -1e9) (masked_fill), softmax over the keys; then
  x + W2 gelu(W1 LN(x) + b1) + b2 with 1536 hidden units (GELU:
  PyTorch's default, erf); a final layer
  norm and a linear head 384 -> 256 with bias; cross-entropy against the
  next token, averaged over the 1024 positions; AdamW lr 3e-4 (weight
  decay 0.01, PyTorch's default and ocannlgen's). No dropout, no weight
  tying.
- resnet: batch 32 of 3 x 32 x 32 images (NCHW, PyTorch's default;
  the generated code is NHWC); a 3x3 convolution to 16 channels and ReLU;
  3 stages of 3 basic blocks (relu(x + conv(relu(conv(x))))) with 16, 32
  and 64 channels, the first block of stages 2 and 3 with a stride-2 3x3
  convolution and a stride-2 1x1 projection shortcut; every convolution
  with a bias, padding 1 for 3x3; mean over h, w; linear 64 -> 10;
  cross-entropy; SGD lr 0.05, momentum 0.9.
"""
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d=384, heads=6, ff=1536):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x, mask):
        b, t, d = x.shape
        h = self.ln1(x)
        q = self.q(h).view(b, t, self.heads, -1).transpose(1, 2)
        k = self.k(h).view(b, t, self.heads, -1).transpose(1, 2)
        v = self.v(h).view(b, t, self.heads, -1).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        att = torch.softmax(att.masked_fill(~mask, -1e9), dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(ctx)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, d=384, ctx=128, vocab=256, blocks=6):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d) for _ in range(blocks))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, x, mask):
        h = self.emb(x) + self.pos
        for blk in self.blocks:
            h = blk(h, mask)
        return self.head(self.ln(h))


def gpt():
    torch.manual_seed(0)
    net = GPT()
    opt = torch.optim.AdamW(net.parameters(), lr=3e-4, weight_decay=0.01)
    seq = torch.randint(0, 256, (8, 129))
    x = seq[:, :-1]
    y = seq[:, 1:].reshape(-1)
    mask = torch.tril(torch.ones(128, 128, dtype=torch.bool))

    def loss():
        return F.cross_entropy(net(x, mask).reshape(-1, 256), y)

    return net, opt, loss


class Basic(nn.Module):
    def __init__(self, ic, oc, stride):
        super().__init__()
        self.c1 = nn.Conv2d(ic, oc, 3, stride=stride, padding=1)
        self.c2 = nn.Conv2d(oc, oc, 3, padding=1)
        self.proj = nn.Conv2d(ic, oc, 1, stride=stride) if stride != 1 else None

    def forward(self, x):
        sc = x if self.proj is None else self.proj(x)
        return F.relu(sc + self.c2(F.relu(self.c1(x))))


class ResNet20(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        layers = []
        ic = 16
        for oc in (16, 32, 64):
            for i in range(3):
                layers.append(Basic(ic, oc, 2 if (i == 0 and oc != 16) else 1))
                ic = oc
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        h = self.layers(F.relu(self.stem(x)))
        return self.head(h.mean(dim=(2, 3)))


def resnet():
    torch.manual_seed(0)
    net = ResNet20()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(32, 3, 32, 32)
    y = torch.randint(0, 10, (32,))

    def loss():
        return F.cross_entropy(net(x), y)

    return net, opt, loss


def main():
    name, threads, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    torch.set_num_threads(threads)
    net, opt, loss = {"gpt": gpt, "resnet": resnet}[name]()
    if dtype not in ("f32", "bf16"):
        sys.exit("torch_scale.py: DTYPE is f32 or bf16")

    def step():
        opt.zero_grad(set_to_none=False)
        if dtype == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                l = loss()
        else:
            l = loss()
        l.backward()
        opt.step()
        return l.item()

    losses = [step() for _ in range(warmup)]
    if not all(math.isfinite(l) for l in losses) or not losses[-1] < losses[0]:
        sys.exit("torch_scale.py: %s %s: losses not finite and decreasing: %s" % (name, dtype, losses))
    walls, cpus = [], []
    for _ in range(steps):
        c0, w0 = time.process_time(), time.perf_counter()
        step()
        walls.append((time.perf_counter() - w0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    print("result impl=torch model=%s dtype=%s threads=%d steps=%d wall_ms=%.2f cpu_ms=%.2f losses=%s walls=%s cpus=%s # torch %s, %d threads"
          % (name, dtype, threads, steps, statistics.median(walls), statistics.median(cpus),
             ",".join("%.4f" % l for l in losses), ",".join("%.1f" % w for w in walls),
             ",".join("%.1f" % c for c in cpus), torch.__version__, torch.get_num_threads()))


if __name__ == "__main__":
    main()
