package schedule

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/rt"
)

// TestChainAdmits: the chaining rule on hand-made access summaries.
func TestChainAdmits(t *testing.T) {
	unit := func(parts, extent int, rows map[int]bool, writes ...int) *Unit {
		u := &Unit{Parts: parts, Extent: extent, Rows: rows, Writes: map[int]bool{}}
		for _, w := range writes {
			u.Writes[w] = true
		}
		return u
	}
	// a writes rows of 1 reading rows of 0 and all of parameter 9.
	a := unit(8, 256, map[int]bool{0: true, 1: true, 9: false}, 1)
	cases := []struct {
		name string
		u    *Unit
		want bool
	}{
		{"reads the rows a wrote", unit(8, 256, map[int]bool{1: true, 2: true}, 2), true},
		{"reads the parameter a reads, anyhow", unit(8, 256, map[int]bool{9: false, 3: true}, 3), true},
		{"reads what a wrote across rows", unit(8, 256, map[int]bool{1: false, 2: true}, 2), false},
		{"writes what a reads across rows", unit(8, 256, map[int]bool{9: true, 2: true}, 9), false},
		{"writes what a reads by rows", unit(8, 256, map[int]bool{0: true}, 0), true},
		{"other parts", unit(4, 256, map[int]bool{2: true}, 2), false},
		{"other extent", unit(8, 512, map[int]bool{2: true}, 2), false},
		{"partial sums into what a reads", unit(8, 256, map[int]bool{1: true, 0: false}, 0), false},
	}
	for _, c := range cases {
		var sq Chain
		sq.Units = append(sq.Units, a)
		if got := sq.Admits(c.u); got != c.want {
			t.Errorf("%s: admits = %v, want %v", c.name, got, c.want)
		}
	}
	var sq Chain
	if sq.Admits(a) {
		t.Error("an empty chain admits a nest (a chain starts with add)")
	}
	for range rt.MaxSeq {
		sq.Units = append(sq.Units, unit(8, 256, map[int]bool{0: true}))
	}
	if sq.Admits(unit(8, 256, map[int]bool{0: true})) {
		t.Errorf("a chain of %d nests admits another", rt.MaxSeq)
	}
	// A nest whose pre-fill writes an array an earlier nest touches would
	// move the fill before that nest's access.
	pre := unit(8, 256, map[int]bool{1: true, 7: true}, 7)
	pre.PreWrites = []int{1}
	sq = Chain{}
	sq.Units = append(sq.Units, a)
	if sq.Admits(pre) {
		t.Error("admits a nest whose pre-fill writes what the chain wrote")
	}
	pre.PreWrites = []int{7}
	if !sq.Admits(pre) {
		t.Error("refuses a nest whose pre-fill writes only what the chain does not touch")
	}
	// A later nest is checked against every earlier one, not only the last.
	sq = Chain{}
	sq.Units = append(sq.Units, a)
	sq.Units = append(sq.Units, unit(8, 256, map[int]bool{5: true}, 5))
	if sq.Admits(unit(8, 256, map[int]bool{1: false}, 6)) {
		t.Error("admits a nest reading across rows what the first nest wrote")
	}
}

