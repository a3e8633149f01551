// Command scale times one training step (TrainStep: forward, backward,
// optimizer update) of the two scale models of bench/models (scale.go):
// GPT, a nanoGPT-char-sized decoder (6 blocks, width 384, context 128,
// batch 8, AdamW), and ResNet20, a CIFAR-10 ResNet-20 without batch norm
// (batch 32, SGD with momentum), on random data, on 1 or 2 threads; and
// measures the machine's FMA peak (peak.go, peak_amd64.s) to put the
// step's GFLOP/s against. bench/scale.sh runs it interleaved with the
// PyTorch twins (bench/torch_scale.py); docs/benchmarks.md, "Scale
// benchmarks", has the results. -model cnn is bench/models.CNN (batch
// 256), the data-parallel benchmark's second model; -model attention is
// bench/models.Reverser (batch 256). With -gpu (gpu.go, a binary built
// with -tags cuda) the model trains on the GPU through its generated CUDA
// C instead.
//
// With -dist (a binary built with -tags mpi, started by mpirun) the
// process is one rank of a data-parallel run (dist.go): bench/ddp.sh,
// docs/benchmarks.md, "Data-parallel training".
//
//	scale -model gpt -threads 1 [-warmup 3] [-steps 5]
//	scale -gpu -model cnn,attention,gpt,resnet [-warmup 3] [-steps 5]
//	mpirun -np 2 scale -dist -model gpt -threads 1 [-warmup 3] [-steps 5]
//	scale -peak [-reps 5]
//	scale -track 300 [-threads 2]
//	scale -cpuprobe [-waitquiet 30s]
//	scale -flops
//
// With -threads n the process runs at GOMAXPROCS=n and the model's Pool
// is rt.NewPool(n). Before timing, the warmup steps run on the fixed
// batch and must give finite losses, the last below the first (the step
// trains); then -steps steps are timed one by one, by wall time and by
// the process's CPU time (all threads, CLOCK_PROCESS_CPUTIME_ID), and
// the medians are printed with the heap allocations of the timed loop
// (0 at one thread; at two, the Go runtime's sudogs for the pool's
// barrier wait, see docs/benchmarks.md). GFLOP/s are the step's FLOP
// count (flops.go) over the median wall time. -cpuprofile FILE profiles
// the timed steps; -allocprofile FILE writes allocation profiles after
// the warmup and at the end (the profilers themselves allocate, so the
// allocation count is meaningful only without them).
package main

