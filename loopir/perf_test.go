package loopir

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// chainGraph builds n operations on 16x16 matrices, alternating a matrix
// product with w and a pointwise tanh: x_{k+1} = tanh(w x_k).
func chainGraph(n int, wv, xv []float64) (*inference.Graph, string) {
	b := newG()
	w := b.input("w", wv, 16, 16)
	x := b.input("x0", xv, 16, 16)
	last := ""
	for k := 0; k < n; k++ {
		if k%2 == 0 {
			r := b.result(fmt.Sprintf("m%d", k), 16, 16)
			b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "mul", Accum: "add", InitNeutral: true, LHS: r, RHS: []int{w, x},
				Proj: proj(flags{surj: true, zero: true, acc: true}, product(f1(0, 16), f1(1, 16), f1(2, 16)),
					ix(it(0), it(1)), ix(it(0), it(2)), ix(it(2), it(1)))})
			x = r
		} else {
			r := b.result(fmt.Sprintf("t%d", k), 16, 16)
			b.op(&inference.Op{Kind: inference.OpPointwise, Prim: "tanh", LHS: r, RHS: []int{x},
				Proj: proj(flags{inj: true, surj: true}, product(f1(0, 16), f1(1, 16)), ix(it(0), it(1)), ix(it(0), it(1)))})
			x = r
		}
		last = b.g.Tensors[x].Name
	}
	return b.g, last
}

// TestThousandOps runs a 1000-operation program and checks its result
// against a direct computation. (Timing is logged, not asserted.)
func TestThousandOps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// w permutes rows, so errors are not amplified along the chain and
	// the float32 run stays within 1e-5 of the float64 one.
	xv := randValues(r, 256)
	wv := make([]float64, 256)
	for i := range 16 {
		wv[i*16+(i*5+3)%16] = 1
	}
	g, last := chainGraph(1000, wv, xv)
	start := time.Now()
	p, s := runBoth(t, g)
	t.Logf("lowered and ran 1000 operations twice (float64, float32) in %v", time.Since(start))
	x := append([]float64(nil), xv...)
	for k := 0; k < 1000; k++ {
		y := make([]float64, 256)
		for i := range 16 {
			for j := range 16 {
				if k%2 == 0 {
					for l := range 16 {
						y[i*16+j] += wv[i*16+l] * x[l*16+j]
					}
				} else {
					y[i*16+j] = math.Tanh(x[i*16+j])
				}
			}
		}
		x = y
	}
	got := s.Values(p.Lookup(last))
	for k := range x {
		if !testutil.CloseRel(got[k], x[k], 1e-12) || x[k] == 0 {
			t.Fatalf("%s[%d] = %v, want %v", last, k, got[k], x[k])
		}
	}
}

func BenchmarkRun1000(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	g, _ := chainGraph(1000, randValues(r, 256), randValues(r, 256))
	p, err := Lower(g)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Run[float32](p); err != nil {
			b.Fatal(err)
		}
	}
}
