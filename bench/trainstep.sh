#!/usr/bin/env bash
# Times one training step of the three demo models (examples/moons, cnn,
# attention): the generated TrainStep with the AVX-512 kernels
# (OCANNLGEN_CPU=avx512), the AVX2 ones (avx2) and the Go loops (purego), and
# the same networks in PyTorch at one thread (bench/torch_trainstep.py),
# interleaved turn by turn. Our figures are process CPU time per step:
# the difference of two runs of the demo's BenchmarkTrainStep (n1 and n2
# steps), so start-up cancels out; PyTorch's are process CPU time too.
#
# usage: bash bench/trainstep.sh [turns]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
unset OPENBLAS_CORETYPE
turns=${1:-3}
tmp=$(mktemp -d)
for m in moons cnn attention; do go test -c -o "$tmp/$m.test" "./examples/$m"; done
cpu() { # tier binary bench n1 n2 -> CPU microseconds per step
  local t=$1 bin=$2 bench=$3 n1=$4 n2=$5 a b
  run() { /usr/bin/time -f "%U %S" env GOMAXPROCS=1 OCANNLGEN_CPU="$t" "$bin" -test.run XXX -test.bench "$bench" -test.benchtime "${1}x" 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'; }
  a=$(run "$n1"); b=$(run "$n2")
  python3 -c "print('%.1f' % (($b-$a)/($n2-$n1)*1e6))"
}
for turn in $(seq "$turns"); do
  for tier in avx512 avx2 purego; do
    echo "moons $tier $(cpu $tier "$tmp/moons.test" 'TrainStep/generated$' 2000 22000)" >>"$tmp/go.txt"
    echo "cnn $tier $(cpu $tier "$tmp/cnn.test" 'TrainStep$' 20 620)" >>"$tmp/go.txt"
    echo "attention $tier $(cpu $tier "$tmp/attention.test" 'TrainStep$' 20 620)" >>"$tmp/go.txt"
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
print('(best of $turns turns, process CPU time per step; all turns:', dict(r), ')')
"
