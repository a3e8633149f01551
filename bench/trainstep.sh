#!/usr/bin/env bash
# Times one training step of the three demo models (examples/moons, cnn,
# attention): the generated TrainStep with the AVX-512 kernels
# (OCANNLGEN_CPU=avx512), the AVX2 ones (avx2) and the Go loops (purego), and
# the same networks in PyTorch at one thread (bench/torch_trainstep.py),
# interleaved turn by turn. Every figure is wall time per step (Go: the
# demo's BenchmarkTrainStep ns/op at GOMAXPROCS=1; PyTorch: its own loop),
# and the table gives the best turn: on a shared machine the least
# disturbed turn is the closest to the code's own speed.
#
# usage: bash bench/trainstep.sh [turns]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
unset OPENBLAS_CORETYPE
turns=${1:-3}
tmp=$(mktemp -d)
# OCANNLGEN_TEST_BINS: a folder with prebuilt examples_<model>.test binaries
# (go test -c), for a machine without a Go toolchain; PYTHON3: the Python
# with torch (default /usr/bin/python3, Debian's).
py=${PYTHON3:-/usr/bin/python3}
for m in moons cnn attention; do
  if [ -n "${OCANNLGEN_TEST_BINS:-}" ]; then
    cp "$OCANNLGEN_TEST_BINS/examples_$m.test" "$tmp/$m.test"
  else
    go test -c -o "$tmp/$m.test" "./examples/$m"
  fi
done
us() { # tier binary bench n -> wall microseconds per step
  env GOMAXPROCS=1 OCANNLGEN_CPU="$1" "$2" -test.run XXX -test.bench "$3" -test.benchtime "${4}x" |
    awk '/ns\/op/ { for (i = 1; i < NF; i++) if ($(i+1) == "ns/op") printf "%.2f\n", $i / 1000 }' | head -1
}
# The tiers this CPU runs (without AVX-512, OCANNLGEN_CPU=avx512 would
# time the AVX2 kernels a second time).
tiers="avx2 purego"
grep -qw avx512f /proc/cpuinfo && tiers="avx512 $tiers"
for turn in $(seq "$turns"); do
  for tier in $tiers; do
    echo "moons $tier $(us $tier "$tmp/moons.test" 'TrainStep/generated$' 20000)" >>"$tmp/go.txt"
    echo "cnn $tier $(us $tier "$tmp/cnn.test" 'TrainStep$' 1000)" >>"$tmp/go.txt"
    echo "attention $tier $(us $tier "$tmp/attention.test" 'TrainStep$' 500)" >>"$tmp/go.txt"
  done
  "$py" bench/torch_trainstep.py 1 | grep -E '^\| (moons|cnn|attention) ' | awk -F'|' '{gsub(/ /,"",$2); gsub(/ /,"",$3); print $2, "torch", $3}' >>"$tmp/go.txt"
done
"$py" -c "
import collections, sys
r = collections.defaultdict(list)
for l in open('$tmp/go.txt'):
    m, t, v = l.split(); r[(m, t)].append(float(v))
ts = '$tiers'.split()
names = {'avx512': 'AVX-512', 'avx2': 'AVX2', 'purego': 'Go loops'}
print('| model | ' + ' | '.join('generated, %s (µs)' % names[t] for t in ts) + ' | PyTorch 1 thread (µs) | PyTorch / %s |' % names[ts[0]])
print('|---|' + '---:|' * (len(ts) + 2))
for m in ['moons', 'cnn', 'attention']:
    b = {t: min(r[(m, t)]) for t in ts + ['torch']}
    print('| %s | ' % m + ' | '.join('%.1f' % b[t] for t in ts) + ' | %.1f | %.1fx |' % (b['torch'], b['torch'] / b[ts[0]]))
print('(best of $turns turns, wall time per step; all turns:', dict(r), ')')
"
