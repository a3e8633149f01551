package loopir

import (
	"math"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
)

// extend lowers g with extra assignments built by f and runs it in
// float64.
func gradExtend(t *testing.T, g *inference.Graph, f func(p *Program) error) (*Program, *State[float64]) {
	t.Helper()
	p, err := LowerExtended(g, f)
	if err != nil {
		t.Fatalf("LowerExtended: %v", err)
	}
	s, err := Run[float64](p)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, p)
	}
	return p, s
}

func gradLoad(t int, idx []inference.Index) ProjExpr { return &ProjLoad{Tensor: t, Index: idx} }
func gradApply(prim ops.PrimName, args ...ProjExpr) ProjExpr {
	return &ProjApply{Prim: prim, Args: args}
}

func TestComputeSlotPermutedMatmul(t *testing.T) {
	// c[i,k] = sum_j a[i,j] b[j,k]; then, reusing the record, the two
	// gradients of sum(c * r): ga[i,j] += r[i,k] * b[j,k] (sums over k)
	// and gb[j,k] += a[i,j] * r[i,k] (sums over i).
	b := newG()
	av := []float64{1, 2, 3, 4, 5, 6}
	bv := []float64{1, 0, 2, -1, 0, 1, 1, 1, 2, 2, 0, 1}
	rv := []float64{1, -2, 3, 0.5, -1, 2, 0, 4}
	a := b.input("a", av, 2, 3)
	bb := b.input("b", bv, 3, 4)
	r := b.input("r", rv, 2, 4)
	c := b.result("c", 2, 4)
	pr := proj(flags{zero: true, acc: true}, product(f1(0, 2), f1(1, 4), f1(2, 3)),
		ix(it(0), it(1)), ix(it(0), it(2)), ix(it(2), it(1)))
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "mul", Accum: "add", InitNeutral: true, LHS: c, RHS: []int{a, bb}, Desc: "matmul", Proj: pr})
	var ga, gb int
	p, s := gradExtend(t, b.g, func(p *Program) error {
		ga = p.AddTensor(TensorInfo{Name: "ga", Dims: []int{2, 3}})
		gb = p.AddTensor(TensorInfo{Name: "gb", Dims: []int{3, 4}})
		p.Assignments = append(p.Assignments,
			&Clear{Desc: "zero", Tensors: []int{ga, gb}},
			&Compute{Desc: "ga", Op: 0, Proj: pr, Stores: []*ComputeStore{{Tensor: ga, Index: pr.RHS[0],
				Value: gradApply("mul", gradLoad(r, pr.LHS), gradLoad(bb, pr.RHS[1])), Accum: "add", Accumulate: true}}},
			&Compute{Desc: "gb", Op: 0, Proj: pr, Stores: []*ComputeStore{{Tensor: gb, Index: pr.RHS[1],
				Value: gradApply("mul", gradLoad(a, pr.RHS[0]), gradLoad(r, pr.LHS)), Accum: "add", Accumulate: true}}})
		return nil
	})
	wantA := make([]float64, 6)
	wantB := make([]float64, 12)
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				wantA[i*3+j] += rv[i*4+k] * bv[j*4+k]
				wantB[j*4+k] += av[i*3+j] * rv[i*4+k]
			}
		}
	}
	expectValues(t, s, p, "ga", wantA)
	expectValues(t, s, p, "gb", wantB)
	d := p.String()
	expectContains(t, d, "# ga\nfor i0 in 0..1:\n  for i1 in 0..3:  # reduction\n    for i2 in 0..2:\n      ga[i0, i2] += r[i0, i1] * b[i2, i1]\n")
	expectContains(t, d, "# gb\nfor i0 in 0..1:  # reduction\n")
	expectContains(t, d, "# zero\nfill ga with 0\nfill gb with 0\n")
	if got := p.DumpOps(p.Ops[len(p.Ops)-1:]); !strings.HasPrefix(got, "# gb\n") || strings.Contains(got, "# ga") {
		t.Errorf("DumpOps of the last op:\n%s", got)
	}
}

