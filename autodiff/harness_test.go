package autodiff

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// gen draws n values for a leaf tensor; a nil result keeps the tensor's
// own initializer.
type gen func(r *rand.Rand, n int) []float64

// uniform draws from [lo, hi).
func uniform(lo, hi float64) gen {
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = lo + (hi-lo)*r.Float64()
		}
		return out
	}
}

// awayFrom draws from [lo, hi) but keeps every value at least gap away
// from each of the kinks (so that relu/sat01 are smooth around it).
func awayFrom(lo, hi, gap float64, kinks ...float64) gen {
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			for {
				v := lo + (hi-lo)*r.Float64()
				ok := true
				for _, k := range kinks {
					if math.Abs(v-k) < gap {
						ok = false
					}
				}
				if ok {
					out[i] = v
					break
				}
			}
		}
		return out
	}
}

// distinct draws n values in [lo, hi) that are pairwise at least
// 0.8*(hi-lo)/n apart (a shuffled grid with small jitter), so that every
// maximum is unique and stays so under finite-difference steps.
func distinct(lo, hi float64) gen {
	return func(r *rand.Rand, n int) []float64 {
		step := (hi - lo) / float64(n)
		out := make([]float64, n)
		for i, k := range r.Perm(n) {
			out[i] = lo + step*(float64(k)+0.5) + step*0.1*(2*r.Float64()-1)
		}
		return out
	}
}

// bits draws zeros and ones.
func bits(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(r.IntN(2))
	}
	return out
}

// keep uses the tensor's initializer.
func keep(*rand.Rand, int) []float64 { return nil }

// values gives fixed values.
func values(vs ...float64) gen { return func(*rand.Rand, int) []float64 { return vs } }

// gcase is a gradient check: the loss of the program is differentiated
// with respect to every Input, Param and Leaf, and the analytic gradient
// is compared with central finite differences.
type gcase struct {
	name, src string
	// loss names the loss tensor (default "loss").
	loss string
	// gens gives the values of leaf tensors by name; the default is
	// uniform in [-1, 1).
	gens map[string]gen
	// noGrad lists leaves that must not get a gradient (they influence the
	// loss only through non-differentiable operands).
	noGrad []string
	// mutate, if set, edits the gradient program before it runs (to
	// check that the check can fail).
	mutate func(*Gradients)
	// graph, if set, edits the inferred graph before differentiation.
	graph func(*inference.Graph)
}

// reporter is the part of testing.T a gradient check reports through.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// checkResult summarizes a gradient check.
type checkResult struct {
	worst float64 // worst relative error
	cells int     // number of gradient cells checked
	fails int
}

// tolerance is the relative tolerance: |a - n| <= tol * max(1, |a|, |n|).
// The central difference with h = 1e-6*max(1,|x|) has a truncation error
// of order h^2*|f”'| ~ 1e-12 and a rounding error of order
// eps*|loss|/h ~ 1e-10*|loss|, both well below 1e-6 for the losses here
// (|loss| < 100).
const tolerance = 1e-6

func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// gradCheck runs the check and reports every cell that fails.
func gradCheck(t *testing.T, c gcase) checkResult { t.Helper(); return gradCheckWith(t, c) }

func gradCheckWith(t reporter, c gcase) checkResult {
	t.Helper()
	g, err := inference.InferSource(strings.TrimSpace(c.src) + "\n")
	if err != nil {
		t.Fatalf("inference: %v", err)
	}
	if err := inference.DeriveProjections(g); err != nil {
		t.Fatalf("projections: %v", err)
	}
	if c.graph != nil {
		c.graph(g)
	}
	lossName := c.loss
	if lossName == "" {
		lossName = "loss"
	}
	loss := -1
	for _, n := range g.Named {
		if n.Name == lossName {
			loss = n.Tensor
		}
	}
	if loss < 0 {
		t.Fatalf("no tensor named %q", lossName)
	}
	gr, err := Backward(g, loss)
	if err != nil {
		t.Fatalf("Backward: %v", err)
	}
	if c.mutate != nil {
		c.mutate(gr)
	}
	fwd, err := loopir.Lower(g)
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	r := rand.New(rand.NewPCG(seedOf(c.name), 7))
	var leaves []int
	inputs := map[int][]float64{}
	for id, tn := range g.Tensors {
		if !leafKind(tn.Kind) {
			continue
		}
		leaves = append(leaves, id)
		gf, ok := c.gens[tn.Name]
		if !ok {
			gf = uniform(-1, 1)
		}
		if vs := gf(r, tn.Shape.Size()); vs != nil {
			if len(vs) != tn.Shape.Size() {
				t.Fatalf("generator for %s gave %d values, want %d", tn.Name, len(vs), tn.Shape.Size())
			}
			inputs[id] = vs
		}
	}
	s0, err := loopir.RunWith[float64](fwd, inputs)
	if err != nil {
		t.Fatalf("forward run: %v", err)
	}
	for _, id := range leaves {
		if _, ok := inputs[id]; !ok {
			inputs[id] = s0.Values(id)
		}
	}
	sa, err := loopir.RunWith[float64](gr.Program, inputs)
	if err != nil {
		t.Fatalf("gradient run: %v", err)
	}
	if a, b := sa.Values(loss)[0], s0.Values(loss)[0]; a != b {
		t.Errorf("the gradient program's loss %v differs from the forward program's %v", a, b)
	}
	lossAt := func(in map[int][]float64) float64 {
		s, err := loopir.RunWith[float64](fwd, in)
		if err != nil {
			t.Fatalf("forward run: %v", err)
		}
		return s.Values(loss)[0]
	}
	var res checkResult
	for _, id := range leaves {
		tn := g.Tensors[id]
		gi := gr.Of(id)
		if slices.Contains(c.noGrad, tn.Name) {
			if gi >= 0 {
				t.Errorf("%s has a gradient, want none", tn.Name)
			}
			continue
		}
		if gi < 0 {
			t.Errorf("%s (%s) has no gradient", tn.Name, tn.Kind)
			continue
		}
		analytic := sa.Values(gi)
		base := inputs[id]
		for k := range base {
			x := base[k]
			h := 1e-6 * math.Max(1, math.Abs(x))
			pert := slices.Clone(base)
			in := map[int][]float64{}
			for k2, v := range inputs {
				in[k2] = v
			}
			in[id] = pert
			pert[k] = x + h
			fp := lossAt(in)
			pert[k] = x - h
			fm := lossAt(in)
			num := (fp - fm) / (2 * h)
			a := analytic[k]
			e := math.Abs(a-num) / math.Max(1, math.Max(math.Abs(a), math.Abs(num)))
			res.cells++
			res.worst = math.Max(res.worst, e)
			if !(e <= tolerance) {
				res.fails++
				if res.fails <= 10 {
					t.Errorf("d loss / d %s[%d]: analytic %.12g, numeric %.12g (relative error %.2e)", tn.Name, k, a, num, e)
				}
			}
		}
	}
	if res.cells == 0 {
		t.Errorf("no gradient cell checked")
	}
	return res
}

// runChecks runs a table of gradient checks as subtests and logs each
// worst relative error.
func runChecks(t *testing.T, cases []gcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := gradCheck(t, c)
			t.Logf("%s: worst relative error %.2e over %d cells", c.name, res.worst, res.cells)
		})
	}
}
