# make.py writes torch.json: the learning rate torch.optim.lr_scheduler
# gives at each step for the schedules rt.LRSchedule implements, for
# rt's TestLRScheduleTorch. Run with Debian's python3 and python3-torch:
#   /usr/bin/python3 rt/testdata/lrschedule/make.py
import json, os, torch

def sequence(cfg, n):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=cfg["lr"])
    w = cfg.get("warmup", 0)
    kind = cfg["schedule"]
    total = cfg.get("steps", 0) - w
    main = {
        "constant": lambda: torch.optim.lr_scheduler.ConstantLR(opt, factor=1.0, total_iters=0),
        "linear": lambda: torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=cfg["lr_end"] / cfg["lr"], total_iters=total),
        "cosine": lambda: torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total, eta_min=cfg["lr_end"]),
        "step": lambda: torch.optim.lr_scheduler.StepLR(opt, step_size=cfg["step_size"], gamma=cfg["gamma"]),
    }[kind]
    if w > 0:
        warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0 / (w + 1), end_factor=1.0, total_iters=w)
        sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, main()], milestones=[w])
    else:
        sched = main()
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out

cases = [
    dict(schedule="cosine", lr=6e-4, lr_end=6e-5, steps=5000, warmup=100),
    dict(schedule="cosine", lr=0.1, lr_end=0.0, steps=300),
    dict(schedule="linear", lr=0.05, lr_end=0.005, steps=800, warmup=20),
    dict(schedule="linear", lr=0.05, lr_end=0.005, steps=800),
    dict(schedule="step", lr=0.1, step_size=30, gamma=0.1, steps=0),
    dict(schedule="step", lr=0.01, step_size=7, gamma=0.5, warmup=10, steps=0),
    dict(schedule="constant", lr=0.3, warmup=50, steps=0),
]
res = []
for c in cases:
    n = max(c.get("steps", 0), 200)
    res.append(dict(config=c, lr=sequence(c, n)))
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch.json"), "w") as f:
    json.dump(dict(torch=torch.__version__, cases=res), f)
