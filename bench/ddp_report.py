#!/usr/bin/python3
"""Turns the lines bench/ddp.sh collected (bench/scale's and
bench/torch_ddp.py's "result" lines, each with config=, cpus_available=
and turn= added) into the tables of docs/benchmarks.md, "Data-parallel
training on 2 ranks".

Usage: /usr/bin/python3 bench/ddp_report.py RESULTS_FILE

Per model and configuration: the median over every timed step of every
turn of rank 0's wall time and process CPU time per step (and, for
ocannlgen's ranks, of the time in SyncGrads); samples/s = the examples
of one step over all ranks over the median wall time; scaling
efficiency of 2 ranks = their samples/s over 2 x the samples/s of the
same implementation's 1 process x 1 thread (1.0 = ideal); the 2-thread
process's is the same ratio with its samples/s. Then the acceptance
checks: ocannlgen's 2-rank efficiency on the GPT at least 0.85, and its
2-rank step faster than PyTorch DDP's.
"""
import collections
import statistics
import sys

CONFIGS = [
    ("go-1x1", "ocannlgen", "1 process x 1 thread"),
    ("go-1x2", "ocannlgen", "1 process x 2 threads"),
    ("go-2x1", "ocannlgen", "2 ranks x 1 thread (Open MPI)"),
    ("torch-1x1", "PyTorch", "1 process x 1 thread"),
    ("torch-1x2", "PyTorch", "1 process x 2 threads"),
    ("torch-ddp-2x1", "PyTorch", "DDP, gloo, 2 processes x 1 thread"),
]


def fields(line):
    out = {}
    for tok in line.split("#")[0].split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def main():
    res = collections.defaultdict(lambda: {"walls": [], "cpus": [], "syncs": [], "probe": [], "samples": 0, "same": []})
    for line in open(sys.argv[1]):
        if not line.startswith("result "):
            continue
        f = fields(line)
        r = res[(f["model"], f["config"])]
        r["walls"] += [float(x) for x in f["walls"].split(",")]
        r["cpus"] += [float(x) for x in f["cpus"].split(",")]
        if "syncs" in f:
            r["syncs"] += [float(x) for x in f["syncs"].split(",")]
        r["probe"].append(float(f.get("cpus_available", "nan")))
        r["samples"] = int(f["samples"])
        if "params_identical" in f:
            r["same"].append(f["params_identical"])

    def sps(model, cfg):
        r = res.get((model, cfg))
        if not r or not r["walls"]:
            return None
        return r["samples"] / statistics.median(r["walls"]) * 1e3

    checks = []
    for model, title in (("gpt", "GPT (8 sequences x 128 tokens a rank, AdamW)"), ("cnn", "CNN (256 images a rank, SGD with momentum)")):
        print("**%s**" % title)
        print()
        print("| implementation | configuration | ms/step (median wall, rank 0) | CPU ms/step (rank 0) | of which SyncGrads, ms | examples/step | examples/s | scaling efficiency | steps | CPUs (median probe) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for cfg, impl, desc in CONFIGS:
            r = res.get((model, cfg))
            if not r or not r["walls"]:
                continue
            w, c = statistics.median(r["walls"]), statistics.median(r["cpus"])
            s = "%.2f" % statistics.median(r["syncs"]) if r["syncs"] else ""
            base = sps(model, cfg.split("-")[0] + "-1x1")
            eff = ""
            if cfg.endswith("2x1") or cfg.endswith("1x2"):
                eff = "%.1f%%" % (100 * sps(model, cfg) / (2 * base)) if base else ""
            same = "" if not r["same"] else ("" if all(x == "true" for x in r["same"]) else " (parameters differ!)")
            fmt = "%.1f" if w >= 10 else "%.2f"
            print("| %s | %s%s | %s | %s | %s | %d | %.0f | %s | %d | %.2f |" % (
                impl, desc, same, fmt % w, fmt % c, s, r["samples"], sps(model, cfg), eff, len(r["walls"]),
                statistics.median(r["probe"])))
        print()
        g2, g1, t2 = sps(model, "go-2x1"), sps(model, "go-1x1"), sps(model, "torch-ddp-2x1")
        if g2 and g1 and t2:
            gw = statistics.median(res[(model, "go-2x1")]["walls"])
            tw = statistics.median(res[(model, "torch-ddp-2x1")]["walls"])
            checks.append("%s: ocannlgen 2 ranks: %.1f%% of ideal scaling (%s 85%%); step %.2f ms against PyTorch DDP's %.2f ms (%.2fx, %s)" % (
                model, 100 * g2 / (2 * g1), ">=" if g2 / (2 * g1) >= 0.85 else "<", gw, tw, tw / gw,
                "faster" if gw < tw else "slower"))
    for c in checks:
        print("- " + c)


if __name__ == "__main__":
    main()
