#!/usr/bin/python3
"""The PyTorch peer of the data-parallel benchmark (bench/ddp.sh,
docs/benchmarks.md "Data-parallel training"): the GPT of
bench/torch_scale.py (imported) and bench/models.CNN's twin (batch 256,
the CNN of bench/torch_trainstep.py) trained with
torch.nn.parallel.DistributedDataParallel on the gloo backend, RANKS
processes on this machine, or without DDP in one process (RANKS 1).

Usage: /usr/bin/python3 bench/torch_ddp.py MODEL RANKS THREADS [WARMUP] [STEPS]
  MODEL gpt or cnn; RANKS 1 (one process, no process group) or more
  (torch.multiprocessing.spawn, init_process_group("gloo") over TCP on
  127.0.0.1); THREADS for torch.set_num_threads in every process.

Weak scaling, as bench/scale -dist: every rank trains on a batch of the
model's full size (GPT 8 sequences of 128 tokens, CNN 256 images), its
own random data (rank 0's drawn as in one process), so RANKS ranks
process RANKS times the examples of one process per step. A step is
zero_grad, forward, loss, backward (DDP all-reduces the gradients in
buckets, overlapped with the backward), optimizer step: AdamW lr 3e-4
(weight decay 0.01) for the GPT, SGD lr 0.05 momentum 0.9 for the CNN.
The WARMUP untimed steps' mean loss over the ranks must be finite and
decrease; then the ranks meet at a barrier and time STEPS steps one by
one (wall time, and process CPU time, all threads: gloo's included). Rank
r runs on CPU r (os.sched_setaffinity, like mpirun --bind-to core;
TORCH_DDP_BIND=none leaves the processes unpinned). At
the end the ranks check that their parameters are identical (DDP keeps
them so). Rank 0 prints one line

  result impl=torch mode=ddp ranks=2 model=gpt dtype=f32 threads=1 steps=5 wall_ms=... cpu_ms=... samples=16 samples_per_s=... rank_walls=... rank_cpus=... params_identical=true losses=... walls=... cpus=...

(mode=single for RANKS 1), wall_ms and cpu_ms rank 0's medians.
"""
import math
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

import torch_scale


class CNN(nn.Module):
    """bench/models.CNN (examples/cnn's network): conv2d_valid[8] (3x3),
    ReLU, 2x2 max pooling, conv2d[16] (3x3, padded), ReLU, linear[4];
    softmax cross-entropy. The same as bench/torch_trainstep.py's."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(5 * 5 * 16, 4)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.c1(x)), 2, 2)
        h = F.relu(self.c2(h))
        return self.head(h.flatten(1))


def build(name, rank):
    """The model (the same initial parameters on every rank; DDP
    broadcasts rank 0's anyway), its optimizer constructor, and the
    rank's fixed batch as a loss function of the (wrapped) network."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1000 + rank)
    if name == "gpt":
        net = torch_scale.GPT()
        seq = torch.randint(0, 256, (8, 129), generator=g)
        x = seq[:, :-1]
        y = seq[:, 1:].reshape(-1)
        mask = torch.tril(torch.ones(128, 128, dtype=torch.bool))

        def opt(params):
            return torch.optim.AdamW(params, lr=3e-4, weight_decay=0.01)

        def loss(m):
            return F.cross_entropy(m(x, mask).reshape(-1, 256), y)

        return net, opt, loss, 8
    if name == "cnn":
        net = CNN()
        x = torch.rand(256, 1, 12, 12, generator=g)
        y = torch.randint(0, 4, (256,), generator=g)

        def opt(params):
            return torch.optim.SGD(params, lr=0.05, momentum=0.9)

        def loss(m):
            return F.cross_entropy(m(x), y)

        return net, opt, loss, 256
    sys.exit("torch_ddp.py: MODEL is gpt or cnn")


def run(rank, name, ranks, threads, warmup, steps, addr):
    torch.set_num_threads(threads)
    if ranks > 1 and os.environ.get("TORCH_DDP_BIND", "core") == "core":
        # Rank r on CPU r (modulo the CPUs), gloo's threads with it: as
        # mpirun --bind-to core places bench/scale's ranks.
        os.sched_setaffinity(0, {rank % os.cpu_count()})
    if ranks > 1:
        dist.init_process_group("gloo", init_method=addr, rank=rank, world_size=ranks)
    net, mkopt, loss, batch = build(name, rank)
    model = nn.parallel.DistributedDataParallel(net) if ranks > 1 else net
    opt = mkopt(model.parameters())

    def step():
        opt.zero_grad(set_to_none=False)
        l = loss(model)
        l.backward()
        opt.step()
        return l.item()

    losses = torch.tensor([step() for _ in range(warmup)], dtype=torch.float64)
    if ranks > 1:
        dist.all_reduce(losses)
    losses = (losses / ranks).tolist()
    if not all(math.isfinite(l) for l in losses) or not losses[-1] < losses[0]:
        sys.exit("torch_ddp.py: %s: mean losses not finite and decreasing: %s" % (name, losses))
    if ranks > 1:
        dist.barrier()
    walls, cpus = [], []
    for _ in range(steps):
        c0, w0 = time.process_time(), time.perf_counter()
        step()
        walls.append((time.perf_counter() - w0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    med = torch.zeros(2 * ranks, dtype=torch.float64)
    med[2 * rank], med[2 * rank + 1] = statistics.median(walls), statistics.median(cpus)
    same = True
    if ranks > 1:
        dist.all_reduce(med)
        flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
        root = flat.clone()
        dist.broadcast(root, 0)
        differ = torch.tensor([0.0 if torch.equal(flat, root) else 1.0])
        dist.all_reduce(differ)
        same = differ.item() == 0
    if rank == 0:
        w = statistics.median(walls)
        samples = ranks * batch
        print("result impl=torch mode=%s ranks=%d model=%s dtype=f32 threads=%d steps=%d wall_ms=%.2f cpu_ms=%.2f samples=%d samples_per_s=%.1f rank_walls=%s rank_cpus=%s params_identical=%s losses=%s walls=%s cpus=%s # torch %s, %d threads, gloo"
              % ("ddp" if ranks > 1 else "single", ranks, name, threads, steps, w, statistics.median(cpus),
                 samples, samples / w * 1e3,
                 ",".join("%.1f" % med[2 * r] for r in range(ranks)),
                 ",".join("%.1f" % med[2 * r + 1] for r in range(ranks)),
                 "true" if same else "false",
                 ",".join("%.4f" % l for l in losses), ",".join("%.3f" % x for x in walls),
                 ",".join("%.3f" % x for x in cpus), torch.__version__, torch.get_num_threads()), flush=True)
    if ranks > 1:
        dist.barrier()
        dist.destroy_process_group()
    if not same:
        sys.exit("torch_ddp.py: %s: the ranks' parameters differ" % name)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    name, ranks, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    if ranks == 1:
        run(0, name, 1, threads, warmup, steps, None)
        return
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(run, args=(name, ranks, threads, warmup, steps, "tcp://127.0.0.1:%d" % port), nprocs=ranks)


if __name__ == "__main__":
    main()
