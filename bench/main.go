// Command bench compares, in one interleaved run on one thread, the
// generated kernels with their assembly (emit/asm) and with their Go
// loops, gonum's pure-Go Sgemm and OpenBLAS through cgo, on float32
// matrix products and a padded 3x3 convolution (against im2col +
// OpenBLAS). See docs/benchmarks.md for the command and the results.
//
// Every implementation of a case runs in turn, reps times; each turn runs
// the kernel enough times to take about 0.1 s and records the wall time
// and the CPU time of the measuring thread (CLOCK_THREAD_CPUTIME_ID) per
// call. The table reports the best turn's wall time (the least disturbed
// on a shared machine; GFLOP/s come from it) and the medians. Thread CPU
// time leaves out work that other threads do (gonum's goroutines), so it
// is a check on the wall time of the single-thread implementations only.
package main

import (
	"flag"
	"fmt"
	"github.com/ocannlgen/ocannlgen/bench/internal/host"
	"github.com/ocannlgen/ocannlgen/rt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	blasgonum "gonum.org/v1/gonum/blas/gonum"

	"github.com/ocannlgen/ocannlgen/bench/kernels"
)

type impl struct {
	name string
	run  func()
}

// setTier selects the generated code's tier for a "generated ..."
// implementation.
func (im impl) setTier() {
	switch im.name {
	case "generated AVX-512":
		kernels.SetTier("avx512")
	case "generated, best tier, input kept padded by the caller":
		if !kernels.SetTier("avx512") {
			kernels.SetTier("avx2")
		}
	case "generated AVX2":
		kernels.SetTier("avx2")
	default:
		kernels.SetTier("go")
	}
}

// generated lists the generated tiers this CPU runs, best first, and the
// Go loops, each writing its own output (one per tier, taken from outs in
// order); used is the outputs of the tiers listed.
func generated(run func(out []float32), outs ...[]float32) (ims []impl, used [][]float32) {
	for i, t := range []struct{ name, tier string }{{"generated AVX-512", "avx512"}, {"generated AVX2", "avx2"}, {"generated Go", "go"}} {
		if kernels.SetTier(t.tier) {
			out := outs[i]
			ims = append(ims, impl{t.name, func() { run(out) }})
			used = append(used, out)
		}
	}
	return ims, used
}

func tiers() string {
	var ts []string
	for _, t := range []string{"avx512", "avx2"} {
		if kernels.SetTier(t) {
			ts = append(ts, t)
		}
	}
	return strings.Join(ts, ", ")
}

type bcase struct {
	name  string
	flops float64
	impls []impl
	check func() float64 // max relative difference of the outputs
}

// cpuNow is the CPU time of the calling thread (Linux
// clock_gettime(CLOCK_THREAD_CPUTIME_ID), nanosecond resolution). main
// locks its goroutine to one thread, and every single-thread
// implementation (the generated kernels on a pool of one, OpenBLAS at one
// thread through cgo) runs on it, so other threads' time (the runtime's,
// OpenBLAS's idle workers') is not counted.
func cpuNow() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func fill(r *rand.Rand, xs []float32) {
	for i := range xs {
		xs[i] = float32(r.Float64()*2 - 1)
	}
}

func maxRel(a, b []float32) float64 {
	w := 0.0
	for i := range a {
		w = math.Max(w, math.Abs(float64(a[i]-b[i]))/math.Max(1, math.Abs(float64(b[i]))))
	}
	return w
}

