package loopir

import (
	"math"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// fuseCase lowers src, fuses keeping the named tensors of keep, and
// returns both programs.
func fuseCase(t *testing.T, src string, keep ...string) (p, q *Program, fused int) {
	t.Helper()
	g := testutil.Compile(t, src)
	p, err := Lower(g)
	if err != nil {
		t.Fatal(err)
	}
	k := map[int]bool{}
	for _, n := range keep {
		k[testutil.Named(t, g, n)] = true
	}
	q, fused = FusePointwise(p, k, nil)
	return p, q, fused
}

// TestFusePointwise: chains of single-use pointwise temporaries fuse
// into their reader, and the fused program computes the same bits as
// the unfused one (range-filled inputs, both element types); temporaries read
// twice, read by a reduction, or kept stay.
func TestFusePointwise(t *testing.T) {
	const chain = `
input x : 4, 3, 16 = range
input b : 16 = range
let y = relu (x + b) *. 2 - b`
	p, q, fused := fuseCase(t, chain, "x", "b", "y")
	if fused != 3 {
		t.Fatalf("fused %d temporaries, want 3:\n%s", fused, q.String())
	}
	nests := 0
	for _, o := range q.Ops {
		for _, s := range o.Body {
			if _, ok := s.(*For); ok {
				nests++
			}
		}
	}
	if nests != 1 {
		t.Errorf("%d loop nests after fusion, want 1:\n%s", nests, q.String())
	}
	if !strings.Contains(q.String(), "fused") {
		t.Errorf("the fused operation's description does not say so:\n%s", q.String())
	}
	sameOutputs(t, p, q)
	if _, p2, _ := fuseCase(t, chain, "x", "b", "y"); p2.String() != q.String() {
		t.Error("fusion is not deterministic")
	}
	for _, tc := range []struct{ name, src string }{
		{"read twice", "input x : 8, 16 = range\nlet t = x + 1\nlet y = t *. t\nlet z = y"},
		{"read by a reduction", "input x : 8, 16 = range\nlet t = x + 1\nlet y = t ++ \"ij => i\"\nlet z = y"},
		{"read by two nests", "input x : 8, 16 = range\nlet t = x + 1\nlet y = relu t\nlet z = t *. 3"},
	} {
		p, q, fused := fuseCase(t, tc.src, "x", "y", "z")
		if fused != 0 || q != p {
			t.Errorf("%s: fused %d:\n%s", tc.name, fused, q.String())
		}
	}
	// A kept temporary stays.
	if _, _, fused := fuseCase(t, "input x : 8, 16 = range\nlet t = x + 1\nlet y = relu t", "x", "y", "t"); fused != 0 {
		t.Errorf("a kept tensor was fused")
	}
}

// sameOutputs runs p and q with both interpreters and compares every
// named tensor, bit for bit.
func sameOutputs(t *testing.T, p, q *Program) {
	t.Helper()
	for _, elem := range []string{"float32", "float64"} {
		a, b := runValues[float32](t, p), runValues[float32](t, q)
		if elem == "float64" {
			a, b = runValues[float64](t, p), runValues[float64](t, q)
		}
		for _, n := range p.Graph.Named {
			va, vb := a(n.Tensor), b(n.Tensor)
			for i := range va {
				if math.Float64bits(va[i]) != math.Float64bits(vb[i]) {
					t.Errorf("%s: %s[%d] = %v fused, %v unfused", elem, n.Name, i, vb[i], va[i])
					break
				}
			}
		}
	}
}

// runValues runs p with the interpreter in T and returns its tensors'
// values.
func runValues[T float32 | float64](t *testing.T, p *Program) func(int) []float64 {
	t.Helper()
	s, err := Run[T](p)
	if err != nil {
		t.Fatal(err)
	}
	return s.Values
}
