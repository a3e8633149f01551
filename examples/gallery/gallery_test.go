package main

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	blasgonum "gonum.org/v1/gonum/blas/gonum"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// loaded caches loadKernels's result: compiling the gallery (the go
// command and the whole generator) takes seconds, and the tests only
// read the kernels.
var loaded struct {
	sync.Mutex
	ks map[string]*desc.Kernel
}

func kernelsOrSkip(t testing.TB) map[string]*desc.Kernel {
	t.Helper()
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.ks != nil {
		return loaded.ks
	}
	ks, err := loadKernels(sourceDir())
	if err != nil {
		t.Fatalf("compiling the gallery: %v", err)
	}
	loaded.ks = ks
	return ks
}

// TestEntriesCoverKernels keeps the call table in step with the annotated
// functions: every compiled kernel has an entry and vice versa.
func TestEntriesCoverKernels(t *testing.T) {
	ks := kernelsOrSkip(t)
	var got []string
	for _, e := range entries() {
		got = append(got, e.name)
		if ks[e.name] == nil {
			t.Errorf("entry %s has no compiled kernel", e.name)
		}
	}
	for name := range ks {
		if !slices.Contains(got, name) {
			t.Errorf("kernel %s has no entry in entries()", name)
		}
	}
}

// shortWork is the most loop iterations a kernel's interpreted check may
// take under -short (MatMul512 takes 134M, about 8 s per seed).
const shortWork = 20_000_000

// work counts the innermost statement executions of a lowered program.
func work(stmts []loopir.Stmt) int {
	n := 0
	for _, s := range stmts {
		if f, ok := s.(*loopir.For); ok {
			n += f.Extent * work(f.Body)
		} else {
			n++
		}
	}
	return n
}

// defaultWork is the most loop iterations a kernel's interpreted check
// may take on three seeds without the end-to-end checks (OCANNLGEN_E2E=1):
// a kernel over it is checked on one seed, and one over shortWork
// (MatMul512) is skipped, as under -short.
const defaultWork = 1_000_000

// seedsFor is the number of random operand sets TestKernelsMatchInterpreter
// checks a kernel of n interpreted iterations on (0: skip it).
func seedsFor(n int) uint64 {
	switch {
	case testing.Short():
		if n > shortWork {
			return 0
		}
		return 1
	case testutil.IsEndToEnd():
		return 3
	case n > shortWork:
		return 0
	case n > defaultWork:
		return 1
	}
	return 3
}

// TestKernelsMatchInterpreter runs every generated kernel on three sets of
// random operands (one under -short, where kernels over shortWork
// interpreted iterations are skipped; without OCANNLGEN_E2E=1, one for a
// kernel over defaultWork and none over shortWork) and compares the output with the
// loop-IR interpreter (float32: 5e-5 relative; float64: 1e-12), and
// checks that the kernel allocates nothing. The float32 tolerance allows
// for the assembly kernels' reassociated sums (vector lanes, k blocks,
// FMA): the interpreter adds in loop order, and a sum of K products may
// then differ by about K*2^-24 of the magnitudes summed (MLPLayer,
// K=784, differs by up to 1.5e-5). Run the test under
// OCANNLGEN_CPU=purego to check the Go loops.
func TestKernelsMatchInterpreter(t *testing.T) {
	ks := kernelsOrSkip(t)
	for _, e := range entries() {
		t.Run(e.name, func(t *testing.T) {
			k := ks[e.name]
			n := 0
			for _, op := range k.Prog.Ops {
				n += work(op.Body)
			}
			seeds := seedsFor(n)
			if seeds == 0 {
				if testing.Short() {
					t.Skipf("-short: %d interpreted iterations", n)
				}
				t.Skipf("%d interpreted iterations: an end-to-end check (OCANNLGEN_E2E=1)", n)
			}
			tol := tolF32
			if k.Elem == "float64" {
				tol = 1e-12
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				d, err := check(e, k, seed)
				if err != nil {
					t.Fatal(err)
				}
				if d > tol {
					t.Errorf("seed %d: max relative error %.3g > %.0g", seed, d, tol)
				}
			}
			args, _, err := operands(e.fn, k, rand.New(rand.NewPCG(5, 5)))
			if err != nil {
				t.Fatal(err)
			}
			if a := testing.AllocsPerRun(3, func() { e.call(args) }); a != 0 {
				t.Errorf("%v allocs per call, want 0", a)
			}
		})
	}
}