func main() {
	reps := flag.Int("reps", 5, "turns per implementation")
	only := flag.String("run", "", "only cases whose name contains this")
	scale := flag.Bool("scaling", false, "time 1 against 2 threads (wall time) instead")
	spin := flag.Duration("regionspin", rt.DefaultRegionSpin, "with -scaling: how long the worker polls for the next nest in the 2-thread pool (rt.Pool.SetRegionSpin)")
	probe := flag.Bool("cpuprobe", false, "print the CPUs two busy goroutines get (as -scaling does before its table) and exit")
	flag.Parse()
	if *probe {
		runtime.GOMAXPROCS(2)
		fmt.Printf("%.2f\n", host.CPUsAvailable())
		return
	}
	if *scale {
		core := blasInit()
		fmt.Printf("cpu: %s (%d logical CPUs)\n", host.CPUModel(), runtime.NumCPU())
		fmt.Printf("go: %s, GOMAXPROCS=2; OpenBLAS core: %s (OPENBLAS_CORETYPE=%q); assembly tier: %s\n", runtime.Version(), core, os.Getenv("OPENBLAS_CORETYPE"), bestTier())
		scaling(*reps, *only, *spin)
		return
	}
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	core := blasInit()
	fmt.Printf("cpu: %s\n", host.CPUModel())
	fmt.Printf("go: %s, GOMAXPROCS=1; OpenBLAS core: %s (OPENBLAS_CORETYPE=%q); assembly tiers available: %s (OCANNLGEN_CPU=%q)\n",
		runtime.Version(), core, os.Getenv("OPENBLAS_CORETYPE"), tiers(), os.Getenv("OCANNLGEN_CPU"))
	r := rand.New(rand.NewPCG(1, 2))
	var cases []bcase
	cases = append(cases, matmulCases(r)...)
	cases = append(cases, convCase(r))
	cases = append(cases, layoutCases(r)...)
	fmt.Println()
	fmt.Println("| case | implementation | GFLOP/s (best wall) | best wall µs/call | median wall µs/call | best thread-CPU µs/call | median thread-CPU µs/call | allocs/call |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, c := range cases {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
		if d := c.check(); d > 1e-3 {
			fmt.Fprintf(os.Stderr, "%s: implementations disagree (max relative difference %.3g)\n", c.name, d)
			os.Exit(1)
		}
		iters := make([]int, len(c.impls))
		for i, im := range c.impls {
			iters[i] = calibrate(im.run)
		}
		cpu := make([][]float64, len(c.impls))
		wall := make([][]float64, len(c.impls))
		for range *reps {
			for i, im := range c.impls {
				im.setTier()
				c0, w0 := cpuNow(), time.Now()
				for range iters[i] {
					im.run()
				}
				cpu[i] = append(cpu[i], float64((cpuNow()-c0).Microseconds())/float64(iters[i]))
				wall[i] = append(wall[i], float64(time.Since(w0).Microseconds())/float64(iters[i]))
			}
		}
		for i, im := range c.impls {
			best := slices.Min(wall[i])
			im.setTier()
			fmt.Printf("| %s | %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.0f |\n", c.name, im.name, c.flops/best/1e3, best, median(wall[i]), slices.Min(cpu[i]), median(cpu[i]), allocs(im.run))
		}
	}
}

// allocs counts the heap allocations of one call.
func allocs(f func()) float64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	for range 3 {
		f()
	}
	runtime.ReadMemStats(&b)
	return float64(b.Mallocs-a.Mallocs) / 3
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// calibrate returns how many calls take about 0.1 s.
func calibrate(f func()) int {
	n := 1
	for {
		t := time.Now()
		for range n {
			f()
		}
		if d := time.Since(t); d > 20*time.Millisecond || n > 1<<20 {
			return max(1, int(float64(n)*0.1/d.Seconds()))
		}
		n *= 2
	}
}

// matmulCases: C = A*B for the three shapes.
func matmulCases(r *rand.Rand) []bcase {
	var out []bcase
	add := func(name string, m, k, n int, gen func(a, b, c []float32)) {
		a, b := make([]float32, m*k), make([]float32, k*n)
		fill(r, a)
		fill(r, b)
		outs := [][]float32{make([]float32, m*n), make([]float32, m*n), make([]float32, m*n)}
		cgn, cb := make([]float32, m*n), make([]float32, m*n)
		gn := blasgonum.Implementation{}
		bc := bcase{name: name, flops: 2 * float64(m*n*k)}
		gims, used := generated(func(out []float32) { gen(a, b, out) }, outs...)
		bc.impls = append(gims,
			impl{"gonum Sgemm", func() { gn.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, cgn, n) }},
			impl{"OpenBLAS sgemm", func() { sgemm(m, n, k, a, k, b, n, false, cb, n) }})
		bc.check = func() float64 {
			for _, im := range bc.impls {
				im.setTier()
				im.run()
			}
			d := maxRel(cgn, cb)
			for _, o := range used {
				d = max(d, maxRel(o, cb))
			}
			return d
		}
		out = append(out, bc)
	}
	add("matmul 512x512x512", 512, 512, 512, func(a, b, c []float32) {
		kernels.MatMul512((*[512][512]float32)(unsafe.Pointer(&a[0])), (*[512][512]float32)(unsafe.Pointer(&b[0])), (*[512][512]float32)(unsafe.Pointer(&c[0])))
	})
	add("matmul 64x64x64", 64, 64, 64, func(a, b, c []float32) {
		kernels.MatMul64((*[64][64]float32)(unsafe.Pointer(&a[0])), (*[64][64]float32)(unsafe.Pointer(&b[0])), (*[64][64]float32)(unsafe.Pointer(&c[0])))
	})
	add("MLP layer 32x784x128", 32, 784, 128, func(a, b, c []float32) {
		kernels.MLPLayer((*[32][784]float32)(unsafe.Pointer(&a[0])), (*[784][128]float32)(unsafe.Pointer(&b[0])), (*[32][128]float32)(unsafe.Pointer(&c[0])))
	})
	return out
}

