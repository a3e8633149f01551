package loopir

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// gbuild builds inference graphs by hand, with hand-written projections,
// so that lowering is tested independently of projection inference.
type gbuild struct{ g *inference.Graph }

func newG() *gbuild { return &gbuild{g: &inference.Graph{}} }

func shapeOf(dims []int) inference.Shape {
	var s inference.Shape
	for _, d := range dims {
		s.Output = append(s.Output, inference.Dim{Size: d, Basis: inference.BasisDefault})
	}
	return s
}

func (b *gbuild) tensor(name string, kind inference.TensorKind, init inference.TensorInit, dims ...int) int {
	id := len(b.g.Tensors)
	b.g.Tensors = append(b.g.Tensors, &inference.Tensor{ID: id, Name: name, Kind: kind, Op: -1, Shape: shapeOf(dims), Init: init})
	return id
}

// input is an input tensor holding the given values (memory order).
func (b *gbuild) input(name string, values []float64, dims ...int) int {
	return b.tensor(name, inference.Input, inference.TensorInit{Kind: inference.InitValues, Values: values}, dims...)
}

func (b *gbuild) result(name string, dims ...int) int {
	return b.tensor(name, inference.Result, inference.TensorInit{}, dims...)
}

func (b *gbuild) op(op *inference.Op) {
	if op.Desc == "" {
		op.Desc = "op"
	}
	if op.LHS >= 0 && b.g.Tensors[op.LHS].Kind == inference.Result {
		b.g.Tensors[op.LHS].Op = len(b.g.Ops)
	}
	b.g.Ops = append(b.g.Ops, op)
}

func it(i int) inference.Index                   { return inference.Index{Kind: inference.IdxIter, Iter: i} }
func fx(c int) inference.Index                   { return inference.Index{Kind: inference.IdxFixed, Offset: c} }
func ix(xs ...inference.Index) []inference.Index { return xs }

// af is the affine index off + c1*i1 + c2*i2 + ... (pairs coeff, iter).
func af(off int, ci ...int) inference.Index {
	x := inference.Index{Kind: inference.IdxAffine, Offset: off}
	for k := 0; k+1 < len(ci); k += 2 {
		x.Terms = append(x.Terms, inference.Term{Coeff: ci[k], Iter: ci[k+1]})
	}
	return x
}

// cat is a concatenated index over parts given as (iter, size) pairs; an
// iter < 0 is a constant block.
func cat(is ...int) inference.Index {
	x := inference.Index{Kind: inference.IdxConcat}
	for k := 0; k+1 < len(is); k += 2 {
		x.Parts = append(x.Parts, inference.ConcatPart{Iter: is[k], Size: is[k+1]})
	}
	return x
}

// f1 is a single-loop factor; coupled a coupled factor of (iter, extent)
// pairs.
func f1(i, n int) inference.Factor { return inference.Factor{Iters: []int{i}, Extents: []int{n}} }
func coupled(ie ...int) inference.Factor {
	var f inference.Factor
	for k := 0; k+1 < len(ie); k += 2 {
		f.Iters = append(f.Iters, ie[k])
		f.Extents = append(f.Extents, ie[k+1])
	}
	return f
}

// flags of a projection: injective, surjective, zero-init, accumulate.
type flags struct{ inj, surj, zero, acc bool }

func proj(fl flags, product []inference.Factor, lhs []inference.Index, rhs ...[]inference.Index) *inference.Projections {
	p := &inference.Projections{Product: product, LHS: lhs, RHS: rhs,
		Injective: fl.inj, Surjective: fl.surj, ZeroInit: fl.zero, Accumulate: fl.acc}
	for _, f := range product {
		for k, i := range f.Iters {
			for len(p.Extent) <= i {
				p.Extent = append(p.Extent, 0)
			}
			p.Extent[i] = f.Extents[k]
		}
	}
	p.NumIters = len(p.Extent)
	return p
}

func product(fs ...inference.Factor) []inference.Factor { return fs }

func randValues(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Round((r.Float64()*4-2)*1024) / 1024
	}
	return v
}

func seq(from float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = from + float64(i)
	}
	return v
}

// runBoth lowers g, runs it in float64 and float32, checks that the two
// agree within 1e-5 relative on every tensor, and returns the program and
// the float64 state.
func runBoth(t *testing.T, g *inference.Graph) (*Program, *State[float64]) {
	t.Helper()
	p, err := Lower(g)
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	s64, err := Run[float64](p)
	if err != nil {
		t.Fatalf("Run[float64]: %v\n%s", err, p)
	}
	// Random leaves draw different cells at each precision (rt's
	// conversions), so the float32 run gets the float64 run's: the
	// comparison below checks the computation, TestRandomInitMatchesRT
	// each precision's initializer.
	shared := map[int][]float64{}
	for _, o := range p.Ops {
		if f, ok := o.Assignment.(*Fetch); ok && f.Kind == FetchRandom {
			shared[f.Tensor] = s64.Values(f.Tensor)
		}
	}
	s32, err := RunWith[float32](p, shared)
	if err != nil {
		t.Fatalf("Run[float32]: %v", err)
	}
	for i, ti := range p.Tensors {
		a, b := s64.Values(i), s32.Values(i)
		for k := range a {
			if !testutil.CloseRel(a[k], b[k], 1e-5) {
				t.Errorf("%s[%d]: float64 %v, float32 %v", ti.Name, k, a[k], b[k])
				break
			}
		}
	}
	return p, s64
}

func expectValues(t *testing.T, s *State[float64], p *Program, name string, want []float64) {
	t.Helper()
	id := p.Lookup(name)
	if id < 0 {
		t.Fatalf("no tensor %s", name)
	}
	got := s.Values(id)
	if len(got) != len(want) {
		t.Fatalf("%s has %d cells, want %d", name, len(got), len(want))
	}
	for k := range want {
		if !testutil.CloseRel(got[k], want[k], 1e-12) {
			t.Errorf("%s = %v\nwant %v\nprogram:\n%s", name, got, want, p)
			return
		}
	}
}

func expectContains(t *testing.T, text, want string) {
	t.Helper()
	if !strings.Contains(text, want) {
		t.Errorf("dump does not contain %q:\n%s", want, text)
	}
}

// sameBits runs p and q in float32 on the same inputs and reports every
// tensor of ids whose values differ in any bit (the first cell that
// does), prefixing the message with what (the case) and naming q's
// values by how (elided, fused, ...).
func sameBits(t *testing.T, p, q *Program, in map[int][]float64, ids []int, what, how string) {
	t.Helper()
	a, err := RunWith[float32](p, in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunWith[float32](q, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		va, vb := a.Values(id), b.Values(id)
		for k := range va {
			if math.Float64bits(va[k]) != math.Float64bits(vb[k]) {
				t.Errorf("%s: %s[%d] = %v %s, %v not", what, p.Tensors[id].Name, k, vb[k], how, va[k])
				break
			}
		}
	}
}

// keys are the tensors of keep, in increasing order.
func keys(keep map[int]bool) []int {
	ids := make([]int, 0, len(keep))
	for id := range keep {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
