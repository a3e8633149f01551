#!/usr/bin/python3
"""Turns the lines bench/scale.sh collected (bench/scale's "result",
"peak" and "flops" lines, bench/torch_scale.py's "result" lines, each
with cpus_available= and turn= appended) into the tables of
docs/benchmarks.md, "Scale benchmarks".

Usage: /usr/bin/python3 bench/scale_report.py RESULTS_FILE

Per model, implementation, precision and thread count: the median over
every timed step of every turn of the wall time and of the process CPU
time per step; GFLOP/s = the step's FLOP count (bench/scale/flops.go)
over the median wall time; % of peak = GFLOP/s over threads x the
measured one-core peak (the float32 ZMM FMA loop for float32, and for
bf16 autocast both that and the VDPBF16PS loop); GFLOP per CPU-second =
the FLOP count over the median CPU time (what the CPU time the step
used delivered: a host that takes a core away slows the wall time, not
this; spinning worker threads count against it).
"""
import collections
import statistics
import sys


def fields(line):
    out = {}
    for tok in line.split("#")[0].split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def main():
    results = collections.defaultdict(lambda: {"walls": [], "cpus": [], "probe": [], "allocs": [], "losses": []})
    peaks = collections.defaultdict(lambda: {"wall": [], "cpu": []})
    flop = {}
    for line in open(sys.argv[1]):
        kind = line.split(" ", 1)[0]
        f = fields(line)
        if kind == "result":
            key = (f["model"], f["impl"], f["dtype"], int(f["threads"]))
            r = results[key]
            r["walls"] += [float(x) for x in f["walls"].split(",")]
            r["cpus"] += [float(x) for x in f["cpus"].split(",")]
            r["probe"].append(float(f.get("cpus_available", "nan")))
            r["losses"].append(f["losses"])
            if "allocs_per_step" in f:
                r["allocs"].append(float(f["allocs_per_step"]))
        elif kind == "peak":
            p = peaks[(f["kind"], int(f["threads"]))]
            p["wall"].append(float(f["gflops"]))
            p["cpu"].append(float(f["gflops_per_cpu_s"]))
        elif kind == "flops":
            flop[f["model"]] = float(f["gflop"])

    print("### Measured peak (GFLOP/s; median over turns of each turn's median)")
    print()
    print("| loop | 1 thread, by wall time | 1 thread, per CPU-second | 2 threads, by wall time | 2 threads, per CPU-second |")
    print("|---|---:|---:|---:|---:|")
    names = {"f32-zmm": "float32 FMA, ZMM (VFMADD231PS, 12 accumulators)",
             "f32-ymm": "float32 FMA, YMM (VFMADD231PS, 12 accumulators)",
             "bf16-zmm": "bf16 dot, ZMM (VDPBF16PS, 24 accumulators)"}
    for k in ("f32-zmm", "f32-ymm", "bf16-zmm"):
        if (k, 1) not in peaks:
            continue
        row = []
        for th in (1, 2):
            p = peaks[(k, th)]
            row += ["%.1f" % statistics.median(p["wall"]), "%.1f" % statistics.median(p["cpu"])]
        print("| %s | %s |" % (names[k], " | ".join(row)))
    print()
    # One core's peak: the 1-thread loop per CPU-second (the host taking
    # the core away does not lower it).
    core = {k: statistics.median(peaks[(k, 1)]["cpu"]) for k in ("f32-zmm", "f32-ymm", "bf16-zmm") if (k, 1) in peaks}
    f32peak = max(core.get("f32-zmm", 0), core.get("f32-ymm", 0))
    bf16peak = core.get("bf16-zmm")
    print("One core's peak used below: float32 %.1f GFLOP/s%s." % (f32peak, (", bf16 %.1f GFLOP/s" % bf16peak) if bf16peak else ""))
    print()
    titles = {"gpt": "nanoGPT-size decoder (batch 8 x 128 tokens, %.2f GFLOP per step)",
              "resnet": "ResNet-20 (batch 32, %.2f GFLOP per step)"}
    impls = [("ocannlgen", "f32", "ocannlgen, float32"), ("ocannlgen", "bf16", "ocannlgen, bf16 (//ocannl:model bf16)"),
             ("torch", "f32", "PyTorch, float32"), ("torch", "bf16", "PyTorch, bf16 autocast")]
    for model in ("gpt", "resnet"):
        if model not in flop:
            continue
        g = flop[model]
        print("### " + titles[model] % g)
        print()
        print("| implementation | threads | ms/step (median wall) | CPU ms/step (median) | GFLOP/s | % of float32 peak | % of bf16 peak | GFLOP per CPU-second | steps timed | CPUs available (median probe) | allocs/step |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for impl, dt, label in impls:
            for th in (1, 2):
                key = (model, impl, dt, th)
                if key not in results:
                    continue
                r = results[key]
                w, c = statistics.median(r["walls"]), statistics.median(r["cpus"])
                gf = g / w * 1e3
                bf = "%.1f%%" % (100 * gf / (th * bf16peak)) if (dt == "bf16" and bf16peak) else ""
                al = "%.2g" % max(r["allocs"]) if r["allocs"] else ""
                print("| %s | %d | %.1f | %.1f | %.1f | %.1f%% | %s | %.1f | %d | %.2f | %s |" % (
                    label, th, w, c, gf, 100 * gf / (th * f32peak), bf, g / c * 1e3, len(r["walls"]),
                    statistics.median(r["probe"]), al))
        print()
        print("Warmup losses (each turn): " + "; ".join(
            "%s %s %dt: %s" % (impl, dt, th, r["losses"][0]) for (m, impl, dt, th), r in sorted(results.items()) if m == model))
        print()


if __name__ == "__main__":
    main()