func TestComputeLivePointsAndScratch(t *testing.T) {
	// The record of "x ++ a^b^c => b": the product space is the coupled
	// factor (i0 then i1 then i2); only points where i1 runs are live.
	b := newG()
	x := b.input("x", seq(1, 9), 9)
	m := b.result("m", 4)
	pr := proj(flags{inj: true, surj: true}, product(coupled(0, 2, 1, 4, 2, 3)), ix(it(1)), ix(cat(0, 2, 1, 4, 2, 3)))
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "id", Accum: "add", InitNeutral: true, LHS: m, RHS: []int{x}, Desc: "middle", Proj: pr})
	var gx int
	p, s := gradExtend(t, b.g, func(p *Program) error {
		gx = p.AddTensor(TensorInfo{Name: "gx", Dims: []int{9}})
		tmp := p.AddTensor(TensorInfo{Name: "tmp"})
		p.Assignments = append(p.Assignments, &Compute{Desc: "scatter back", Op: 0, Proj: pr, Stores: []*ComputeStore{
			{Tensor: tmp, Value: gradApply("mul", gradLoad(m, pr.LHS), &ProjConst{Value: 2})},
			{Tensor: gx, Index: pr.RHS[0], Value: gradApply("add", gradLoad(tmp, nil), &ProjConst{Value: 1}), Accum: "add", Accumulate: true},
		}})
		return nil
	})
	expectValues(t, s, p, "gx", []float64{0, 0, 7, 9, 11, 13, 0, 0, 0})
	expectContains(t, p.String(), "# scatter back\nfor i0 in 0..3:\n  tmp[] = m[i0] * 2\n  gx[i0 + 2] += tmp[] + 1\n")
	_ = gx

	// A Block's record has no live point at all: its two sources are
	// never active together, so a Compute over it does nothing.
	b = newG()
	u := b.input("u", seq(1, 2), 2)
	v := b.input("v", seq(5, 3), 3)
	c := b.result("c", 5)
	pb := proj(flags{inj: true, surj: true}, product(coupled(0, 2, 1, 3)), ix(cat(0, 2, 1, 3)), ix(it(0)), ix(it(1)))
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: c, RHS: []int{u, v}, Desc: "concat", Proj: pb})
	p, _ = gradExtend(t, b.g, func(p *Program) error {
		g := p.AddTensor(TensorInfo{Name: "g", Dims: []int{2}})
		p.Assignments = append(p.Assignments, &Compute{Desc: "nothing", Op: 0, Proj: pb, Stores: []*ComputeStore{
			{Tensor: g, Index: pb.RHS[0], Value: gradLoad(c, pb.LHS), Accum: "add", Accumulate: true}}})
		return nil
	})
	if o := p.Ops[len(p.Ops)-1]; len(o.Body) != 0 {
		t.Errorf("a Compute over a Block's record has a body:\n%s", p.DumpOps([]*Operation{o}))
	}
}

func TestRevBlock(t *testing.T) {
	// Concatenation along the second axis, then its reverse scatters a
	// gradient back to both sources.
	b := newG()
	a := b.input("a", seq(1, 6), 2, 3)
	bb := b.input("b", seq(100, 8), 2, 4)
	g := b.input("g", seq(10, 14), 2, 7)
	c := b.result("c", 2, 7)
	pr := proj(flags{inj: true, surj: true}, product(f1(0, 2), coupled(1, 3, 2, 4)),
		ix(it(0), cat(1, 3, 2, 4)), ix(it(0), it(1)), ix(it(0), it(2)))
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: c, RHS: []int{a, bb}, Desc: "concat", Proj: pr})
	p, s := gradExtend(t, b.g, func(p *Program) error {
		ga := p.AddTensor(TensorInfo{Name: "ga", Dims: []int{2, 3}})
		gb := p.AddTensor(TensorInfo{Name: "gb", Dims: []int{2, 4}})
		p.Assignments = append(p.Assignments, &RevBlock{Desc: "rev", Op: 0, Src: g, Dst: []int{ga, gb}, Accumulate: true, Proj: pr})
		return nil
	})
	expectValues(t, s, p, "ga", []float64{10, 11, 12, 17, 18, 19})
	expectValues(t, s, p, "gb", []float64{13, 14, 15, 16, 20, 21, 22, 23})
	expectContains(t, p.String(), "# rev\nfor i0 in 0..1:\n  for i1 in 0..2:\n    ga[i0, i1] += g[i0, i1]\n  for i1 in 0..3:\n    gb[i0, i1] += g[i0, i1 + 3]\n")

	// Stacking: the sources do not mention the new axis, the selector
	// rule picks them; a target of -1 receives nothing.
	b = newG()
	x := b.input("x", seq(1, 3), 3)
	y := b.input("y", seq(4, 3), 3)
	gs := b.input("gs", seq(1, 6), 2, 3)
	st := b.result("s", 2, 3)
	ps := proj(flags{inj: true, surj: true}, product(coupled(0, 1, 1, 1), f1(2, 3)),
		ix(cat(0, 1, 1, 1), it(2)), ix(it(2)), ix(it(2)))
	b.op(&inference.Op{Kind: inference.OpStack, Prim: "id", Accum: "add", InitNeutral: true, LHS: st, RHS: []int{x, y}, Desc: "stack", Proj: ps})
	p, s = gradExtend(t, b.g, func(p *Program) error {
		gx := p.AddTensor(TensorInfo{Name: "gx", Dims: []int{3}})
		p.Assignments = append(p.Assignments, &RevBlock{Desc: "rev", Op: 0, Src: gs, Dst: []int{gx, -1}, Accumulate: true, Proj: ps})
		return nil
	})
	expectValues(t, s, p, "gx", []float64{1, 2, 3})

	// Without a selector two targets are admitted at once: an error.
	b = newG()
	x = b.input("x", seq(1, 2), 2)
	y = b.input("y", seq(1, 2), 2)
	gs = b.input("gs", seq(1, 6), 3, 2)
	st = b.result("s", 3, 2)
	pa := proj(flags{}, product(coupled(0, 1, 1, 1), f1(2, 2)), ix(cat(0, 1, -1, 1, 1, 1), it(2)), ix(it(2)), ix(it(2)))
	b.op(&inference.Op{Kind: inference.OpBlock, Prim: "id", Accum: "add", InitNeutral: true, LHS: st, RHS: []int{x, y}, Desc: "stack", Proj: pa})
	_, err := LowerExtended(b.g, func(p *Program) error {
		// The forward Block itself is ambiguous too: drop it so that the
		// reverse is what fails.
		p.Assignments = p.Assignments[:len(p.Assignments)-1]
		gx := p.AddTensor(TensorInfo{Name: "gx", Dims: []int{2}})
		gy := p.AddTensor(TensorInfo{Name: "gy", Dims: []int{2}})
		p.Assignments = append(p.Assignments, &RevBlock{Desc: "rev", Op: 0, Src: gs, Dst: []int{gx, gy}, Accumulate: true, Proj: pa})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "ambiguous indices in reversed concatenation: targets 0 (gx) and 1 (gy) both read gs[i0, i1]") {
		t.Errorf("err = %v", err)
	}
}

