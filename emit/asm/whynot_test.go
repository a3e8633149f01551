package asm

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// TestWhyNotRegisterBudget: the winner record of a max's backward (a
// min reduction of where(v == max, ordinal, N) along rows) qualifies for
// the reduction kernel but for its register budget, and the explanation
// says so rather than listing the shape rules it meets.
func TestWhyNotRegisterBudget(t *testing.T) {
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
			if ClassifyReduce(kn, p, loops, st, "float32") != nil {
				t.Fatalf("the winner record runs as a reduction kernel: update this test")
			}
			if why := WhyNot(kn, p, loops, st, "float32"); !strings.Contains(why, "need 17 vector registers, the AVX2 reduction kernel has 14") {
				t.Errorf("WhyNot = %q", why)
			}
		}
	}
	if !found {
		t.Fatalf("no winner record in\n%s", p)
	}
}
