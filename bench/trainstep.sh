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
for m in moons cnn attention; do go test -c -o "$tmp/$m.test" "./examples/$m"; done
us() { # tier binary bench n -> wall microseconds per step
  env GOMAXPROCS=1 OCANNLGEN_CPU="$1" "$2" -test.run XXX -test.bench "$3" -test.benchtime "${4}x" |
    awk '/ns\/op/ { for (i = 1; i < NF; i++) if ($(i+1) == "ns/op") printf "%.2f\n", $i / 1000 }' | head -1
}
for turn in $(seq "$turns"); do
  for tier in avx512 avx2 purego; do
    echo "moons $tier $(us $tier "$tmp/moons.test" 'TrainStep/generated$' 20000)" >>"$tmp/go.txt"
    echo "cnn $tier $(us $tier "$tmp/cnn.test" 'TrainStep$' 1000)" >>"$tmp/go.txt"
    echo "attention $tier $(us $tier "$tmp/attention.test" 'TrainStep$' 500)" >>"$tmp/go.txt"
  done
  /usr/bin/python3 bench/torch_trainstep.py 1 | grep -E '^\| (moons|cnn|attention) ' | awk -F'|' '{gsub(/ /,"",$2); gsub(/ /,"",$3); print $2, "torch", $3}' >>"$tmp/go.txt"
done
/usr/bin/python3 -c "
import collections, sys
r = collections.defaultdict(list)
for l in open('$tmp/go.txt'):
    m, t, v = l.split(); r[(m, t)].append(float(v))
print('| model | generated, AVX-512 (µs) | generated, AVX2 (µs) | generated, Go loops (µs) | PyTorch 1 thread (µs) | PyTorch / AVX-512 |')
print('|---|---:|---:|---:|---:|---:|')
for m in ['moons', 'cnn', 'attention']:
    b = {t: min(r[(m, t)]) for t in ['avx512', 'avx2', 'purego', 'torch']}
    print('| %s | %.1f | %.1f | %.1f | %.1f | %.1fx |' % (m, b['avx512'], b['avx2'], b['purego'], b['torch'], b['torch'] / b['avx512']))
print('(best of $turns turns, wall time per step; all turns:', dict(r), ')')
"
