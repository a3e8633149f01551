package main

import (
	"fmt"
	"github.com/ocannlgen/ocannlgen/bench/internal/host"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/bench/kernels"
	"github.com/ocannlgen/ocannlgen/bench/models"
	"github.com/ocannlgen/ocannlgen/rt"
)

// scaleImpl is one implementation timed at 1 and at 2 threads: set
// selects the number of threads, run makes one call.
type scaleImpl struct {
	name string
	set  func(threads int)
	run  func()
}

type scaleCase struct {
	name  string
	impls []scaleImpl
}

// scaling prints, in one interleaved run, the wall time per call of each
// implementation at 1 and 2 threads (GOMAXPROCS 2): the generated
// kernels and training steps on an rt.Pool of 1 and of 2 threads, and
// OpenBLAS with 1 and 2 threads. Wall time, not CPU time: two threads
// spend more CPU time to finish sooner.
func scaling(reps int, only string, spin time.Duration) {
	runtime.GOMAXPROCS(2)
	// Config 1: one thread; 2: two (a kernel call's region keeps the
	// worker awake between its nests for up to spin; a straggling worker
	// makes the pool back off to one thread for a while); 3: two, as
	// before regions: the worker sleeps between nests
	// (rt.Pool.SetRegionSpin(0): every nest wakes it) and no back-off.
	pools := map[int]*rt.Pool{1: rt.NewPool(1), 2: rt.NewPool(2), 3: rt.NewPool(2)}
	pools[2].SetRegionSpin(spin)
	pools[3].SetRegionSpin(0)
	pools[3].SetStraggleBackoff(0)
	genSet := func(th int) { kernels.SetTier(bestTier()); rt.SetDefaultPool(pools[th]) }
	r := rand.New(rand.NewPCG(3, 4))
	var cases []scaleCase

	a, b, c, cb := make([]float32, 512*512), make([]float32, 512*512), make([]float32, 512*512), make([]float32, 512*512)
	fill(r, a)
	fill(r, b)
	cases = append(cases, scaleCase{"matmul 512x512x512", []scaleImpl{
		{"generated " + bestTier(), genSet, func() {
			kernels.MatMul512((*[512][512]float32)(unsafe.Pointer(&a[0])), (*[512][512]float32)(unsafe.Pointer(&b[0])), (*[512][512]float32)(unsafe.Pointer(&c[0])))
		}},
		{"OpenBLAS sgemm", func(th int) { blasThreads(min(th, 2)) }, func() { sgemm(512, 512, 512, a, 512, b, 512, false, cb, 512) }},
	}})

	const nb, h, w, ic, oc = 8, 32, 32, 64, 64
	img := make([]float32, nb*h*w*ic)
	padded := make([]float32, nb*(h+2)*(w+2)*ic)
	ker := make([]float32, oc*9*ic)
	out := make([]float32, nb*h*w*oc)
	fill(r, img)
	fill(r, ker)
	fill(r, padded)
	cases = append(cases, scaleCase{"conv2d 8x32x32, 64->64, 3x3", []scaleImpl{
		{"generated " + bestTier() + ", padded copy in the kernel", genSet, func() {
			kernels.Conv2D((*[nb][h][w][ic]float32)(unsafe.Pointer(&img[0])), (*[oc][3][3][ic]float32)(unsafe.Pointer(&ker[0])), (*[nb][h][w][oc]float32)(unsafe.Pointer(&out[0])))
		}},
		{"generated " + bestTier() + ", input kept padded by the caller", genSet, func() {
			kernels.Conv2DPrepadded((*[nb][h + 2][w + 2][ic]float32)(unsafe.Pointer(&padded[0])), (*[oc][3][3][ic]float32)(unsafe.Pointer(&ker[0])), (*[nb][h][w][oc]float32)(unsafe.Pointer(&out[0])))
		}},
	}})

	cnn := new(models.CNN)
	cnn.Init(1)
	var cx [256][12][12][1]float32
	var cy [256][4]float32
	for i := range cx {
		for p := range 12 {
			for q := range 12 {
				cx[i][p][q][0] = r.Float32()
			}
		}
		cy[i][r.IntN(4)] = 1
	}
	rev := new(models.Reverser)
	rev.Init(1)
	var rx, ry [256][8][10]float32
	for i := range rx {
		for p := range 8 {
			t := r.IntN(10)
			rx[i][p][t], ry[i][7-p][t] = 1, 1
		}
	}
	cases = append(cases,
		scaleCase{"CNN TrainStep, batch 256", []scaleImpl{{"generated " + bestTier(), func(th int) {
			kernels.SetTier(bestTier())
			cnn.Pool = pools[th]
		}, func() { cnn.TrainStep(&cx, &cy) }}}},
		scaleCase{"attention TrainStep, batch 256", []scaleImpl{{"generated " + bestTier(), func(th int) {
			kernels.SetTier(bestTier())
			rev.Pool = pools[th]
		}, func() { rev.TrainStep(&rx, &ry) }}}},
	)

	fmt.Println()
	fmt.Printf("CPUs this process gets with 2 busy goroutines (before the table): %.2f\n", host.CPUsAvailable())
	fmt.Println("| case | implementation | 1 thread: best wall µs/call | 2 threads | speedup | 2 threads, worker asleep between nests, no back-off | speedup | median speedups | paired median speedup, 2 threads | process CPU µs/call: 1 thread, 2, 2 asleep (best) |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range cases {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		for _, im := range c.impls {
			timeImpl(c.name, im, reps)
		}
	}
	blasThreads(1)
	rt.SetDefaultPool(pools[1])
}

