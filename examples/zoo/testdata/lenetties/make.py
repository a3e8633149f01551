#!/usr/bin/env python3
"""Writes the PyTorch twin of zoo's LeNet for ties_test.go (issue 27).

Run from this directory with Debian's Python: /usr/bin/python3 make.py
(needs torch). Output: lenetties.json.

The model is zoo.LeNet (models.go) in float64: conv2d_valid[4] (3x3),
relu, 2x2 max pool, conv2d_valid[6], relu, 2x2 max pool, dense[16],
dense[12], linear[3], cross-entropy over one-hot labels, SGD with lr 0.2
and momentum 0.9. The images are a zero background with one small patch
of pixels, and the first convolution's biases are positive, so that the
first layer's output is the bias on most of the image and most 2x2 pool
windows hold four equal values: the case where routing the gradient to
every tied cell (the former rule) makes the conv1 bias gradient far too
large, and where PyTorch's max_pool2d gives it to the first maximal cell
of the window (row-major).

Every tensor is written flattened in ocannlgen's memory order: images
[B][14][14][1] (NHWC), conv kernels [out][kh][kw][in], dense weights
[out][in...] with the pooled input flattened as (h, w, c). PyTorch runs
the same network on permuted views, so its gradients come out in that
order too. Keys of "params" and "grads" are the generated Params field
names.

Also written: "tie_grads", the gradients under the all-ties rule (every
tied cell of a window receives the window's full gradient), computed
with a hand-written pooling backward; the test checks that the fixture
tells the two rules apart.
"""
import json

import torch
import torch.nn.functional as F

torch.manual_seed(27)
dt = torch.float64
B = 4


def u(*shape, lo=-0.5, hi=0.5):
    return (torch.rand(*shape, dtype=dt) * (hi - lo) + lo)


init = {
    "NetConv2dValid1Kernel": u(4, 3, 3, 1),
    "NetConv2dValid1Bias": u(4, lo=0.1, hi=0.3),
    "NetConv2dValid2Kernel": u(6, 3, 3, 4),
    "NetConv2dValid2Bias": u(6, lo=0.0, hi=0.2),
    "NetDense2W": u(16, 2, 2, 6),
    "NetDense2B": u(16, lo=0.0, hi=0.1),
    "NetDense1W": u(12, 16),
    "NetDense1B": u(12, lo=0.0, hi=0.1),
    "NetLinear1W": u(3, 12),
    "NetLinear1B": u(3, lo=-0.1, hi=0.1),
}

images = torch.zeros(B, 14, 14, 1, dtype=dt)
for b in range(B):
    r, c = 2 + 2 * b, 3 + b
    images[b, r:r + 4, c:c + 5, 0] = u(4, 5, lo=0.0, hi=1.0)
labels = torch.zeros(B, 3, dtype=dt)
for b in range(B):
    labels[b, (b * 2) % 3] = 1


class AllTiesPool(torch.autograd.Function):
    """2x2 stride-2 max pool whose backward gives every tied cell the gradient."""

    @staticmethod
    def forward(ctx, x):
        n, ch, h, w = x.shape
        v = x.reshape(n, ch, h // 2, 2, w // 2, 2)
        m = v.amax(dim=(3, 5))
        ctx.save_for_backward(x, m)
        return m

    @staticmethod
    def backward(ctx, g):
        x, m = ctx.saved_tensors
        n, ch, h, w = x.shape
        v = x.reshape(n, ch, h // 2, 2, w // 2, 2)
        mask = (v == m[:, :, :, None, :, None]).to(dt)
        return (mask * g[:, :, :, None, :, None]).reshape(n, ch, h, w)


def loss_of(p, pool):
    x = images.permute(0, 3, 1, 2)
    y = F.relu(F.conv2d(x, p["NetConv2dValid1Kernel"].permute(0, 3, 1, 2), p["NetConv2dValid1Bias"]))
    y = pool(y)
    y = F.relu(F.conv2d(y, p["NetConv2dValid2Kernel"].permute(0, 3, 1, 2), p["NetConv2dValid2Bias"]))
    y = pool(y)
    f = y.permute(0, 2, 3, 1).reshape(B, 24)
    h = F.relu(f @ p["NetDense2W"].reshape(16, 24).T + p["NetDense2B"])
    h = F.relu(h @ p["NetDense1W"].T + p["NetDense1B"])
    logits = h @ p["NetLinear1W"].T + p["NetLinear1B"]
    return -(labels * F.log_softmax(logits, dim=1)).sum() / B


def grads(pool):
    p = {k: v.clone().requires_grad_(True) for k, v in init.items()}
    loss = loss_of(p, pool)
    loss.backward()
    return loss.item(), {k: v.grad.flatten().tolist() for k, v in p.items()}


loss, g = grads(lambda y: F.max_pool2d(y, 2))
_, tie_g = grads(AllTiesPool.apply)

p = {k: v.clone().requires_grad_(True) for k, v in init.items()}
opt = torch.optim.SGD(list(p.values()), lr=0.2, momentum=0.9)
losses = []
for _ in range(3):
    opt.zero_grad()
    lo = loss_of(p, lambda y: F.max_pool2d(y, 2))
    lo.backward()
    losses.append(lo.item())
    opt.step()

out = {
    "torch": torch.__version__,
    "images": images.flatten().tolist(),
    "labels": labels.flatten().tolist(),
    "params": {k: v.flatten().tolist() for k, v in init.items()},
    "loss": loss,
    "grads": g,
    "tie_grads": tie_g,
    "step_losses": losses,
    "params_after_3_steps": {k: v.detach().flatten().tolist() for k, v in p.items()},
}
with open("lenetties.json", "w") as f:
    json.dump(out, f, indent=None, separators=(",", ":"))
    f.write("\n")