// layoutCases: the four layouts of the 1024x384x1536 product (NN, NT,
// TN, TT), each against OpenBLAS with the same transposes.
func layoutCases(r *rand.Rand) []bcase {
	const m, k, n = 1024, 384, 1536
	var out []bcase
	add := func(name string, ta, tb bool, gen func(a, b, c []float32)) {
		a, b := make([]float32, m*k), make([]float32, k*n)
		fill(r, a)
		fill(r, b)
		lda, ldb := k, n
		if ta {
			lda = m
		}
		if tb {
			ldb = k
		}
		outs := [][]float32{make([]float32, m*n), make([]float32, m*n), make([]float32, m*n)}
		cb := make([]float32, m*n)
		bc := bcase{name: "layout " + name + " 1024x384x1536", flops: 2 * float64(m*n*k)}
		gims, used := generated(func(out []float32) { gen(a, b, out) }, outs...)
		bc.impls = append(gims, impl{"OpenBLAS sgemm", func() { sgemmT(m, n, k, a, lda, ta, b, ldb, tb, cb, n) }})
		bc.check = func() float64 {
			for _, im := range bc.impls {
				im.setTier()
				im.run()
			}
			d := 0.0
			for _, o := range used {
				d = max(d, maxRel(o, cb))
			}
			return d
		}
		out = append(out, bc)
	}
	p := func(s []float32) unsafe.Pointer { return unsafe.Pointer(&s[0]) }
	add("NN", false, false, func(a, b, c []float32) {
		kernels.LayoutNN((*[m][k]float32)(p(a)), (*[k][n]float32)(p(b)), (*[m][n]float32)(p(c)))
	})
	add("NT", false, true, func(a, b, c []float32) {
		kernels.LayoutNT((*[m][k]float32)(p(a)), (*[n][k]float32)(p(b)), (*[m][n]float32)(p(c)))
	})
	add("TN", true, false, func(a, b, c []float32) {
		kernels.LayoutTN((*[k][m]float32)(p(a)), (*[k][n]float32)(p(b)), (*[m][n]float32)(p(c)))
	})
	add("TT", true, true, func(a, b, c []float32) {
		kernels.LayoutTT((*[k][m]float32)(p(a)), (*[n][k]float32)(p(b)), (*[m][n]float32)(p(c)))
	})
	return out
}

// convCase: the padded 3x3 convolution, batch 8, 32x32, 64 -> 64
// channels, NHWC, kernel [oc][kh][kw][ic]; the peer is im2col (a
// 8192 x 576 patch matrix, zero at the border) then OpenBLAS sgemm with
// the kernel as the transposed right operand.
func convCase(r *rand.Rand) bcase {
	const nb, h, w, ic, oc = 8, 32, 32, 64, 64
	img := make([]float32, nb*h*w*ic)
	ker := make([]float32, oc*3*3*ic)
	fill(r, img)
	fill(r, ker)
	outs := [][]float32{make([]float32, nb*h*w*oc), make([]float32, nb*h*w*oc), make([]float32, nb*h*w*oc)}
	cb := make([]float32, nb*h*w*oc)
	cols := make([]float32, nb*h*w*9*ic)
	gen := func(c []float32) {
		kernels.Conv2D((*[nb][h][w][ic]float32)(unsafe.Pointer(&img[0])), (*[oc][3][3][ic]float32)(unsafe.Pointer(&ker[0])), (*[nb][h][w][oc]float32)(unsafe.Pointer(&c[0])))
	}
	im2col := func() {
		for n := range nb {
			for y := range h {
				for x := range w {
					row := cols[((n*h+y)*w+x)*9*ic:][:9*ic]
					for kh := range 3 {
						for kw := range 3 {
							dst := row[(kh*3+kw)*ic:][:ic]
							sy, sx := y+kh-1, x+kw-1
							if sy < 0 || sy >= h || sx < 0 || sx >= w {
								clear(dst)
								continue
							}
							copy(dst, img[((n*h+sy)*w+sx)*ic:][:ic])
						}
					}
				}
			}
		}
		sgemm(nb*h*w, oc, 9*ic, cols, 9*ic, ker, 9*ic, true, cb, oc)
	}
	padded := make([]float32, nb*(h+2)*(w+2)*ic)
	for n := range nb {
		for y := range h {
			for x := range w {
				copy(padded[((n*(h+2)+y+1)*(w+2)+x+1)*ic:][:ic], img[((n*h+y)*w+x)*ic:][:ic])
			}
		}
	}
	pre := make([]float32, nb*h*w*oc)
	bc := bcase{name: "conv2d 8x32x32, 64->64, 3x3 padded", flops: 2 * float64(nb*h*w*oc*9*ic)}
	gims, used := generated(gen, outs...)
	bc.impls = append(gims,
		impl{"generated, best tier, input kept padded by the caller", func() {
			kernels.Conv2DPrepadded((*[nb][h + 2][w + 2][ic]float32)(unsafe.Pointer(&padded[0])), (*[oc][3][3][ic]float32)(unsafe.Pointer(&ker[0])), (*[nb][h][w][oc]float32)(unsafe.Pointer(&pre[0])))
		}},
		impl{"im2col + OpenBLAS sgemm", im2col})
	bc.check = func() float64 {
		for _, im := range bc.impls {
			im.setTier()
			im.run()
		}
		d := maxRel(pre, cb)
		for _, o := range used {
			d = max(d, maxRel(o, cb))
		}
		return d
	}
	return bc
}