import (
	"flag"
	"fmt"
	"github.com/ocannlgen/ocannlgen/bench/internal/host"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/ocannlgen/ocannlgen/bench/models"
	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/bf16"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// model is one scale model ready to train on its fixed random batch.
type model struct {
	flop    float64 // FLOP per training step (flops.go)
	samples int     // examples per training step (the model's batch)
	setPool func(*rt.Pool)
	step    func() float32
	// The data-parallel step (dist.go): backward, then sync (SyncGrads),
	// then update; bcast is BroadcastParams from rank 0, params the
	// parameters (to check that the ranks hold the same bits).
	backward func() float32
	update   func()
	sync     func(dist.Comm) error
	bcast    func(dist.Comm) error
	params   func() []rt.Tensor
	// The GPU mode (gpu.go): the generated model type, the batch by the
	// loss's input names, the learning rate.
	gpuName  string
	gpuBatch map[string]any
	lr       func() float64
}

// seed is the data's random source: rank 0 (and a single process) draws
// the same batch as before the distributed mode, rank r another one.
func seed(a, b uint64, rank int) *rand.Rand {
	return rand.New(rand.NewPCG(a, b+uint64(rank)<<32))
}

// gptIDs is a batch of token ids (the GPT's index inputs).
type gptIDs = [models.GPTBatch][models.GPTContext]int32

// gptBatch is the GPT's fixed random batch and the causal mask.
func gptBatch(rank int) (tokens, targets *gptIDs, mask *[models.GPTContext][models.GPTContext]float32) {
	tokens, targets = new(gptIDs), new(gptIDs)
	mask = new([models.GPTContext][models.GPTContext]float32)
	r := seed(1, 2, rank)
	for b := range tokens {
		// A random sequence of GPTContext+1 symbols: the inputs are its
		// first GPTContext, the targets the next symbol at each position.
		prev := int32(r.IntN(models.GPTVocab))
		for t := range models.GPTContext {
			next := int32(r.IntN(models.GPTVocab))
			tokens[b][t], targets[b][t] = prev, next
			prev = next
		}
	}
	for s := range mask {
		for t := 0; t <= s; t++ {
			mask[s][t] = 1 // query s sees keys t <= s
		}
	}
	return tokens, targets, mask
}

// must is a step's loss; a step's error (a token id out of range: the
// harness's batches never have one) ends the benchmark.
func must(loss float32, err error) float32 {
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
	return loss
}

// gptNet is what the GPT's generated types (models.GPT and its bf16
// twin models.GPTBF16) offer the harness. The steps return an error
// only for a token id out of range.
type gptNet interface {
	trainer
	TrainStep(tokens, targets *gptIDs, mask *[models.GPTContext][models.GPTContext]float32) (float32, error)
	Backward(tokens, targets *gptIDs, mask *[models.GPTContext][models.GPTContext]float32) (float32, error)
}

// trainer is the part of a generated model's API that does not depend
// on its inputs.
type trainer interface {
	Init(seed uint64)
	Update()
	LearningRate() float64
	SyncGrads(c dist.Comm) error
	BroadcastParams(c dist.Comm, root int) error
	ParamTensors() []rt.Tensor
}

// trained fills md's optimizer, data-parallel and parameter hooks from
// m (initialized with seed 1) and its pool field.
func trained(md model, m trainer, pool **rt.Pool) model {
	m.Init(1)
	md.setPool = func(p *rt.Pool) { *pool = p }
	md.update, md.lr, md.sync, md.params = m.Update, m.LearningRate, m.SyncGrads, m.ParamTensors
	md.bcast = func(c dist.Comm) error { return m.BroadcastParams(c, 0) }
	return md
}

// gptOf is the GPT benchmark of m on rank's batch; gpuName names its
// plan model for -gpu ("" for a model the GPU path does not run).
func gptOf(m gptNet, pool **rt.Pool, rank int, gpuName string) model {
	tokens, targets, mask := gptBatch(rank)
	md := model{
		flop:     gptFLOP(),
		samples:  models.GPTBatch,
		step:     func() float32 { return must(m.TrainStep(tokens, targets, mask)) },
		backward: func() float32 { return must(m.Backward(tokens, targets, mask)) },
	}
	if gpuName != "" {
		md.gpuName = gpuName
		md.gpuBatch = map[string]any{"tokens": flatIDs(tokens), "targets": flatIDs(targets), "mask": flat(mask)}
	}
	return trained(md, m, pool)
}

func gptModel(rank int) model {
	m := new(models.GPT)
	return gptOf(m, &m.Pool, rank, "ocannlGPT")
}

// gptBF16Model is gptModel in bf16 mixed precision (models.GPTBF16; the
// GPU path runs float32 models only).
func gptBF16Model(rank int) model {
	m := new(models.GPTBF16)
	return gptOf(m, &m.Pool, rank, "")
}

// resnetBatch is the ResNet's fixed random batch.
func resnetBatch(rank int) (images *[models.ResNetBatch][32][32][3]float32, labels *[models.ResNetBatch][10]float32) {
	images = new([models.ResNetBatch][32][32][3]float32)
	labels = new([models.ResNetBatch][10]float32)
	r := seed(3, 4, rank)
	for i := range images {
		for y := range images[i] {
			for x := range images[i][y] {
				for c := range images[i][y][x] {
					images[i][y][x][c] = float32(r.NormFloat64())
				}
			}
		}
		labels[i][r.IntN(10)] = 1
	}
	return images, labels
}

// resnetNet is what the ResNet's generated types (models.ResNet20 and
// models.ResNet20BF16) offer the harness.
type resnetNet interface {
	trainer
	TrainStep(images *[models.ResNetBatch][32][32][3]float32, labels *[models.ResNetBatch][10]float32) float32
	Backward(images *[models.ResNetBatch][32][32][3]float32, labels *[models.ResNetBatch][10]float32) float32
}

// resnetOf is the ResNet benchmark of m on rank's batch (gpuName as in
// gptOf).
func resnetOf(m resnetNet, pool **rt.Pool, rank int, gpuName string) model {
	images, labels := resnetBatch(rank)
	md := model{
		flop:     resnetFLOP(),
		samples:  models.ResNetBatch,
		step:     func() float32 { return m.TrainStep(images, labels) },
		backward: func() float32 { return m.Backward(images, labels) },
	}
	if gpuName != "" {
		md.gpuName = gpuName
		md.gpuBatch = map[string]any{"images": flat(images), "labels": flat(labels)}
	}
	return trained(md, m, pool)
}

func resnetModel(rank int) model {
	m := new(models.ResNet20)
	return resnetOf(m, &m.Pool, rank, "ocannlResNet20")
}

// resnetBF16Model is resnetModel in bf16 mixed precision
// (models.ResNet20BF16).
func resnetBF16Model(rank int) model {
	m := new(models.ResNet20BF16)
	return resnetOf(m, &m.Pool, rank, "")
}

// cnnBatch is bench/models.CNN's training batch (its train entry's
// images : 256 | 12, 12, 1).
const cnnBatch = 256

// settleSteps are the untimed steps after the collection before the
// timed ones (see main).
const settleSteps = 3

// cnnModel is bench/models.CNN, examples/cnn's glyph classifier trained
// on batches of 256 (the thread-scaling benchmark's CNN), on random
// 12x12 images and classes.
func cnnModel(rank int) model {
	m := new(models.CNN)
	m.Init(1)
	images := new([cnnBatch][12][12][1]float32)
	labels := new([cnnBatch][4]float32)
	r := seed(5, 6, rank)
	for i := range images {
		for y := range images[i] {
			for x := range images[i][y] {
				images[i][y][x][0] = r.Float32()
			}
		}
		labels[i][r.IntN(4)] = 1
	}
	return model{
		flop:     cnnFLOP(),
		samples:  cnnBatch,
		setPool:  func(p *rt.Pool) { m.Pool = p },
		step:     func() float32 { return m.TrainStep(images, labels) },
		backward: func() float32 { return m.Backward(images, labels) },
		update:   m.Update,
		sync:     m.SyncGrads,
		bcast:    func(c dist.Comm) error { return m.BroadcastParams(c, 0) },
		params:   m.ParamTensors,
		gpuName:  "ocannlCNN",
		gpuBatch: map[string]any{"images": flat(images), "labels": flat(labels)},
		lr:       m.LearningRate,
	}
}

// attentionModel is bench/models.Reverser, examples/attention's
// transformer block trained on batches of 256 random 8-token sequences
// (reversing them).
func attentionModel(rank int) model {
	m := new(models.Reverser)
	m.Init(1)
	tokens := new([256][8][10]float32)
	targets := new([256][8][10]float32)
	r := seed(7, 8, rank)
	for i := range tokens {
		var seq [8]int
		for t := range seq {
			seq[t] = r.IntN(10)
			tokens[i][t][seq[t]] = 1
		}
		for t := range seq {
			targets[i][t][seq[7-t]] = 1
		}
	}
	return model{
		flop:     attentionFLOP(),
		samples:  256,
		setPool:  func(p *rt.Pool) { m.Pool = p },
		step:     func() float32 { return m.TrainStep(tokens, targets) },
		backward: func() float32 { return m.Backward(tokens, targets) },
		update:   m.Update,
		sync:     m.SyncGrads,
		bcast:    func(c dist.Comm) error { return m.BroadcastParams(c, 0) },
		params:   m.ParamTensors,
		gpuName:  "ocannlReverser",
		gpuBatch: map[string]any{"tokens": flat(tokens), "targets": flat(targets)},
		lr:       m.LearningRate,
	}
}

func main() {
	name := flag.String("model", "gpt", "the model: gpt, resnet, cnn (bench/models.CNN, batch 256) or attention (bench/models.Reverser, batch 256); gpt-bf16 and resnet-bf16 are the first two in bf16 mixed precision; with -gpu, a comma-separated list of gpt, resnet, cnn and attention")
	gpu := flag.Bool("gpu", false, "train on the GPU (a binary built with -tags cuda; gpu.go) instead of the CPU")
	distributed := flag.Bool("dist", false, "data-parallel: one rank of an mpirun job (a binary built with -tags mpi; dist.go)")
	threads := flag.Int("threads", 1, "threads: GOMAXPROCS and the model's rt.Pool")
	backoff := flag.Duration("backoff", rt.DefaultMaxBackoff, "the pool's longest straggler back-off (rt.Pool.SetStraggleBackoff; 0 turns the back-off off)")
	warmup := flag.Int("warmup", 3, "untimed steps first (at least 2: their losses are checked)")
	steps := flag.Int("steps", 5, "timed steps")
	peak := flag.Bool("peak", false, "measure the FMA peaks at 1 and 2 threads instead")
	reps := flag.Int("reps", 5, "with -peak: repetitions of each loop (about 0.2 s each)")
	flops := flag.Bool("flops", false, "print each model's FLOP count per step and exit")
	allocProfile := flag.String("allocprofile", "", "write profiles of every allocation (runtime.MemProfileRate 1) after the warmup (FILE.warmup) and at the end (FILE), to find what allocates in the timed loop")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed steps to this file")
	trackSteps := flag.Int("track", 0, "train the decoder for this many steps in float32 and in bf16 from the same initialization on the same batches and compare the final losses (track.go)")
	probe := flag.Bool("cpuprobe", false, "print the CPUs two busy goroutines get over 200 ms (about 2 on an idle 2-core machine) and exit")
	quiet := flag.Duration("waitquiet", 0, "with -cpuprobe: probe every second until the probe shows at least -quietcpus CPUs or this time has passed, then print the last probe")
	quietCPUs := flag.Float64("quietcpus", 1.8, "with -waitquiet: the CPUs that count as a quiet machine")
	flag.Parse()
	if *probe {
		runtime.GOMAXPROCS(2)
		deadline := time.Now().Add(*quiet)
		c := host.CPUsAvailable()
		for c < *quietCPUs && time.Now().Before(deadline) {
			time.Sleep(time.Second)
			c = host.CPUsAvailable()
		}
		fmt.Printf("%.2f\n", c)
		return
	}
	if *allocProfile != "" {
		runtime.MemProfileRate = 1
	}
	if *flops {
		fmt.Printf("flops model=gpt gflop=%.4f\nflops model=resnet gflop=%.4f\nflops model=cnn gflop=%.4f\n", gptFLOP()/1e9, resnetFLOP()/1e9, cnnFLOP()/1e9)
		return
	}
	if *trackSteps > 0 {
		runtime.GOMAXPROCS(*threads)
		os.Exit(track(*trackSteps, *threads))
	}
	if *peak {
		fmt.Printf("# cpu: %s (%d logical CPUs), %s\n", host.CPUModel(), runtime.NumCPU(), runtime.Version())
		peaks(*reps)
		return
	}
	if *warmup < 2 || *steps < 1 || *threads < 1 {
		fmt.Fprintln(os.Stderr, "scale: need -warmup >= 2, -steps >= 1, -threads >= 1")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*threads)
	var mk func(rank int) model
	switch n := *name; {
	case *gpu:
		mk = nil // several models (gpu.go)
	case n == "gpt":
		mk = gptModel
	case n == "gpt-bf16":
		mk = gptBF16Model
	case n == "resnet":
		mk = resnetModel
	case n == "resnet-bf16":
		mk = resnetBF16Model
	case n == "cnn":
		mk = cnnModel
	case n == "attention":
		mk = attentionModel
	default:
		fmt.Fprintf(os.Stderr, "scale: unknown model %q (gpt, gpt-bf16, resnet, resnet-bf16, cnn or attention)\n", *name)
		os.Exit(2)
	}
	if *gpu {
		names := strings.Split(*name, ",")
		var ms []model
		for _, n := range names {
			f := map[string]func(int) model{"gpt": gptModel, "resnet": resnetModel, "cnn": cnnModel, "attention": attentionModel}[n]
			if f == nil {
				fmt.Fprintf(os.Stderr, "scale: unknown model %q (gpt, resnet, cnn or attention)\n", n)
				os.Exit(2)
			}
			ms = append(ms, f(0))
		}
		if err := runGPU(names, ms, *warmup, *steps); err != nil {
			fmt.Fprintln(os.Stderr, "scale: -gpu:", err)
			os.Exit(1)
		}
		return
	}
	if *distributed {
		os.Exit(runDist(*name, mk, *threads, *warmup, *steps))
	}
	m := mk(0)
	pool := rt.NewPool(*threads)
	pool.SetStraggleBackoff(*backoff)
	m.setPool(pool)

	// The check, untimed: finite losses that decrease on the fixed batch.
	losses := make([]float32, *warmup)
	for i := range losses {
		losses[i] = m.step()
	}
	for _, l := range losses {
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			fmt.Fprintf(os.Stderr, "scale: %s: a warmup step returned a non-finite loss: %v\n", *name, losses)
			os.Exit(1)
		}
	}
	if !(losses[len(losses)-1] < losses[0]) {
		fmt.Fprintf(os.Stderr, "scale: %s: the loss did not decrease over %d steps on a fixed batch: %v\n", *name, *warmup, losses)
		os.Exit(1)
	}

	if *allocProfile != "" {
		writeAllocs(*allocProfile + ".warmup")
	}
	wall := make([]float64, *steps)
	cpuT := make([]float64, *steps)
	runtime.GC()
	// Untimed steps after the collection: a GC empties the Go runtime's
	// caches of goroutine wait records (sudogs, 112 bytes), so the pool's
	// first barrier waits after it allocate some, and now and then one
	// more until the runtime's per-P caches settle (the caller parks on
	// one P and releases the record on another). A 2-thread step would
	// count them (0.1-1 per step); a training loop that allocates
	// nothing does not collect and keeps its caches.
	// OCANNLGEN_ALLOC_SIZES=1 prints the timed allocations by size.
	for range settleSteps {
		m.step()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		defer f.Close()
	}
	pool.ResetStats()
	for i := range *steps {
		t0, c0 := time.Now(), host.ProcCPU()
		m.step()
		wall[i] = time.Since(t0).Seconds() * 1e3
		cpuT[i] = (host.ProcCPU() - c0).Seconds() * 1e3
	}
	runtime.ReadMemStats(&ms1)
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	allocs := float64(ms1.Mallocs-ms0.Mallocs) / float64(*steps)
	if os.Getenv("OCANNLGEN_ALLOC_SIZES") != "" {
		for i := range ms1.BySize {
			if d := ms1.BySize[i].Mallocs - ms0.BySize[i].Mallocs; d > 0 {
				fmt.Fprintf(os.Stderr, "timed allocations of %d bytes: %d\n", ms1.BySize[i].Size, d)
			}
		}
	}
	w, c := median(wall), median(cpuT)
	ls := make([]string, len(losses))
	for i, l := range losses {
		ls[i] = fmt.Sprintf("%.4f", l)
	}
	mname, dtype, tr := *name, "f32", tier()
	if base, ok := strings.CutSuffix(mname, "-bf16"); ok {
		mname, dtype, tr = base, "bf16", tr+"+"+bf16.Best().String() // the contractions' tier (rt/bf16)
	}
	fmt.Printf("result impl=ocannlgen model=%s dtype=%s threads=%d steps=%d wall_ms=%.2f cpu_ms=%.2f samples=%d samples_per_s=%.1f gflop=%.4f gflops=%.2f allocs_per_step=%g tier=%s losses=%s walls=%s cpus=%s\n",
		mname, dtype, *threads, *steps, w, c, m.samples, float64(m.samples)/w*1e3, m.flop/1e9, m.flop/w/1e6, allocs, tr, strings.Join(ls, ","), join(wall), join(cpuT))
	if *threads > 1 {
		// What the pool did in the timed steps, per step (rt.PoolStats):
		// the figures behind the 2-thread speed-up.
		st, n := pool.Stats(), float64(*steps)
		fmt.Printf("pool model=%s dtype=%s threads=%d nests=%.0f worker_parts=%.1f%% caller_only_nests=%.0f wakes=%.0f barrier_wait_ms=%.2f serial_regions=%.0f serial_nests=%.0f stalls=%.1f backoffs=%.1f (per step)\n",
			mname, dtype, *threads, float64(st.Nests)/n, 100*float64(st.WorkerParts)/float64(max(st.WorkerParts+st.CallerParts, 1)),
			float64(st.CallerNests)/n, float64(st.Wakes)/n, float64(st.WaitNanos)/n/1e6, float64(st.SerialRegions)/n, float64(st.SerialNests)/n, float64(st.Stalls)/n, float64(st.Backoffs)/n)
	}
	pool.Close()
	if *allocProfile != "" {
		writeAllocs(*allocProfile)
	}
}

// writeAllocs writes the allocation profile so far to file; compare the
// profile written after the warmup (file.warmup) with the final one by
// go tool pprof -sample_index=alloc_objects -base file.warmup BINARY file.
func writeAllocs(file string) {
	// The profile may be up to two garbage collections old.
	runtime.GC()
	runtime.GC()
	f, err := os.Create(file)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func join(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		if x < 10 {
			s[i] = fmt.Sprintf("%.3f", x) // the CNN's steps take 1-5 ms
		} else {
			s[i] = fmt.Sprintf("%.1f", x)
		}
	}
	return strings.Join(s, ",")
}

// tier is the best assembly tier the generated code runs here (the
// generated dispatch's rule: rt/cpu with OCANNLGEN_CPU).
func tier() string {
	switch {
	case cpu.Enabled(cpu.AVX512, "AVX512F", "AVX512VL"):
		return "avx512"
	case cpu.Enabled(cpu.AVX2, "AVX2", "FMA3"):
		return "avx2"
	}
	return "go"
}
