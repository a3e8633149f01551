#!/usr/bin/env bash
# Runs, on a machine without the Go toolchain, the checks and benchmarks
# that the CI machine cannot: every tier of the generated CPU kernels
# (AVX-512 where the CPU has it, AVX2, Go) through the gallery, gradient
# and demo tests and the kernel-check programs, the GPU tests where an
# NVIDIA GPU is, then the benchmarks of docs/benchmarks.md. The kit comes
# from bench/offline/kit.sh.
#
# usage: bash bench/offline/run.sh KIT.tar.xz [LOG]   (from the repository root)
# GPUONLY=1 runs only the GPU checks and benchmarks (gpu_run below: a kit
# from `GPUONLY=1 bench/offline/kit.sh` suffices), within BUDGET seconds
# (default 420), the most important first, each step cut at what is left,
# and ends with a summary of every result line: the report is LOG.
# NOGPU=1 skips the GPU checks; NOBENCH1=1 the one-thread benchmarks;
# AB=FILE (another commit's bench binary, built with
# `go build -ldflags='-s -w' -o FILE .` in its bench/) alternates its
# thread-scaling run with the kit's, three turns each (an A/B on the
# same CPUs within minutes); TURNS=N runs the thread-scaling table N
# times (default 1, or 3 with AB), REPS=N sets its turns per
# implementation (default 5).
set -u
R=$PWD
K=$(mktemp -d)
tar xJf "$1" -C "$K" || exit 1
log=${2:-/dev/null}
exec > >(tee -a "$log") 2>&1
export LD_LIBRARY_PATH=$K/lib
# gpu_run: the GPU checks and benchmarks (issue 29), each step a command
# under timeout (its own limit, or what is left of BUDGET), in the order
# of what matters most: the kernels, optimizers and split-K against the
# interpreter and bit for bit (TestGPU*); our GEMMs (BenchmarkGPUGEMM*:
# 4096^3, and with the tensor-core option also tf32 and bf16; the
# decoder's shapes) and the demos' steps (BenchmarkGPUTrainStep, batch
# 32); bench/scale -gpu (CNN and attention at batch 256, the GPT decoder
# and ResNet-20, float32); the same models' CPU steps; PyTorch eager CUDA
# (cuBLAS GEMMs and the four models' steps in f32, tf32, bf16); the
# sanitizers; the moons demo.
gpu_run() {
  local t0=$SECONDS budget=${BUDGET:-420}
  step() { # name limit command...: run it with what is left of the budget
    local n=$1 lim=$2 left
    shift 2
    left=$((budget - (SECONDS - t0)))
    [ "$left" -lt "$lim" ] && lim=$left
    if [ "$lim" -lt 10 ]; then
      echo "== $n: SKIPPED (the ${budget}s budget is spent)"
      return
    fi
    echo "== $n (limit ${lim}s, at $((SECONDS - t0))s)"
    timeout "$lim" "$@"
    local rc=$?
    [ "$rc" = 124 ] && echo "== $n: TIMED OUT after ${lim}s"
    [ "$rc" != 0 ] && [ "$rc" != 124 ] && echo "== $n: FAILED (exit $rc)"
  }
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  echo "OCANNL_LIBCUDA=$OCANNL_LIBCUDA OCANNL_NVRTC=$OCANNL_NVRTC; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  cd "$R/emit/cuda" || return
  step "GPU tests: kernels, optimizers, split-K against the interpreter" 150 \
    "$K/gpu/emit_cuda.test" -test.run TestGPU -test.v -gpucases "$K/gpu/cases"
  step "our GEMMs and demo steps" 90 \
    "$K/gpu/emit_cuda.test" -test.run XXX -test.bench 'GPU' -test.benchtime 20x -gpucases "$K/gpu/cases"
  cd "$R/bench" || return
  step "bench/scale -gpu: CNN and attention at batch 256, ResNet-20, GPT decoder" 150 \
    "$K/gpu/scale" -gpu -model cnn,attention,resnet,gpt -warmup 3 -steps 10
  for m in cnn attention; do
    for th in 1 "$(nproc)"; do
      step "bench/scale $m on the CPU, $th threads" 30 "$K/gpu/scale" -model $m -threads "$th" -warmup 3 -steps 20
    done
  done
  step "PyTorch eager CUDA: GEMMs and steps in f32, tf32, bf16" 150 \
    python3 "$K/gpu/torch_cuda_bench.py" --iters 20 --scale-dir "$K/gpu"
  cd "$R/emit/cuda" || return
  step "compute-sanitizer memcheck" 90 sh -c "compute-sanitizer --tool memcheck '$K/gpu/emit_cuda.test' -test.run TestGPU -gpucases '$K/gpu/cases' 2>&1 | tail -3"
  step "compute-sanitizer racecheck" 90 sh -c "compute-sanitizer --tool racecheck '$K/gpu/emit_cuda.test' -test.run TestGPU -gpucases '$K/gpu/cases' 2>&1 | tail -3"
  step "moons -gpu" 30 sh -c "'$K/gpu/moons' -gpu -png= | grep -iE 'gpu|accuracy'"
  cd "$R" || return
  echo "== done in $((SECONDS - t0))s"
}
gpu_env() { # the driver and NVRTC, or false without an NVIDIA GPU
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || return 1
  export OCANNL_LIBCUDA=${OCANNL_LIBCUDA:-$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')}
  export OCANNL_NVRTC=${OCANNL_NVRTC:-$(find /usr/local/cuda* /opt /usr/lib /usr/local/lib $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) -name 'libnvrtc.so*' 2>/dev/null | grep -v builtins | sort | head -1)}
}
if [ -n "${GPUONLY:-}" ]; then
  if ! gpu_env; then
    echo "== GPUONLY: no NVIDIA GPU here (nvidia-smi -L fails): nothing measured"
    rm -rf "$K"
    exit 1
  fi
  gpu_run 2>&1 | tee "$K/gpu.txt"
  echo "== summary"
  grep -E '^(result|Benchmark|--- (PASS|FAIL)|ok|FAIL|PASS|== .*(TIMED OUT|FAILED|SKIPPED))|GFLOP/s|ERROR SUMMARY|RACECHECK SUMMARY|held-out' "$K/gpu.txt"
  rm -rf "$K"
  exit 0
