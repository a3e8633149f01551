package cuda

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

func ix(v, off int) loopir.IndexExpr {
	return loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: 1, Var: v}}, Offset: off}
}

// pw is the nest for i<v> < n: t<dst>[i+0] = prim(t<src>[i+off]).
func pw(v, n, dst, src, off int, prim ops.PrimName) loopir.Stmt {
	val := loopir.Expr(&loopir.Apply{Prim: prim, Args: []loopir.Expr{&loopir.Load{Tensor: src, Index: []loopir.IndexExpr{ix(v, off)}}}})
	return &loopir.For{Var: v, Extent: n, Body: []loopir.Stmt{&loopir.Store{Tensor: dst, Index: []loopir.IndexExpr{ix(v, 0)}, Value: val}}}
}

func testKgen() *kgen {
	ts := make([]loopir.TensorInfo, 4)
	for i := range ts {
		ts[i] = loopir.TensorInfo{Dims: []int{9}, BufDims: []int{9}}
	}
	return &kgen{b: &strings.Builder{}, k: &desc.Kernel{Name: "K", Elem: "float32"}, p: &loopir.Program{Tensors: ts}, ct: "float"}
}

// TestFusionRule: a pointwise nest joins the group before it only when it
// reads the group's results at the same point's cell, writes nothing the
// group touched, and has the same loop extents.
func TestFusionRule(t *testing.T) {
	o := &loopir.Operation{Op: 0}
	for _, c := range []struct {
		name string
		next loopir.Stmt
		want bool
	}{
		{"same cell", pw(5, 8, 2, 1, 0, "neg"), true},
		{"shifted read", pw(5, 8, 2, 1, 1, "neg"), false},
		{"writes what the group read", pw(5, 8, 0, 1, 0, "neg"), false},
		{"writes what the group wrote", pw(5, 8, 1, 0, 0, "neg"), false},
		{"other extent", pw(5, 7, 2, 1, 0, "neg"), false},
		{"reads an untouched tensor anywhere", pw(5, 8, 2, 3, 1, "neg"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := testKgen()
			first := pw(0, 8, 1, 0, 0, "relu") // t1[i] = relu t0[i]
			f := g.newFusion(item{o, first}, pointwise(first))
			n := pointwise(c.next)
			if n == nil {
				t.Fatal("not a pointwise nest")
			}
			if got := f.tryAdd(g, item{o, c.next}, n); got != c.want {
				t.Errorf("fused = %v, want %v", got, c.want)
			}
		})
	}
}

// TestOwnership: a loop goes to the thread index only when its variable
// alone indexes an axis of every store, the same axis in each, and the
// nest does not read what it writes.
func TestOwnership(t *testing.T) {
	sum := loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: 1, Var: 0}, {Coeff: 1, Var: 1}}}
	store := func(idx ...loopir.IndexExpr) *loopir.Store {
		return &loopir.Store{Tensor: 1, Index: idx, Value: &loopir.Load{Tensor: 0, Index: []loopir.IndexExpr{ix(1, 0)}}, Accumulate: true, Accum: "add"}
	}
	nest := func(body ...loopir.Stmt) loopir.Stmt {
		return &loopir.For{Var: 0, Extent: 4, Body: []loopir.Stmt{&loopir.For{Var: 1, Extent: 3, Body: body}}}
	}
	vars := func(n *nestInfo) []int {
		var vs []int
		for _, f := range n.par {
			vs = append(vs, f.Var)
		}
		return vs
	}
	for _, c := range []struct {
		name string
		s    loopir.Stmt
		want []int
	}{
		{"both own an axis", nest(store(ix(0, 0), ix(1, 0))), []int{0, 1}},
		{"a reduction", nest(store(ix(0, 0))), []int{0}},
		{"a sum of variables owns nothing", nest(store(sum)), nil},
		{"one alone, one in a sum", nest(store(ix(0, 0), sum)), []int{0}},
		{"two stores on different axes", nest(store(ix(0, 0), ix(1, 0)), store(ix(1, 0), ix(0, 0))), nil},
		{"two stores, one shifted", nest(store(ix(0, 0)), store(ix(0, 4))), nil},
		{"reads what it writes", nest(&loopir.Store{Tensor: 1, Index: []loopir.IndexExpr{ix(0, 0)}, Value: &loopir.Load{Tensor: 1, Index: []loopir.IndexExpr{ix(0, 1)}}}), nil},
	} {
		if got := vars(analyze(c.s)); !equalInts(got, c.want) {
			t.Errorf("%s: thread loops %v, want %v", c.name, got, c.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
