#!/usr/bin/env python3
"""cuBLAS GEMM at 4096^3 through PyTorch at the three precisions of
BenchmarkGPUGEMM (emit/cuda): f32 (TF32 off), tf32 (float32 operands,
TF32 tensor cores: allow_tf32) and bf16 (bfloat16 operands; cuBLAS
accumulates in float32). Compare each line's GFLOP/s with
BenchmarkGPUGEMM/f32, /tf32 and /bf16 (issue 29: at least 0.9x for f32,
0.8x for tf32 and bf16). Not run yet: no GPU has been lent to a session
since the tuned and tensor-core kernels landed.

Usage: python3 torch_gemm_precisions.py [--n 4096] [--iters 20]
"""
import argparse

import torch


def bench(n, iters, prec):
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"
    dtype = torch.bfloat16 if prec == "bf16" else torch.float32
    a = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
    b = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
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
    print(f"cuBLAS {n}^3 {prec}: {sec*1e3:.3f} ms, {2*n**3/sec/1e9:.0f} GFLOP/s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for prec in ("f32", "tf32", "bf16"):
        bench(args.n, args.iters, prec)
