package autodiff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// The winner rule of max and min reductions (issue 27): the first cell
// that attains the maximum, in iteration order, takes the whole gradient,
// as PyTorch's max_pool2d does. These tests run the gradient program in
// the loop-IR interpreter on inputs with many ties and compare every
// gradient with a reference written from that rule (plain loops, no
// loop IR). The generated kernels of every tier are checked on the same
// rule in internal/tiers and examples/zoo.

// tieRun builds and runs the gradient program of src (whose loss is
// "loss") with the given inputs (by name; others keep their
// initialization) and returns the gradients of the named tensors.
func tieRun(t *testing.T, src string, in map[string][]float64, of ...string) map[string][]float64 {
	t.Helper()
	g, err := inference.InferSource(strings.TrimSpace(src) + "\n")
	if err != nil {
		t.Fatalf("inference: %v", err)
	}
	if err := inference.DeriveProjections(g); err != nil {
		t.Fatalf("projections: %v", err)
	}
	id := func(name string) int {
		for _, n := range g.Named {
			if n.Name == name {
				return n.Tensor
			}
		}
		t.Fatalf("no tensor named %q", name)
		return -1
	}
	gr, err := Backward(g, id("loss"))
	if err != nil {
		t.Fatalf("Backward: %v", err)
	}
	inputs := map[int][]float64{}
	for n, v := range in {
		inputs[id(n)] = v
	}
	s, err := loopir.RunWith[float64](gr.Program, inputs)
	if err != nil {
		t.Fatalf("gradient run: %v", err)
	}
	out := map[string][]float64{}
	for _, n := range of {
		gi := gr.Of(id(n))
		if gi < 0 {
			t.Fatalf("%s has no gradient", n)
		}
		out[n] = s.Values(gi)
	}
	return out
}

// levels draws n values from {0, 1, ..., k-1}: many ties.
func levels(r *rand.Rand, n, k int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(r.IntN(k))
	}
	return out
}

func sameFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// TestMaxTiesFirstWinner pins the two examples: a 2x2 max pool
// over four equal cells and `@^^` over [2, 2, 1].
func TestMaxTiesFirstWinner(t *testing.T) {
	pool := `input x : 2, 2, 1
let y = x @^^ "2*oh<+wh, 2*ow<+ww, c => oh, ow, c" ["wh"; "ww"]
dim wh = 2
dim ww = 2
let loss = y ++ "... => 0"`
	g := tieRun(t, pool, map[string][]float64{"x": {3, 3, 3, 3}}, "x")
	sameFloats(t, "2x2 pool of four equal cells", g["x"], []float64{1, 0, 0, 0})

	row := `input x : 3
let loss = x @^^ "i => 0"`
	g = tieRun(t, row, map[string][]float64{"x": {2, 2, 1}}, "x")
	sameFloats(t, "@^^ over [2, 2, 1]", g["x"], []float64{1, 0, 0})

	min := `input x : 4
{ m } =:@- x ~logic:"i => 0"
let loss = m ++ "... => 0"`
	g = tieRun(t, min, map[string][]float64{"x": {5, 1, 3, 1}}, "x")
	sameFloats(t, "min over [5, 1, 3, 1]", g["x"], []float64{0, 1, 0, 0})
}

// TestMaxPoolTiesAsPyTorch checks pooling on inputs drawn from three
// levels, with non-overlapping and overlapping windows, per channel and
// batch row, against max_pool2d's rule: the gradient of each output goes
// to the first maximal cell of its window in row-major order.
func TestMaxPoolTiesAsPyTorch(t *testing.T) {
	for _, c := range []struct{ B, H, W, C, win, stride int }{
		{2, 6, 4, 3, 2, 2},
		{1, 5, 5, 2, 3, 1}, // overlapping windows: a cell can win for several outputs
		{2, 7, 7, 1, 3, 2},
		{1, 4, 4, 2, 2, 1},
	} {
		name := fmt.Sprintf("%dx%dx%dx%d window %d stride %d", c.B, c.H, c.W, c.C, c.win, c.stride)
		t.Run(name, func(t *testing.T) {
			src := fmt.Sprintf(`input x : %d | %d, %d, %d
leaf rw
let y = x @^^ "... | %d*oh<+wh, %d*ow<+ww, ..c.. => ... | oh, ow, ..c.." ["wh"; "ww"]
dim wh = %d
dim ww = %d
let loss = (y *. rw) ++ "...|...->... => 0"`, c.B, c.H, c.W, c.C, c.stride, c.stride, c.win, c.win)
			r := rand.New(rand.NewPCG(seedOf(name), 27))
			x := levels(r, c.B*c.H*c.W*c.C, 3)
			oh, ow := (c.H-c.win)/c.stride+1, (c.W-c.win)/c.stride+1
			rw := make([]float64, c.B*oh*ow*c.C)
			for i := range rw {
				rw[i] = float64(1 + r.IntN(9)) // distinct-ish, exact weights
			}
			g := tieRun(t, src, map[string][]float64{"x": x, "rw": rw}, "x")
			want := make([]float64, len(x))
			at := func(b, h, w, ch int) int { return ((b*c.H+h)*c.W+w)*c.C + ch }
			for b := range c.B {
				for i := range oh {
					for j := range ow {
						for ch := range c.C {
							best := -1
							for u := range c.win {
								for v := range c.win {
									k := at(b, c.stride*i+u, c.stride*j+v, ch)
									if best < 0 || x[k] > x[best] {
										best = k
									}
								}
							}
							want[best] += rw[((b*oh+i)*ow+j)*c.C+ch]
						}
					}
				}
			}
			sameFloats(t, "x.grad", g["x"], want)
		})
	}
}

// TestTropicalTies checks a tropical (max-plus) product `a @^+ b` over
// inputs with ties: for each output cell the first j maximizing
// a[i,j] + b[j,k] takes the gradient, in both operands.
func TestTropicalTies(t *testing.T) {
	const I, J, K = 3, 5, 4
	src := fmt.Sprintf(`input a : %d, %d
input b : %d, %d
leaf rw
let y = a @^+ "ij; jk => ik" b
let loss = (y *. rw) ++ "...|...->... => 0"`, I, J, J, K)
	r := rand.New(rand.NewPCG(5, 27))
	a, b := levels(r, I*J, 2), levels(r, J*K, 2)
	rw := make([]float64, I*K)
	for i := range rw {
		rw[i] = float64(1 + r.IntN(9))
	}
	g := tieRun(t, src, map[string][]float64{"a": a, "b": b, "rw": rw}, "a", "b")
	ga, gb := make([]float64, I*J), make([]float64, J*K)
	for i := range I {
		for k := range K {
			best := 0
			for j := 1; j < J; j++ {
				if a[i*J+j]+b[j*K+k] > a[i*J+best]+b[best*K+k] {
					best = j
				}
			}
			ga[i*J+best] += rw[i*K+k]
			gb[best*K+k] += rw[i*K+k]
		}
	}
	sameFloats(t, "a.grad", g["a"], ga)
	sameFloats(t, "b.grad", g["b"], gb)
}
