package gocode

import (
	"github.com/ocannlgen/ocannlgen/emit/target"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

func TestSplittable(t *testing.T) {
	// c[i][k] += a[i][j] * b[j][k] (vars 0, 2 drive c; 1 is the reduction)
	// and d[i+k] (two loops on one axis: neither alone).
	st := &loopir.Store{Tensor: 0, Index: []loopir.IndexExpr{
		{Terms: []loopir.IndexTerm{{Coeff: 1, Var: 0}}},
		{Terms: []loopir.IndexTerm{{Coeff: 1, Var: 2}}, Offset: 1},
	}}
	for v, want := range map[int]bool{0: true, 1: false, 2: true} {
		if got := loopir.OwnsAxis(v, st.Index); got != want {
			t.Errorf("c: OwnsAxis(%d) = %v, want %v", v, got, want)
		}
	}
	d := &loopir.Store{Tensor: 0, Index: []loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 1, Var: 0}, {Coeff: 1, Var: 2}}}}}
	if loopir.OwnsAxis(0, d.Index) || loopir.OwnsAxis(2, d.Index) {
		t.Error("d[i+k]: a loop sharing its axis was splittable")
	}
}

// renderPar renders one kernel of src (tensors a, b inputs, c output)
// with parallel nests on (and the assembly kernels of set, if given).
func renderPar(t *testing.T, src, scratch string, set ...*asm.Set) string {
	t.Helper()
	_, p := compileProgram(t, src, nil)
	k := &desc.Kernel{Name: "K", Elem: "float32", Prog: p, Scratch: scratch, ScratchOver: target.Generic().Loops.ScratchOver, PoolParam: scratch != ""}
	for i, ps := range []pspec{pa("a"), pa("b"), out(pa("c"))} {
		_ = i
		id := -1
		for t2 := range p.Tensors {
			if p.Tensors[t2].Name == ps.name {
				id = t2
			}
		}
		if id < 0 {
			t.Fatalf("no tensor %s", ps.name)
		}
		k.Params = append(k.Params, desc.Param{Name: ps.name, Kind: desc.PtrArray, Tensor: id, Output: ps.out})
	}
	opt := Options{Parallel: true}
	if len(set) > 0 {
		opt.Asm = set[0]
	}
	out, err := Render(&desc.File{Package: "p", Kernels: []*desc.Kernel{k}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestParallelRule: a large matmul runs in 8 parts of its rows on the
// default pool; a small one stays serial; a large nest reading a stack
// local stays serial unless the kernel has a scratch, which then holds
// the local, and the function takes the pool.
func TestParallelRule(t *testing.T) {
	big := renderPar(t, "input a : 256, 256\ninput b : 256, 256\nlet c = a +* \"ij;jk=>ik\" b", "")
	for _, want := range []string{"type KPart0 struct", "func (r *KPart0) Part(j int)", "region := rt.DefaultPool().Enter()", "defer region.Leave()", "region.Run(rec, 8)", "var KPart0Records rt.Records[KPart0]", "*rec = KPart0{}"} {
		if !strings.Contains(big, want) {
			t.Errorf("256^3 matmul: no %q in\n%s", want, big)
		}
	}
	small := renderPar(t, "input a : 16, 16\ninput b : 16, 16\nlet c = a +* \"ij;jk=>ik\" b", "")
	if strings.Contains(small, "Part0") || strings.Contains(small, "rt.") {
		t.Errorf("16^3 matmul (4096 iterations) runs in parallel:\n%s", small)
	}
	const local = "input a : 128, 128\ninput b : 128, 128\nlet t = a *. 2\nlet c = t +* \"ij;jk=>ik\" b"
	if s := renderPar(t, local, ""); strings.Contains(s, "Part0") {
		t.Errorf("a nest reading a 64 KiB stack local runs in parallel:\n%s", s)
	}
	s := renderPar(t, local, "KScratch")
	for _, want := range []string{"pool *rt.Pool, scratch *KScratch)", "region := pool.Enter()", "region.Run(rec, 8)", "scratch *KScratch\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("with a scratch: no %q in\n%s", want, s)
		}
	}
}

// TestParallelReduce: a reduction over a large batch into a small output
// (a bias gradient) is split on the batch into 8 parts, whose partial
// sums the kernel adds in part order.
func TestParallelReduce(t *testing.T) {
	s := renderPar(t, "input a : 4096, 16\ninput b : 16\nlet c = a +* \"bc;c=>c\" b", "")
	for _, want := range []string{"cPartial [8][16]float32", "region := rt.DefaultPool().Enter()", "region.Run(rec, 8)", "// The 8 partial sums, added in part order.",
		"+= rec.cPartial[0][", "+= rec.cPartial[7][", "cPartial[j] = [16]float32{}"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	// A max reduction is not split (only sums are).
	if s := renderPar(t, "input a : 4096, 16\ninput b : 16\nlet c = a @^+ \"bc;c=>c\" b", ""); strings.Contains(s, "Partial") {
		t.Errorf("a max reduction was split:\n%s", s)
	}
}

// TestPlainAccessRules: a plain nest over i0 may run in parts of i0 when
// each written tensor is partitioned by i0 (one axis indexed by the same
// c*i0+offset everywhere) or a private temporary (written, then read, at
// one cell of one loop body).
func TestPlainAccessRules(t *testing.T) {
	ix := func(off int, terms ...loopir.IndexTerm) loopir.IndexExpr {
		return loopir.IndexExpr{Terms: terms, Offset: off}
	}
	i0, i1 := loopir.IndexTerm{Coeff: 1, Var: 0}, loopir.IndexTerm{Coeff: 1, Var: 1}
	two0 := loopir.IndexTerm{Coeff: 2, Var: 0}
	zero1 := loopir.IndexTerm{Coeff: 0, Var: 1}
	b1, b2 := new([]loopir.Stmt), new([]loopir.Stmt)
	acc := func(body *[]loopir.Stmt, pos int, store, accum bool, idx ...loopir.IndexExpr) plainAccess {
		return plainAccess{idx: idx, body: body, pos: pos, store: store, accum: accum}
	}
	for _, c := range []struct {
		name string
		acc  []plainAccess
		want bool
	}{
		{"x[i0][i1] stored, x[i0][i1+1] read", []plainAccess{acc(b1, 1, true, true, ix(0, i0), ix(0, i1)), acc(b2, 0, false, false, ix(0, i0, zero1), ix(1, i1))}, true},
		{"x[2*i0+1] everywhere", []plainAccess{acc(b1, 0, true, false, ix(1, two0)), acc(b1, 1, false, false, ix(1, two0))}, true},
		{"x[i0] stored, x[i0+1] read", []plainAccess{acc(b1, 0, true, false, ix(0, i0)), acc(b1, 1, false, false, ix(1, i0))}, false},
		{"x[i0+i1]", []plainAccess{acc(b1, 0, true, false, ix(0, i0, i1))}, false},
		{"x[i1] only", []plainAccess{acc(b1, 0, true, false, ix(0, i1))}, false},
	} {
		if got := partitioned(c.acc, 0); got != c.want {
			t.Errorf("partitioned(%s) = %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		acc  []plainAccess
		want bool
	}{
		{"s[0] = ..., then read", []plainAccess{acc(b1, 1, false, false, ix(0)), acc(b1, 0, true, false, ix(0)), acc(b1, 2, false, false, ix(0))}, true},
		{"read before the store", []plainAccess{acc(b1, 0, false, false, ix(0)), acc(b1, 1, true, false, ix(0))}, false},
		{"accumulated first", []plainAccess{acc(b1, 0, true, true, ix(0)), acc(b1, 1, false, false, ix(0))}, false},
		{"read by its own store's value", []plainAccess{acc(b1, 0, true, false, ix(0)), acc(b1, 0, false, false, ix(0))}, false},
		{"read in another body", []plainAccess{acc(b1, 0, true, false, ix(0)), acc(b2, 1, false, false, ix(0))}, false},
		{"read at another cell", []plainAccess{acc(b1, 0, true, false, ix(0, i1)), acc(b1, 1, false, false, ix(1, i1))}, false},
	} {
		if got := private(c.acc); got != c.want {
			t.Errorf("private(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestParallelBalance: a convolution over 5 output rows, whose kernel
// runs over the batch, splits its batch in 8 parts (5 parts of rows
// would leave one of 2 threads idle a fifth of the nest); its kernel
// gradient stays 8 partial sums over the batch instead of 8 one-row
// kernels of its output channels.
func TestParallelBalance(t *testing.T) {
	const conv = "input a : 256 | 7, 7, 8\ninput b : 3, 3, 8 -> 16\nlet c = a +* \"... | oh<+kh, ow<+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc\" b"
	s := renderPar(t, conv, "", asm.NewSet(asm.Tiers()...))
	if !strings.Contains(s, "runs in 8 parts, one\n// for each 32 values of i0") {
		t.Errorf("the convolution does not run in 8 parts of its batch:\n%s", s)
	}
	const grad = "input a : 256 | 12, 12, 1\ninput b : 256 | 10, 10, 8\nlet c = a +* \"... | oh<+kh, ow<+kw, ic; ... | oh, ow, oc => kh, kw, ic -> oc\" b"
	if g := renderPar(t, grad, "", asm.NewSet(asm.Tiers()...)); !strings.Contains(g, "cPartial [8]") || strings.Contains(g, "for each 1 values of i0") {
		t.Errorf("the kernel gradient is not 8 partial sums over the batch:\n%s", g)
	}
	// A weight gradient of 10 rows (5 parts) sums over the batch in 8.
	b := buildBackward(t, ecase{"WGrad", "float32", "input x : 2048 | 32\nleaf w : 32 -> 10 = 0\nlet y = w * x\nlet l = (y *. y) ++ \"...|... => 0\"", []pspec{pa("x"), out(pa("l"))}}, "l", []string{"w"})
	gen, err := Render(&desc.File{Package: "p", Kernels: []*desc.Kernel{withScratch(b, "WGradS", 0).k}}, Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := string(gen); !strings.Contains(g, "Partial [8][10][32]float32") || strings.Contains(g, "runs in 5 parts") {
		t.Errorf("the 10-row weight gradient is not 8 partial sums over the batch:\n%s", g)
	}
}

// TestParallelShortReduction: a contraction with a short reduction
// (2048x64 cells through K=2, 2^18 multiply-adds, under Parallel.MinAsmIters)
// runs in parts as the memory work it is: its cells count as a map's.
func TestParallelShortReduction(t *testing.T) {
	s := renderPar(t, "input a : 2048, 2\ninput b : 2, 64\nlet c = a +* \"ij;jk=>ik\" b", "", asm.NewSet(asm.Tiers()...))
	if !strings.Contains(s, "region.Run(rec, 8)") {
		t.Errorf("the K=2 product over 2048x64 cells stays serial:\n%s", s)
	}
	if n := schedule.StoredCells([]*loopir.For{{Var: 0, Extent: 3}, {Var: 1, Extent: 5}, {Var: 2, Extent: 7}},
		&loopir.Store{Index: []loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 1, Var: 0}}}, {Terms: []loopir.IndexTerm{{Coeff: 2, Var: 2}}}}}); n != 21 {
		t.Errorf("storedCells = %d, want 21", n)
	}
}
