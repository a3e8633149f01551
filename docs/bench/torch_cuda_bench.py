#!/usr/bin/env python3
"""PyTorch eager CUDA reference timings for docs/benchmarks.md ("CUDA (GPU
path)"), issue 29 item 4. Every line it prints that starts with "result"
is one measurement; bench/offline/run.sh (GPUONLY=1) collects them.

1. cuBLAS GEMMs through PyTorch on the shapes of emit/cuda's
   BenchmarkGPUGEMMShapes (gemmShapes): 4096^3, and the scale decoder's
   MLP layer 384 -> 1536 over its 1024 tokens (bench/models.GPT, weights
   stored [out][in]) in its three layouts: forward x @ w.T
   (1024x1536, K 384), input gradient dy @ w (1024x384, K 1536), weight
   gradient dy.T @ x (1536x384, K 1024). Each at three precisions: f32
   (float32, TF32 off), tf32 (float32 operands, allow_tf32) and bf16
   (bfloat16 operands; cuBLAS accumulates in float32).
2. Training steps (zero_grad, forward, loss, backward, optimizer step, and
   the loss copied to the host as the generated TrainStep returns it) of
   the networks of bench/models, on one fixed random batch:
   cnn and attention (examples/cnn and examples/attention at batch 256,
   the networks of bench/torch_trainstep.py), gpt and resnet (the scale
   decoder and ResNet-20 of bench/torch_scale.py), imported from those
   files: put them beside this file or pass --scale-dir. Each in f32 (TF32
   off), tf32 (allow_tf32 for matmuls and cuDNN) and bf16 (the forward and
   the loss under torch.autocast("cuda", dtype=torch.bfloat16); parameters,
   gradients and optimizer float32).

Compare with bench/scale -gpu (result impl=ocannlgen-gpu, float32) and
BenchmarkGPUGEMMShapes (GFLOP/s).

Usage: python3 torch_cuda_bench.py [--iters 20] [--scale-dir DIR] [--only gemm|steps]
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

PRECISIONS = ("f32", "tf32", "bf16")

# name, M, N, K, layout (as emit/cuda's gemmShapes)
SHAPES = (
    ("gemm4096", 4096, 4096, 4096, "nn"),
    ("decoder_fwd", 1024, 1536, 384, "nt"),
    ("decoder_dx", 1024, 384, 1536, "nn"),
    ("decoder_dw", 1536, 384, 1024, "tn"),
)


def set_precision(prec):
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"


def bench_gemm(name, m, n, k, layout, prec, iters):
    set_precision(prec)
    dtype = torch.bfloat16 if prec == "bf16" else torch.float32
    g = torch.Generator(device="cuda").manual_seed(1)

    def rand(r, c):
        return (torch.rand(r, c, device="cuda", generator=g) * 2 - 1).to(dtype)

    # The operands as stored: the product reads them transposed where the
    # layout says so (cuBLAS's transpose flags, no copies).
    if layout == "nn":
        a, b = rand(m, k), rand(k, n)
        f = lambda: a @ b
    elif layout == "nt":
        a, b = rand(m, k), rand(n, k)
        f = lambda: a @ b.T
    else:  # "tn"
        a, b = rand(k, m), rand(k, n)
        f = lambda: a.T @ b
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        f()
    end.record()
    torch.cuda.synchronize()
    sec = start.elapsed_time(end) / 1e3 / iters
    print(f"result impl=torch what=gemm shape={name} m={m} n={n} k={k} prec={prec} ms={sec*1e3:.4f} gflops={2*m*n*k/sec/1e9:.0f}", flush=True)


def make_model(name, scale_dir):
    """The network, its optimizer and its loss on a fixed batch, on the GPU."""
    torch.manual_seed(0)
    dev = "cuda"
    sys.path.insert(0, scale_dir)
    # bench/torch_trainstep.py: the CPU twins of bench/models.CNN
    # (examples/cnn) and bench/models.Reverser (examples/attention)
    from torch_trainstep import CNN, Reverser

    if name == "cnn":
        net = CNN().to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        x = torch.rand(256, 1, 12, 12, device=dev)
        y = torch.randint(0, 4, (256,), device=dev)
        return net, opt, lambda: F.cross_entropy(net(x), y)
    if name == "attention":
        net = Reverser().to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        tok = torch.randint(0, 10, (256, 8), device=dev)
        x, y = F.one_hot(tok, 10).float(), tok.flip(1)
        return net, opt, lambda: F.cross_entropy(net(x).reshape(-1, 10), y.reshape(-1))
    import torch_scale  # bench/torch_scale.py: GPT, ResNet20

    if name == "gpt":
        net = torch_scale.GPT().to(dev)
        opt = torch.optim.AdamW(net.parameters(), lr=3e-4, weight_decay=0.01)
        seq = torch.randint(0, 256, (8, 129), device=dev)
        x = seq[:, :-1]
        y = seq[:, 1:].reshape(-1)
        mask = torch.tril(torch.ones(128, 128, dtype=torch.bool, device=dev))
        return net, opt, lambda: F.cross_entropy(net(x, mask).reshape(-1, 256), y)
    if name == "resnet":
        net = torch_scale.ResNet20().to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        x = torch.randn(32, 3, 32, 32, device=dev)
        y = torch.randint(0, 10, (32,), device=dev)
        return net, opt, lambda: F.cross_entropy(net(x), y)
    raise ValueError(name)


def bench_steps(name, prec, iters, scale_dir):
    set_precision(prec)
    net, opt, loss = make_model(name, scale_dir)

    def step():
        opt.zero_grad(set_to_none=False)
        if prec == "bf16":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                l = loss()
        else:
            l = loss()
        l.backward()
        opt.step()
        return l.item()  # the generated TrainStep also returns each loss to the host

    losses = [step() for _ in range(5)]
    if not all(math.isfinite(l) for l in losses) or not losses[-1] < losses[0]:
        print(f"# {name} {prec}: losses not finite and decreasing: {losses}", flush=True)
    torch.cuda.synchronize()
    walls = []
    for _ in range(iters):
        t0 = time.perf_counter()
        step()
        walls.append((time.perf_counter() - t0) * 1e3)
    samples = {"cnn": 256, "attention": 256, "gpt": 8, "resnet": 32}[name]
    w = statistics.median(walls)
    print(f"result impl=torch-cuda what=step model={name} prec={prec} steps={iters} wall_ms={w:.3f} samples_per_s={samples/w*1e3:.1f} "
          f"losses={','.join('%.4f' % l for l in losses)}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--scale-dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", choices=("gemm", "steps"))
    args = ap.parse_args()
    print("#", torch.cuda.get_device_name(0), "torch", torch.__version__, "CUDA", torch.version.cuda, flush=True)
    if args.only != "steps":
        for shape in SHAPES:
            for prec in PRECISIONS:
                bench_gemm(*shape, prec, args.iters)
    if args.only != "gemm":
        for name in ("cnn", "attention", "gpt", "resnet"):
            for prec in PRECISIONS:
                bench_steps(name, prec, args.iters, args.scale_dir)
