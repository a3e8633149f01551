#!/usr/bin/env bash
# Runs the benchmarks of docs/benchmarks.md: the kernel comparison (one
# interleaved run of the generated AVX-512, AVX2 and Go code, gonum and
# OpenBLAS) and the demo training steps against PyTorch.
#
# usage: bash bench/run.sh [reps] [turns]   (from anywhere)
# Needs Debian's libopenblas-dev and python3-torch (installed when missing
# and apt-get is available).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -e /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h ] || ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-dev python3-torch
fi
# OpenBLAS picks its kernels for the CPU only without a forced core type,
# and creates no threads of its own (which would spin on the other core)
# with OPENBLAS_NUM_THREADS=1.
unset OPENBLAS_CORETYPE
export OPENBLAS_NUM_THREADS=1 GOMAXPROCS=1
grep -m1 'model name' /proc/cpuinfo
go version
bin=$(mktemp -d)/bench
go build -o "$bin" .
"$bin" -reps "${1:-7}"
cd ..
bash bench/trainstep.sh "${2:-5}"
# Thread scaling (docs/benchmarks.md, Threads): 1 against 2 threads by
# wall time, OpenBLAS and PyTorch at 2 threads too.
OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2 "$bin" -scaling -reps "${1:-7}"
/usr/bin/python3 bench/torch_trainstep.py "${2:-5}" 2 256