fi
unset OPENBLAS_CORETYPE
echo "== $(grep -m1 'model name' /proc/cpuinfo), $(nproc) CPUs; AVX-512F: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)"
if grep -qw avx512f /proc/cpuinfo; then
  # OpenBLAS 0.3.21 takes a CPU model it does not know (a VM's
  # "Intel Xeon Processor") for a Prescott and runs SSE3 kernels.
  export OPENBLAS_CORETYPE=SkylakeX
fi
# Two CPUs for the timings: not the first (interrupts), not SMT siblings,
# and of a few such pairs the one whose two busy goroutines get the most
# CPU time now (a VM's vCPUs share the host with other VMs).
siblings() { # the SMT siblings of CPU $1, one per line
  tr ',' '\n' </sys/devices/system/cpu/cpu$1/topology/thread_siblings_list 2>/dev/null |
    awk -F- '{for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i}'
}
C1=2 C2=2,4 best=0
if [ "$(nproc)" -lt 5 ]; then
  C1=0 C2=0,1
else
  for pr in 2,4 6,8 10,12 3,5 7,9 11,13; do
    a=${pr%,*} b=${pr#*,}
    [ "$b" -lt "$(nproc)" ] || continue
    siblings "$a" | grep -qx "$b" && continue
    v=$(taskset -c "$pr" "$K/bin/bench" -cpuprobe 2>/dev/null || echo 0)
    echo "   cpus $pr: two busy goroutines get $v CPUs"
    if awk -v v="$v" -v b="$best" 'BEGIN{exit !(v > b + 0.02)}'; then best=$v C1=$a C2=$pr; fi
  done
fi
echo "== timings on cpu $C1 (one thread) and cpus $C2 (two)"
r=$(mktemp -d)
pids=()
job() { # name dir timeout command...: run in the background
  local n=$1 d=$2 to=$3
  shift 3
  (cd "$R/$d" && timeout "$to" "$@" >"$r/$n.txt" 2>&1; echo $? >"$r/$n.rc") &
  pids+=($!)
}
echo "== tests, every tier (OCANNLGEN_CPU empty: the best the CPU has)"
for t in "" avx2 purego; do
  short=-test.short
  [ -z "$t" ] && short=-test.short=false
  for p in examples/cnn examples/attention examples/moons examples/zoo examples/internal/demo internal/gradcheck; do
    job "${t:-best}_$(echo $p | tr / _)" "$p" 300 env OCANNLGEN_CPU="$t" "$K/bin/$(echo $p | tr / _).test" $short
  done
  job "${t:-best}_gallery" examples/gallery 300 env OCANNLGEN_CPU="$t" "$K/bin/examples_gallery.test" \
    -test.run 'TestRecordedGalleryCases|TestTier|TestWrongSlice' -gallerycases="$K/gallery.gob"
done
job best_handwritten examples/moons/handwritten 300 "$K/bin/examples_moons_handwritten.test"
job best_tiers internal/tiers 300 "$K/bin/internal_tiers.test"
job best_rt rt 300 "$K/bin/rt.test"
job best_rt_cpu rt/cpu 300 "$K/bin/rt_cpu.test" -test.skip 'RuntimeDeps|GeneratedImports'
job best_bench_models bench 300 "$K/bin/bench_models.test"
for m in cnn attention; do job "race_$m" "examples/$m" 300 "$K/bin/examples_${m}_race.test" -test.run 'Threads|Allocs'; done
for k in TestKernelsAgainstLoops TestReduceKernelsAgainstLoops TestTranscendentalSweep; do job "kernels_$k" . 300 "$K/bin/$k"; done
if [ -z "${NOGPU:-}" ] && gpu_env; then
  job gpu emit/cuda 300 "$K/gpu/emit_cuda.test" -test.run TestGPU -test.v -gpucases "$K/gpu/cases"
fi
wait "${pids[@]}"
fail=0
for f in "$r"/*.rc; do
  n=$(basename "$f" .rc)
  rc=$(cat "$f")
  echo "$n: $([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)") $(grep -h 'tier .* checked\|assembly kernels' "$r/$n.txt" | tr -s ' \t\n' ' ')"
  [ "$rc" = 0 ] || { fail=1; grep -v -- '--- PASS\|=== RUN' "$r/$n.txt" | head -60; }
done
[ "$fail" = 0 ] && echo "== every test passed" || echo "== SOME TESTS FAILED"
if [ -n "${OCANNL_LIBCUDA:-}" ]; then
  echo "== GPU: benchmarks, PyTorch, sanitizers, the demo"
  BUDGET=${BUDGET:-900} gpu_run
fi
if [ -z "${NOBENCH1:-}" ]; then
  echo "== kernels, one thread (cpu $C1)"
  (cd "$R/bench" && OPENBLAS_NUM_THREADS=1 GOMAXPROCS=1 taskset -c $C1 "$K/bin/bench" -reps 5)
  echo "== training steps against PyTorch, one thread"
  OCANNLGEN_TEST_BINS=$K/bin PYTHON3=$(command -v python3) taskset -c $C1 bash bench/trainstep.sh 3
fi
echo "== threads (cpus $C2)"
turns=${TURNS:-1}
[ -n "${AB:-}" ] && turns=${TURNS:-3}
for i in $(seq $turns); do
  echo "-- turn $i: this kit"
  (cd "$R/bench" && OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2 taskset -c $C2 "$K/bin/bench" -scaling -reps "${REPS:-5}")
  if [ -n "${AB:-}" ]; then
    echo "-- turn $i: $AB"
    (cd "$R/bench" && OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2 taskset -c $C2 "$(realpath "$R/$AB" 2>/dev/null || echo "$AB")" -scaling -reps "${REPS:-5}")
  fi
done
taskset -c $C2 python3 bench/torch_trainstep.py 3 2 256
rm -rf "$K" "$r"