func TestComputePaddingValues(t *testing.T) {
	// Max-pool over a padded input: the gradient re-reads x with its
	// margins at -inf (Compute.Pad), and the gradient tensor has the same
	// margins (writes into them are discarded).
	b := newG()
	x := b.input("x", []float64{-1, -2, -0.5, -3, -4, -1.5}, 6)
	b.g.Tensors[x].Padding = []inference.Padding{{Left: 1, Right: 2}}
	w := b.input("w", []float64{0, 0, 0}, 3)
	pm := b.result("p", 6)
	pr := proj(flags{inj: false, surj: true, zero: true, acc: true}, product(f1(0, 6), f1(1, 3)), ix(it(0)), ix(af(-1, 1, 0, 1, 1)), ix(it(1)))
	b.op(&inference.Op{Kind: inference.OpEinsum, Prim: "add", Accum: "max", InitNeutral: true, LHS: pm, RHS: []int{x, w}, Desc: "pool", Proj: pr})
	p, s := gradExtend(t, b.g, func(p *Program) error {
		gx := p.AddTensor(TensorInfo{Name: "gx", Dims: []int{6}, Padding: p.Tensors[x].Padding})
		tmp := p.AddTensor(TensorInfo{Name: "tmp"})
		p.Assignments = append(p.Assignments,
			&Clear{Desc: "zero", Tensors: []int{gx}},
			&Compute{Desc: "argmax", Op: 0, Proj: pr, Pad: map[int]float64{x: math.Inf(-1)}, Stores: []*ComputeStore{
				{Tensor: tmp, Value: gradApply("add", gradLoad(x, pr.RHS[0]), gradLoad(w, pr.RHS[1]))},
				{Tensor: gx, Index: pr.RHS[0], Value: gradApply("where", gradApply("eq", gradLoad(pm, pr.LHS), gradLoad(tmp, nil)), &ProjConst{Value: 1}, &ProjConst{Value: 0}),
					Accum: "add", Accumulate: true},
			}})
		return nil
	})
	expectValues(t, s, p, "p", []float64{-1, -0.5, -0.5, -0.5, -1.5, -1.5})
	expectValues(t, s, p, "gx", []float64{1, 0, 3, 0, 0, 2})
	expectContains(t, p.String(), "# argmax\nreset padding of x to -inf\nfor i0 in 0..5:\n")
}

func TestExtendedErrors(t *testing.T) {
	b := newG()
	x := b.input("x", seq(1, 3), 3)
	pr := proj(flags{inj: true, surj: true}, product(f1(0, 3)), ix(it(0)), ix(it(0)))
	for _, tc := range []struct {
		a    Assignment
		want string
	}{
		{&Compute{Desc: "bad rank", Op: -1, Proj: pr, Stores: []*ComputeStore{{Tensor: x, Value: &ProjConst{}}}}, "store into x has 1 axes but its index map has 0 indices"},
		{&Compute{Desc: "bad prim", Op: -1, Proj: pr, Stores: []*ComputeStore{{Tensor: x, Index: pr.LHS, Value: gradApply("frob", gradLoad(x, pr.LHS))}}}, `primitive "frob" applied to 1 operand(s)`},
		{&Compute{Desc: "bad accum", Op: -1, Proj: pr, Stores: []*ComputeStore{{Tensor: x, Index: pr.LHS, Value: &ProjConst{}, Accum: "xor"}}}, `unknown accumulation operator "xor"`},
		{&Compute{Desc: "no proj", Op: -1}, "no projections"},
		{&RevBlock{Desc: "arity", Op: -1, Src: x, Dst: []int{x, x}, Proj: pr}, "1 RHS index maps for 2 targets"},
		{&Clear{Desc: "missing", Tensors: []int{7}}, "tensor 7 does not exist"},
	} {
		_, err := LowerExtended(b.g, func(p *Program) error {
			p.Assignments = append(p.Assignments, tc.a)
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.a.Description(), err, tc.want)
		}
	}
}