// TestWrongSliceLength: a slice of the wrong length panics with a message
// naming the kernel, the operand and the expected length.
func TestWrongSliceLength(t *testing.T) {
	defer func() {
		r := recover()
		msg := fmt.Sprint(r)
		want := "ocannlgen: ocannlSumRows: operand x has length 10, want 6400"
		if msg != want {
			t.Fatalf("panic %q, want %q", msg, want)
		}
	}()
	SumRows(make([]float32, 10), make([]float32, Rows))
}

// BenchmarkKernels times every gallery kernel (0 allocs/op expected).
func BenchmarkKernels(b *testing.B) {
	ks := kernelsOrSkip(b)
	for _, e := range entries() {
		k := ks[e.name]
		args, _, err := operands(e.fn, k, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		fl := flops(k)
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.call(args)
			}
			if fl > 0 {
				b.ReportMetric(fl*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
			}
		})
	}
}

// naiveMatMul is the textbook i-j-k triple loop over the same arrays,
// accumulating each cell in a local variable.
func naiveMatMul(m, n, k int, a, bm, c []float32) {
	for i := range m {
		for j := range n {
			var s float32
			for l := range k {
				s += a[i*k+l] * bm[l*n+j]
			}
			c[i*n+j] = s
		}
	}
}

// flat views a pointer to a nested float32 array as a flat slice.
func flat32(p any, n int) []float32 {
	return flatten(reflect.ValueOf(p)).Slice(0, n).Interface().([]float32)
}

// BenchmarkMatMul compares, in one run, the generated kernel, a naive
// i-j-k triple loop and gonum's pure-Go Sgemm on the same operands, for
// 64, 256 and 512 cubes and the MLP layer 32x784x128.
func BenchmarkMatMul(b *testing.B) {
	type shape struct {
		name    string
		m, k, n int
		call    func(a, bm, c any)
		newArgs func() (any, any, any)
	}
	shapes := []shape{
		{"64", 64, 64, 64, func(a, bm, c any) { MatMul64(a.(*[64][64]float32), bm.(*[64][64]float32), c.(*[64][64]float32)) },
			func() (any, any, any) { return new([64][64]float32), new([64][64]float32), new([64][64]float32) }},
		{"256", 256, 256, 256, func(a, bm, c any) {
			MatMul256(a.(*[256][256]float32), bm.(*[256][256]float32), c.(*[256][256]float32))
		}, func() (any, any, any) { return new([256][256]float32), new([256][256]float32), new([256][256]float32) }},
		{"512", 512, 512, 512, func(a, bm, c any) {
			MatMul512(a.(*[512][512]float32), bm.(*[512][512]float32), c.(*[512][512]float32))
		}, func() (any, any, any) { return new([512][512]float32), new([512][512]float32), new([512][512]float32) }},
		{"mlp32x784x128", 32, 784, 128, func(a, bm, c any) {
			MLPLayer(a.(*[32][784]float32), bm.(*[784][128]float32), c.(*[32][128]float32))
		}, func() (any, any, any) { return new([32][784]float32), new([784][128]float32), new([32][128]float32) }},
	}
	for _, s := range shapes {
		a, bm, c := s.newArgs()
		fa, fb, fc := flat32(a, s.m*s.k), flat32(bm, s.k*s.n), flat32(c, s.m*s.n)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range fa {
			fa[i] = rng.Float32()*2 - 1
		}
		for i := range fb {
			fb[i] = rng.Float32()*2 - 1
		}
		gflops := func(b *testing.B) {
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		}
		b.Run(s.name+"/generated", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.call(a, bm, c)
			}
			gflops(b)
		})
		b.Run(s.name+"/naive", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				naiveMatMul(s.m, s.n, s.k, fa, fb, fc)
			}
			gflops(b)
		})
		b.Run(s.name+"/gonum", func(b *testing.B) {
			b.ReportAllocs()
			impl := blasgonum.Implementation{}
			for b.Loop() {
				impl.Sgemm(blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, fa, s.k, fb, s.n, 0, fc, s.n)
			}
			gflops(b)
		})
	}
}
