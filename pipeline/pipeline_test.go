package pipeline_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/autodiff"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// src: c[i] = sum_j a[i, j] * b[j] with a = 0..5 (2x3) and b = 1, so
// c = [0+1+2, 3+4+5] = [3, 12].
const src = `input a : 2, 3 = range
input b : 3 = 1
let c = a +* "i, j; j => i" b
`

func TestCompileProducts(t *testing.T) {
	res, err := pipeline.Compile(src, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Program == nil || len(res.Program.Stmts) != 3 || res.Graph == nil || !res.Projected || res.Loops == nil || res.Stopped {
		t.Fatalf("products: %+v", res)
	}
	if !res.Loops.Reached(loopir.Assigned | loopir.Looped | loopir.Padded | loopir.Checked) {
		t.Errorf("not fully lowered: %v", res.Loops.Done)
	}
	st, err := loopir.Run[float64](res.Loops)
	if err != nil {
		t.Fatal(err)
	}
	c := -1
	for _, n := range res.Graph.Named {
		if n.Name == "c" {
			c = n.Tensor
		}
	}
	if got := st.Values(c); !slices.Equal(got, []float64{3, 12}) {
		t.Errorf("c = %v, want [3 12]", got)
	}
}

// TestCompileProgram: a parsed program goes through the same stages,
// "parse" included, with the same products.
func TestCompileProgram(t *testing.T) {
	p, err := program.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	res, err := pipeline.CompileProgram(p, pipeline.Options{Observe: func(s string, _ func(io.Writer)) { seen = append(seen, s) }})
	if err != nil || res.Program != p || res.Loops == nil || !slices.Equal(seen, pipeline.Stages(pipeline.Options{})) {
		t.Fatalf("err %v, stages %v", err, seen)
	}
	ref, err := pipeline.Compile(src, pipeline.Options{})
	if err != nil || res.Loops.String() != ref.Loops.String() {
		t.Errorf("loops differ:\n%s\nvs\n%s", res.Loops, ref.Loops)
	}
	res, err = pipeline.CompileProgram(p, pipeline.Options{Until: "parse"})
	if err != nil || !res.Stopped || res.Graph != nil {
		t.Errorf("until parse: %v, %+v", err, res)
	}
}

func TestGoals(t *testing.T) {
	res, err := pipeline.Compile(src, pipeline.Options{Goal: pipeline.Shapes})
	if err != nil || res.Graph == nil || res.Projected || res.Loops != nil || res.Graph.Ops[0].Proj != nil {
		t.Errorf("shapes: %v %+v", err, res)
	}
	res, err = pipeline.Compile(src, pipeline.Options{Goal: pipeline.Projected})
	if err != nil || !res.Projected || res.Loops != nil || res.Graph.Ops[0].Proj == nil {
		t.Errorf("projected: %v %+v", err, res)
	}
	if got := pipeline.Stages(pipeline.Options{Goal: pipeline.Shapes}); got[len(got)-1] != "shapes" {
		t.Errorf("shape stages end with %s", got[len(got)-1])
	}
}

// TestStagesObserved: every stage is observed once, in the order Stages
// lists, with a non-empty dump; stopping after each stage leaves exactly
// the products of the stages run.
func TestStagesObserved(t *testing.T) {
	stages := pipeline.Stages(pipeline.Options{})
	want := slices.Concat([]string{"parse"}, inference.Stages(), []string{"projections"}, loopir.Names(loopir.Passes()))
	if !slices.Equal(stages, want) {
		t.Fatalf("stages %v, want %v", stages, want)
	}
	var seen []string
	_, err := pipeline.Compile(src, pipeline.Options{Observe: func(stage string, dump func(io.Writer)) {
		var b bytes.Buffer
		dump(&b)
		if b.Len() == 0 {
			t.Errorf("%s: empty dump", stage)
		}
		seen = append(seen, stage)
	}})
	if err != nil || !slices.Equal(seen, stages) {
		t.Fatalf("observed %v (err %v)", seen, err)
	}
	for i, stage := range stages {
		var last string
		res, err := pipeline.Compile(src, pipeline.Options{Until: stage, Observe: func(s string, _ func(io.Writer)) { last = s }})
		if err != nil || !res.Stopped || last != stage {
			t.Errorf("until %s: err %v, stopped %v, last observed %s", stage, err, res.Stopped, last)
			continue
		}
		inferred := i >= slices.Index(stages, "shapes")
		projected := i >= slices.Index(stages, "projections")
		lowered := i >= slices.Index(stages, "assign")
		if (res.Graph != nil) != inferred || res.Projected != projected || (res.Loops != nil) != lowered {
			t.Errorf("until %s: graph %v, projected %v, loops %v", stage, res.Graph != nil, res.Projected, res.Loops != nil)
		}
		if lowered && res.Loops.Done[len(res.Loops.Done)-1] != stage {
			t.Errorf("until %s: passes run %v", stage, res.Loops.Done)
		}
	}
}

func TestErrors(t *testing.T) {
	_, err := pipeline.Compile(src, pipeline.Options{Until: "stage8"})
	if err == nil || !strings.Contains(err.Error(), `unknown stage "stage8" (stages: parse, elaborate, settle, stage3, `) {
		t.Errorf("unknown stage: %v", err)
	}
	res, err := pipeline.Compile("input a : 2\nlet b = a +", pipeline.Options{})
	if e, ok := inference.AsError(err); !ok || e.Kind != inference.KindParse || e.Pos.Line != 2 || res.Program != nil {
		t.Errorf("parse error: %v", err)
	}
	res, err = pipeline.Compile("input a : 2\ninput b : 3\nlet c = a + b\n", pipeline.Options{})
	if e, ok := inference.AsError(err); !ok || e.Kind != inference.KindDimMismatch || res.Program == nil || res.Graph != nil {
		t.Errorf("shape error: %v, %+v", err, res)
	}
	// A failing lowering pass: the projections are there, the loops not,
	// and the pass's error comes back unchanged.
	boom := errors.New("boom")
	ps := loopir.Concat(loopir.Passes()[:2], []loopir.Pass{loopir.ExtendPass("boom", func(*loopir.Program) error { return boom })})
	res, err = pipeline.Compile(src, pipeline.Options{Passes: ps})
	if err != boom || !res.Projected || res.Loops != nil {
		t.Errorf("failing pass: %v, %+v", err, res)
	}
	if got := pipeline.Stages(pipeline.Options{Passes: ps}); got[len(got)-1] != "boom" {
		t.Errorf("stages with custom passes end with %s", got[len(got)-1])
	}
	// The graph entry knows only the stages after inference.
	g := res.Graph
	if _, err := pipeline.CompileGraph(g, pipeline.Options{Until: "stage3"}); err == nil ||
		!strings.Contains(err.Error(), `unknown stage "stage3" (stages: projections, assign, loops, pad, check)`) {
		t.Errorf("graph stages: %v", err)
	}
}

// TestBackward: the backward program of a scalar loss comes with the
// forward products; a non-scalar loss is a BackwardError wrapping
// autodiff's error.
func TestBackward(t *testing.T) {
	res, err := pipeline.Compile(src+"let l = c ++ \"i => 0\"\n", pipeline.Options{Goal: pipeline.Projected})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Graph
	loss := g.Named[len(g.Named)-1].Tensor
	out, err := pipeline.CompileGraph(g, pipeline.Options{Backward: &pipeline.Backward{Loss: loss}})
	if err != nil || out.Gradients == nil || out.Loops == nil || !out.Gradients.Program.Reached(loopir.Checked) {
		t.Fatalf("backward: %v, %+v", err, out)
	}
	// dl/db[j] = sum_i a[i, j] = [3, 5, 7].
	st, err := loopir.Run[float64](out.Gradients.Program)
	if err != nil {
		t.Fatal(err)
	}
	b := g.Named[1].Tensor
	if got := st.Values(out.Gradients.Of(b)); !slices.Equal(got, []float64{3, 5, 7}) {
		t.Errorf("db = %v, want [3 5 7]", got)
	}
	c := g.Named[2].Tensor
	_, err = pipeline.CompileGraph(g, pipeline.Options{Backward: &pipeline.Backward{Loss: c}})
	var be *pipeline.BackwardError
	var ae *autodiff.Error
	if !errors.As(err, &be) || !errors.As(err, &ae) || !strings.Contains(err.Error(), "must have a single cell") {
		t.Errorf("non-scalar loss: %v", err)
	}
}