// timeImpl prints one row: the interleaved turns of the three configs,
// best and median wall time per call, and process CPU time.
func timeImpl(name string, im scaleImpl, reps int) {
	cfgs := []int{1, 2, 3}
	iters := map[int]int{}
	for _, th := range cfgs {
		im.set(th)
		im.run()
		iters[th] = calibrate(im.run)
	}
	wall, cpu := map[int][]float64{}, map[int][]float64{}
	for rep := range reps {
		order := cfgs
		if rep%2 == 1 {
			order = []int{3, 2, 1} // ABBA: a drift of the host's load between configs cancels in the pairs
		}
		for _, th := range order {
			im.set(th)
			t0, c0 := time.Now(), host.ProcCPU()
			for range iters[th] {
				im.run()
			}
			wall[th] = append(wall[th], float64(time.Since(t0).Microseconds())/float64(iters[th]))
			cpu[th] = append(cpu[th], float64((host.ProcCPU()-c0).Microseconds())/float64(iters[th]))
		}
	}
	b1, b2, b3 := slices.Min(wall[1]), slices.Min(wall[2]), slices.Min(wall[3])
	// The paired speedup: per rep, the 1-thread time over the 2-thread
	// time measured next to it (the host's load, which drifts over a
	// turn on a shared machine, is about the same within a pair).
	paired := make([]float64, reps)
	for i := range paired {
		paired[i] = wall[1][i] / wall[2][i]
	}
	fmt.Printf("| %s | %s | %.1f | %.1f | %.2fx | %.1f | %.2fx | %.2fx, %.2fx | %.2fx | %.0f, %.0f, %.0f |\n", name, im.name, b1, b2, b1/b2, b3, b1/b3,
		median(wall[1])/median(wall[2]), median(wall[1])/median(wall[3]), median(paired), slices.Min(cpu[1]), slices.Min(cpu[2]), slices.Min(cpu[3]))
}

// bestTier is the best assembly tier this CPU runs.
func bestTier() string {
	for _, t := range []string{"avx512", "avx2"} {
		if kernels.SetTier(t) {
			return t
		}
	}
	return "go"
}