// attachPlan returns a function planning, afresh each call, a product
// and its relu (the product split, the relu serial) with both tiers, in
// a model's kernel with a scratch.
func attachPlan(t *testing.T) func() *Schedule {
	t.Helper()
	res, err := pipeline.Compile("input x : 16 | 784 = range\ninput w : 784 -> 128 = range\nlet h = w * x\nlet y = relu h", pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keep := map[int]bool{}
	for _, n := range res.Loops.Graph.Named {
		keep[n.Tensor] = true
	}
	return func() *Schedule {
		return Plan(res.Loops, Options{Elem: "float32", Targets: []target.CPU{target.AVX512(), target.AVX2()}, Parallel: true, Model: true, Scratch: true, Keep: keep})
	}
}

// TestAttach: Attach records the emitter's chains and its joined splits,
// and reports a split that differs from the schedule's, and a nest the
// schedule splits that the emitter kept serial.
func TestAttach(t *testing.T) {
	plan := attachPlan(t)
	s := plan()
	var prod, relu *Nest
	for i := range s.Nests {
		switch {
		case s.Nests[i].Kernel.Family == Contraction:
			prod = &s.Nests[i]
		case s.Nests[i].Kernel.Family == Map:
			relu = &s.Nests[i]
		}
	}
	if prod == nil || relu == nil || prod.Split == nil || relu.Split != nil {
		t.Fatalf("want a split product and a serial relu:\n%s", s)
	}
	u1 := &Unit{Op: prod.Op, Stmt: prod.Stmt, Var: prod.Split.Var, Parts: prod.Parts, Extent: prod.Split.Extent}
	u2 := &Unit{Op: relu.Op, Stmt: relu.Stmt, Var: relu.Loops[0].Var, Parts: prod.Parts, Extent: relu.Loops[0].Extent, Joined: true}
	if err := s.Attach([]*Unit{u1, u2}, []Chain{{Units: []*Unit{u1, u2}}}); err != nil {
		t.Fatal(err)
	}
	if prod.Chain != 1 || relu.Chain != 1 || !relu.Joined || relu.Split == nil || relu.Parts != prod.Parts {
		t.Errorf("chain %d %d, relu joined %v split %v:\n%s", prod.Chain, relu.Chain, relu.Joined, relu.Split, s)
	}
	for _, want := range []string{"to join a chain (below the size rule)", "chain 1: nest 2 of 2, one job", "# chain 1: "} {
		if !strings.Contains(s.String(), want) {
			t.Errorf("the printed schedule lacks %q:\n%s", want, s)
		}
	}
	s = plan()
	bad := *u1
	bad.Parts = prod.Parts / 2
	if err := s.Attach([]*Unit{&bad}, nil); err == nil || !strings.Contains(err.Error(), "the Go code splits") {
		t.Errorf("a different split: %v", err)
	}
	if err := plan().Attach(nil, nil); err == nil || !strings.Contains(err.Error(), "keeps it serial") {
		t.Errorf("a split nest kept serial: %v", err)
	}
}

// TestRejoinSplit: a map nest above the size rule that SplitLoop splits
// on its longest loop joins a chain of batch-split nests on its
// outermost loop instead, when every array it shares with the chain is
// accessed by rows; not when it reads the chain's output across rows,
// nor when its own split joins already or has other parts.
func TestRejoinSplit(t *testing.T) {
	pt := target.AVX512().Parallel
	lt := target.AVX512().Loops
	dims := []int{8, 128, 64}
	p := &loopir.Program{Tensors: []loopir.TensorInfo{
		{Name: "a", Dims: dims, BufDims: dims},
		{Name: "b", Dims: dims, BufDims: dims},
		{Name: "c", Dims: []int{128, 8, 64}, BufDims: []int{128, 8, 64}},
	}}
	x := func(v int) loopir.IndexExpr { return loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: 1, Var: v}}} }
	nest := func(store int, idx []loopir.IndexExpr, v loopir.Expr) ([]*loopir.For, *loopir.Store) {
		loops := []*loopir.For{{Var: 0, Extent: 8}, {Var: 1, Extent: 128}, {Var: 2, Extent: 64}}
		return loops, &loopir.Store{Tensor: store, Index: idx, Value: v}
	}
	rows := []loopir.IndexExpr{x(0), x(1), x(2)}
	// The chain: a nest writing the rows of a, split on its batch.
	l0, s0 := nest(0, rows, &loopir.Const{Value: 1})
	var c Chain
	c.Units = append(c.Units, RowAccess(p, s0, l0[0], 8))
	// exp of a into b, split (as SplitLoop would) on the positions.
	l1, s1 := nest(1, rows, &loopir.Apply{Prim: ops.Exp, Args: []loopir.Expr{&loopir.Load{Tensor: 0, Index: rows}}})
	pl := Loops(p, l1, s1, nil, lt)
	if got := RejoinSplit(pt, &c, p, l1, s1, pl, l1[1], 8, false); got != l1[0] {
		t.Errorf("rejoin of a row-wise map = %v, want the batch loop", got)
	}
	if got := RejoinSplit(pt, &c, p, l1, s1, pl, l1[0], 8, false); got != nil {
		t.Errorf("rejoin of a nest split on its batch already = %v, want nil", got)
	}
	if got := RejoinSplit(pt, &c, p, l1, s1, pl, l1[1], 4, false); got != nil {
		t.Errorf("rejoin into other parts = %v, want nil", got)
	}
	if got := RejoinSplit(pt, &c, p, l1, s1, pl, l1[1], 8, true); got != l1[0] {
		t.Errorf("rejoin with a pre-fill of an array the chain does not touch = %v, want the batch loop", got)
	}
	// Reading a's first row in every part (written by the chain's part 0
	// only): the batch split cannot join.
	l2, s2 := nest(1, rows, &loopir.Load{Tensor: 0, Index: []loopir.IndexExpr{{}, x(1), x(2)}})
	if got := RejoinSplit(pt, &c, p, l2, s2, Loops(p, l2, s2, nil, lt), l2[1], 8, false); got != nil {
		t.Errorf("rejoin of a nest reading the chain's output across rows = %v, want nil", got)
	}
	// Writing an array it does not share by rows is no obstacle (c is
	// the chain's neither).
	l3, s3 := nest(2, []loopir.IndexExpr{x(1), x(0), x(2)}, &loopir.Load{Tensor: 0, Index: rows})
	if got := RejoinSplit(pt, &c, p, l3, s3, Loops(p, l3, s3, nil, lt), l3[1], 8, false); got != l3[0] {
		t.Errorf("rejoin of a nest writing an unshared array across rows = %v, want the batch loop", got)
	}
}

// TestAttachRechained: a unit the emitter split on the chain's loop
// instead of SplitLoop's (Rechained) is no disagreement; its split is
// recorded.
func TestAttachRechained(t *testing.T) {
	plan := attachPlan(t)
	product := func(s *Schedule) *Nest {
		for i := range s.Nests {
			if s.Nests[i].Kernel.Family == Contraction && s.Nests[i].Split != nil {
				return &s.Nests[i]
			}
		}
		t.Fatalf("want a split product:\n%s", s)
		return nil
	}
	s := plan()
	prod := product(s)
	var other *loopir.For
	for _, l := range prod.Loops {
		if l.Var != prod.Split.Var {
			other = l
			break
		}
	}
	u := &Unit{Op: prod.Op, Stmt: prod.Stmt, Var: other.Var, Parts: prod.Parts, Extent: other.Extent}
	if err := s.Attach([]*Unit{u}, nil); err == nil {
		t.Error("a different split without Rechained is no disagreement")
	}
	s = plan()
	prod = product(s)
	u.Rechained = true
	if err := s.Attach([]*Unit{u}, nil); err != nil {
		t.Fatal(err)
	}
	if prod.Split == nil || prod.Split.Var != other.Var {
		t.Errorf("the rechained split is not recorded: %v", prod.Split)
	}
}
