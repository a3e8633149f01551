#!/usr/bin/env bash
# Builds, on a machine with the Go toolchain, everything bench/offline/run.sh
# needs on a machine without one (an AVX-512 or GPU machine lent for a
# session): test binaries of the packages whose tests run the generated
# kernels, the kernel-check programs of emit/asm, the gallery's recorded
# cases, the benchmark program with the OpenBLAS libraries it links, and
# (built with -tags cuda) the GPU tests with their recorded cases.
#
# usage: bash bench/offline/kit.sh OUT.tar.xz   (from anywhere; about 3 min)
# GPUONLY=1 builds only the GPU part (gpu/: the cuda-tagged emit/cuda
# test binary and its recorded cases, the moons demo, bench/scale with
# -gpu, the PyTorch scripts), for `GPUONLY=1 bench/offline/run.sh`.
set -euo pipefail
out=$(realpath -m "${1:?usage: kit.sh OUT.tar.xz}")
mkdir -p "$(dirname "$out")" # e.g. tmp/, git-ignored, absent in a fresh clone
cd "$(dirname "$0")/../.."
k=$(mktemp -d)
mkdir -p "$k/bin" "$k/lib" "$k/gpu"
gpu() {
  go test -c -tags cuda -ldflags='-s -w' -o "$k/gpu/emit_cuda.test" ./emit/cuda
  # TestRecordGPUCases (kernels), TestRecordGPUOptimCases (optim.gob),
  # TestRecordGPUGEMMShapes (gemm_*.cu), and any other TestRecordGPU*.
  go test -count=1 ./emit/cuda -run 'TestRecordGPU' -args -gpucases "$k/gpu/cases" >/dev/null
  go build -tags cuda -ldflags='-s -w' -o "$k/gpu/moons" ./examples/moons
  (cd bench && go build -tags cuda -ldflags='-s -w' -o "$k/gpu/scale" ./scale)
  cp docs/bench/torch_cuda_bench.py bench/torch_scale.py bench/torch_trainstep.py "$k/gpu/"
}
if [ -n "${GPUONLY:-}" ]; then
  gpu
  tar cJf "$out" -C "$k" gpu
  rm -rf "$k"
  ls -l "$out"
  exit 0
fi
for p in examples/gallery examples/cnn examples/attention examples/moons examples/moons/handwritten \
  examples/zoo examples/internal/demo internal/gradcheck internal/tiers rt rt/cpu; do
  go test -c -ldflags='-s -w' -o "$k/bin/$(echo "$p" | tr / _).test" "./$p"
done
for m in cnn attention; do go test -race -c -ldflags='-s -w' -o "$k/bin/examples_${m}_race.test" "./examples/$m"; done
OCANNLGEN_KERNEL_BIN_DIR="$k/bin" go test -count=1 ./emit/asm \
  -run 'TestKernelsAgainstLoops$|TestReduceKernelsAgainstLoops$|TestTranscendentalSweep$' >/dev/null
go test -count=1 ./examples/gallery -run TestRecordGalleryCases -args -recordgallery="$k/gallery.gob" >/dev/null
(cd bench && go test -c -ldflags='-s -w' -o "$k/bin/bench_models.test" ./models && go build -ldflags='-s -w' -o "$k/bin/bench" .)
for l in $(ldd "$k/bin/bench" | awk '/openblas|gfortran|quadmath/ {print $3}'); do cp -L "$l" "$k/lib/"; done
gpu
tar cJf "$out" -C "$k" .
rm -rf "$k"
ls -l "$out"
