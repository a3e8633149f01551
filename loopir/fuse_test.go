package loopir

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/ops"
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
func sameOutputs(t *testing.T, p, q *Program, skip ...string) {
	t.Helper()
	for _, elem := range []string{"float32", "float64"} {
		a, b := runValues[float32](t, p), runValues[float32](t, q)
		if elem == "float64" {
			a, b = runValues[float64](t, p), runValues[float64](t, q)
		}
		for _, n := range p.Graph.Named {
			if slices.Contains(skip, n.Name) {
				continue
			}
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

// fillProgram builds, over 4x4 arrays s, t, u and a 4-vector r: a zero
// fill of t and t += s * 2 (autodiff's first gradient contribution),
// then one reader of t: "map" u = t * -1, or "sum" r[i] += t[i, j] after
// a fill of r.
func fillProgram(reader string) (*Program, map[int]bool) {
	const s, tt, u, r = 0, 1, 2, 3
	p := &Program{reached: Assigned | Looped | Padded | Checked}
	for _, n := range []string{"s", "t", "u"} {
		p.Tensors = append(p.Tensors, TensorInfo{Name: n, Dims: []int{4, 4}, BufDims: []int{4, 4}})
	}
	p.Tensors = append(p.Tensors, TensorInfo{Name: "r", Dims: []int{4}, BufDims: []int{4}})
	ij := []IndexExpr{{Terms: []IndexTerm{{1, 0}}}, {Terms: []IndexTerm{{1, 1}}}}
	nest := func(st *Store) Stmt { return rebuildNest([]*For{{Var: 0, Extent: 4}, {Var: 1, Extent: 4}}, st) }
	op := func(desc string, body ...Stmt) {
		p.Ops = append(p.Ops, &Operation{Desc: desc, Op: len(p.Ops), Body: body})
	}
	op("fetch s", &FetchStmt{Tensor: s})
	op("t += 2 s", &Fill{Tensor: tt}, nest(&Store{Tensor: tt, Index: ij, Accum: ops.AccAdd, Accumulate: true,
		Value: &Apply{Prim: ops.Mul, Args: []Expr{&Load{Tensor: s, Index: ij}, &Const{Value: 2}}}}))
	switch reader {
	case "map":
		op("u = -t", nest(&Store{Tensor: u, Index: ij, Value: &Apply{Prim: ops.Mul, Args: []Expr{&Load{Tensor: tt, Index: ij}, &Const{Value: -1}}}}))
	case "sum":
		op("r = t ++ ij => i", &Fill{Tensor: r}, nest(&Store{Tensor: r, Index: ij[:1], Accum: ops.AccAdd, Accumulate: true, Value: &Load{Tensor: tt, Index: ij}}))
	}
	return p, map[int]bool{s: true, u: true, r: true}
}

// TestFuseFillAndReduction: a temporary written through a zero fill and
// an addition fuses into its reader as e + 0 (the same bits, signed
// zeros included: s holds -0, and -t is -0 only with the + 0); a
// reduction reader fuses only when an acceptor approves it (the
// emitter's requires a kernel adding in the same order).
func TestFuseFillAndReduction(t *testing.T) {
	acceptAll := func([]*For, *Store, []*For, *Store, *Store) bool { return true }
	for _, tc := range []struct {
		reader string
		accept Acceptor
		want   int
	}{
		{"map", nil, 1},
		{"sum", nil, 0},
		{"sum", acceptAll, 1},
	} {
		p, keep := fillProgram(tc.reader)
		q, n := FusePointwise(p, keep, tc.accept)
		if n != tc.want {
			t.Errorf("%s (acceptor %v): fused %d, want %d:\n%s", tc.reader, tc.accept != nil, n, tc.want, q.String())
		}
		if n > 0 && strings.Contains(q.String(), "fill t with") {
			t.Errorf("%s: t's fill stayed:\n%s", tc.reader, q.String())
		}
		r := rand.New(rand.NewPCG(3, 4))
		in := map[int][]float64{0: make([]float64, 16)}
		for k := range in[0] {
			in[0][k] = r.Float64()*2 - 1
		}
		in[0][5] = math.Copysign(0, -1)
		sameBits(t, p, q, in, keys(keep), tc.reader, "fused")
	}
}

// TestRecomputeCheap: a large temporary read by several nests fuses into
// all of them when its writer is cheap (additions and products of one
// array of its size and small broadcast operands), also into a square
// that reads it twice, with the same bits; an expensive writer, a
// second large operand or a small temporary keeps its store.
func TestRecomputeCheap(t *testing.T) {
	const src = `
input x : 320, 256 = range
input b : 256 = range
let t = x *. 2 + b
let y = relu t
let z = t *. 3
let s = t *. t`
	p, q, fused := fuseCase(t, src, "x", "b", "y", "z", "s")
	if fused != 2 { // the product into t, then t into its three readers
		t.Fatalf("fused %d temporaries, want 2:\n%s", fused, q.String())
	}
	if strings.Count(q.String(), "recomputed") < 2 {
		t.Errorf("the readers' descriptions do not say the temporary is recomputed:\n%s", q.String())
	}
	nests, adds := 0, 0
	for _, o := range q.Ops {
		for _, s := range o.Body {
			if _, st, ok := PerfectNest(s); ok {
				nests++
				WalkExpr(st.Value, func(e Expr) {
					if a, ok := e.(*Apply); ok && a.Prim == ops.Add {
						adds++
					}
				})
			}
		}
	}
	// The square loads t twice at one cell: it computes the sum twice.
	if nests != 3 || adds != 4 {
		t.Errorf("%d nests with %d additions after recomputing, want 3 and 4:\n%s", nests, adds, q.String())
	}
	sameOutputs(t, p, q, "t") // t itself is no longer computed
	for _, tc := range []struct{ name, src string }{
		{"expensive", "input x : 320, 256 = range\nlet t = exp x\nlet y = relu t\nlet z = t *. 3"},
		{"two large operands", "input x : 320, 256 = range\ninput w : 320, 256 = range\nlet t = x + w\nlet y = relu t\nlet z = t *. 3"},
		{"small", "input x : 16, 256 = range\ninput b : 256 = range\nlet t = x + b\nlet y = relu t\nlet z = t *. 3"},
	} {
		keep := []string{"x", "y", "z"}
		if strings.Contains(tc.src, "input w") {
			keep = append(keep, "w")
		}
		if strings.Contains(tc.src, "input b") {
			keep = append(keep, "b")
		}
		p, q, fused := fuseCase(t, tc.src, keep...)
		if fused != 0 || q != p {
			t.Errorf("%s: fused %d:\n%s", tc.name, fused, q.String())
		}
	}
}
