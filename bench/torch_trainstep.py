#!/usr/bin/python3
"""Times one training step (forward, loss, backward, SGD update) of the
three demo models of examples/ in PyTorch on the CPU, at one thread, with
the same networks, batch sizes, losses and optimizers as the generated
TrainStep (examples/moons, examples/cnn, examples/attention; see their
model.go). Prints, per model, the best and median microseconds per step
over several turns, by process CPU time and by wall time.

Usage: /usr/bin/python3 bench/torch_trainstep.py [turns] [threads] [batch]
(threads: torch.set_num_threads, default 1; batch: the CNN's and the
attention model's training batch, default 32 as in the demos; the
thread-scaling comparison of docs/benchmarks.md uses 2 and 256.)
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
BATCH = int(sys.argv[3]) if len(sys.argv) > 3 else 32
torch.set_num_threads(THREADS)
torch.manual_seed(0)


class Moons(nn.Module):
    # mlp2[16, 16]: 2 -> 16 -> 16 -> 1, ReLU; hinge loss.
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(2, 16), nn.Linear(16, 16), nn.Linear(16, 1)

    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))


def moons():
    net = Moons()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x = torch.randn(32, 2)
    y = torch.randint(0, 2, (32, 1)).float() * 2 - 1

    def loss():
        return F.relu(1 - y * net(x)).sum() / 32

    return net, opt, loss


class CNN(nn.Module):
    # conv2d_valid[8] (3x3), ReLU, max_pool 2x2, conv2d[16] (3x3, padded),
    # ReLU, linear[4]; softmax cross-entropy.
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(5 * 5 * 16, 4)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.c1(x)), 2, 2)
        h = F.relu(self.c2(h))
        return self.head(h.flatten(1))


def cnn():
    net = CNN()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(BATCH, 1, 12, 12)
    y = torch.randint(0, 4, (BATCH,))

    def loss():
        return F.cross_entropy(net(x), y)

    return net, opt, loss


class Reverser(nn.Module):
    # One post-norm transformer block: embedding 10 -> 32 (no bias) plus a
    # learned positional embedding (8 x 32), 4-head self-attention (d_k =
    # d_v = 8, projections without bias), residual + layer norm, a ReLU
    # MLP 32 -> 64 -> 32, residual + layer norm, linear read-out to 10.
    def __init__(self, d=32, vocab=10, ff=64, heads=4):
        super().__init__()
        self.emb = nn.Linear(vocab, d, bias=False)
        self.pos = nn.Parameter(torch.zeros(8, d))
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.out = nn.Linear(d, vocab)
        self.heads = heads

    def forward(self, x):
        b, t, _ = x.shape
        h = self.emb(x) + self.pos
        q = self.q(h).view(b, t, self.heads, -1).transpose(1, 2)
        k = self.k(h).view(b, t, self.heads, -1).transpose(1, 2)
        v = self.v(h).view(b, t, self.heads, -1).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5), dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(b, t, -1)
        x1 = self.ln1(h + self.o(ctx))
        x2 = self.ln2(x1 + self.ff2(F.relu(self.ff1(x1))))
        return self.out(x2)


def attention():
    net = Reverser()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    tok = torch.randint(0, 10, (BATCH, 8))
    x = F.one_hot(tok, 10).float()
    y = tok.flip(1)

    def loss():
        return F.cross_entropy(net(x).reshape(-1, 10), y.reshape(-1))

    return net, opt, loss


def step(opt, loss):
    opt.zero_grad(set_to_none=False)
    l = loss()
    l.backward()
    opt.step()


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print("torch %s, threads %d, %s" % (torch.__version__, torch.get_num_threads(), torch.__config__.parallel_info().splitlines()[0]))
    models = {"moons": moons(), "cnn": cnn(), "attention": attention()}
    res = {name: ([], []) for name in models}
    for name, (net, opt, loss) in models.items():
        for _ in range(20):
            step(opt, loss)
    iters = {}
    for name, (net, opt, loss) in models.items():
        t = time.perf_counter()
        n = 0
        while time.perf_counter() - t < 0.1:
            step(opt, loss)
            n += 1
        iters[name] = max(1, n)
    for _ in range(turns):
        for name, (net, opt, loss) in models.items():
            n = iters[name]
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(n):
                step(opt, loss)
            res[name][0].append((time.process_time() - c0) / n * 1e6)
            res[name][1].append((time.perf_counter() - w0) / n * 1e6)
    print("| model | PyTorch best wall µs/step | median wall µs/step | best CPU µs/step | median CPU µs/step |")
    print("|---|---:|---:|---:|---:|")
    for name, (cpu, wall) in res.items():
        cpu, wall = sorted(cpu), sorted(wall)
        print("| %s | %.1f | %.1f | %.1f | %.1f |" % (name, wall[0], wall[len(wall) // 2], cpu[0], cpu[len(cpu) // 2]))


if __name__ == "__main__":
    main()
