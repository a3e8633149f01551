package asm

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// TestWinnerRecordReduces: the winner record of a max's backward (a min
// reduction of where(v == max, ordinal, N) along rows) is past
// fixedRegs' register bound yet compiles, so it runs as a reduction
// kernel (it was Go loops, the explanation naming the register budget).
func TestWinnerRecordReduces(t *testing.T) {
	prog, err := program.Parse("input x : 32, 8 | 10 = range\nlet y = x *. {w; o=[10]}\nlet m = y @^^ \"... | c => ... | 0\"\nlet l = m ++ \"...|... => 0\"")
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.CompileProgram(prog, pipeline.Options{Goal: pipeline.Projected})
	if err != nil {
		t.Fatal(err)
	}
	loss := -1
	for _, n := range res.Graph.Named {
		if n.Name == "l" {
			loss = n.Tensor
		}
	}
	res, err = pipeline.CompileGraph(res.Graph, pipeline.Options{Backward: &pipeline.Backward{Loss: loss, ParamsOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	p, kn := res.Gradients.Program, target.AVX2().Kernels
	found := false
	for _, o := range p.Ops {
		for _, s := range o.Body {
			loops, st, ok := loopir.PerfectNest(s)
			if !ok || st.Accum != ops.AccMin {
				continue
			}
			found = true
			n := ClassifyReduce(kn, p, loops, st, "float32")
			if n == nil {
				t.Fatalf("the winner record is not a reduction kernel: %s", WhyNot(kn, p, loops, st, "float32"))
			}
			if n.Spec.Kind != AlongRows || n.Spec.N != 10 || n.Spec.Rows != 256 || n.Spec.fixedRegs() <= AVX2().Regs-2 {
				t.Errorf("winner record: %s, fixedRegs %d (want along rows, 256 rows of 10, past the bound)", n.Spec.Describe(), n.Spec.fixedRegs())
			}
		}
	}
	if !found {
		t.Fatalf("no winner record in\n%s", p)
	}
}

// TestReduceFitsRegisters: a reduction whose constants alone fill the
// YMM registers does not compile, and fitsAVX2 says so (the classifier
// leaves it to Go loops; WhyNot names the register budget).
func TestReduceFitsRegisters(t *testing.T) {
	x := &loopir.Load{Tensor: 0}
	var e loopir.Expr = x
	for i := range 16 {
		e = &loopir.Apply{Prim: ops.Add, Args: []loopir.Expr{e, &loopir.Const{Value: float64(i) + 0.5}}}
	}
	r := ReduceSpec{Elem: "float32", Kind: AlongRows, Accum: ops.AccMax, N: 64, Rows: 8, RowStride: []int{1, 64}, Expr: e, Stride0: []bool{false}}
	if r.fitsAVX2() {
		t.Errorf("%s (fixedRegs %d) fits the AVX2 registers", r.Describe(), r.fixedRegs())
	}
	r.Expr = x
	if !r.fitsAVX2() {
		t.Errorf("%s does not fit", r.Describe())
	}
}
