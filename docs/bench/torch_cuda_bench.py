#!/usr/bin/env python3
"""Reference timings on a GPU for docs/benchmarks.md ("CUDA").

1. cuBLAS float32 GEMM at 4096^3 through PyTorch, TF32 disabled (compare
   with BenchmarkGPUGEMM's GFLOP/s).
2. The attention demo's training step (examples/attention: a one-block
   transformer reversing 8-token sequences, width 32, 4 heads of 8, MLP 64,
   post-norm, cross-entropy averaged over batch and positions, SGD lr 0.1
   momentum 0.9 Nesterov) in PyTorch eager on the same network, at the
   batch given (compare with BenchmarkGPUTrainStep/attention at the same
   batch: the demo declares 32; for 256, change `tokens : 32, 8 | 10` and
   `targets : 32, 8 | 10` in examples/attention/model.go to 256 and
   regenerate before recording the cases).

Usage: python3 torch_cuda_bench.py [--batch 32] [--iters 50]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def bench_gemm(n=4096, iters=20):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        a @ b
    end.record()
    torch.cuda.synchronize()
    sec = start.elapsed_time(end) / 1e3 / iters
    print(f"cuBLAS sgemm {n}^3 (TF32 off): {sec*1e3:.3f} ms, {2*n**3/sec/1e9:.0f} GFLOP/s")


class Reverser(nn.Module):
    def __init__(self, d=32, vocab=10, ff=64, heads=4, dk=8, seq=8):
        super().__init__()
        self.emb = nn.Linear(vocab, d, bias=False)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.1)
        self.wq = nn.Linear(d, heads * dk, bias=False)
        self.wk = nn.Linear(d, heads * dk, bias=False)
        self.wv = nn.Linear(d, heads * dk, bias=False)
        self.wo = nn.Linear(heads * dk, d, bias=False)
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.out = nn.Linear(d, vocab)
        self.heads, self.dk = heads, dk

    def forward(self, x):  # x: B, T, vocab (one-hot)
        B, T, _ = x.shape
        h = self.emb(x) + self.pos
        q = self.wq(h).view(B, T, self.heads, self.dk).transpose(1, 2)
        k = self.wk(h).view(B, T, self.heads, self.dk).transpose(1, 2)
        v = self.wv(h).view(B, T, self.heads, self.dk).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2) / self.dk ** 0.5, dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(B, T, -1)
        x1 = self.ln1(h + self.wo(ctx))
        x2 = self.ln2(x1 + self.ff2(F.relu(self.ff1(x1))))
        return self.out(x2)


def bench_attention(batch, iters):
    torch.backends.cuda.matmul.allow_tf32 = False
    model = Reverser().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    tokens = torch.randint(0, 10, (batch, 8), device="cuda")
    x = F.one_hot(tokens, 10).float()
    y = tokens.flip(1)
    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, 10), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        step().item()  # the generated TrainStep also returns each loss to the host
    torch.cuda.synchronize()
    sec = (time.perf_counter() - t0) / iters
    print(f"PyTorch eager attention train step, batch {batch}: {sec*1e3:.3f} ms")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()
    print(torch.cuda.get_device_name(0), "torch", torch.__version__)
    bench_gemm()
    bench_attention(args.batch, args.iters)
