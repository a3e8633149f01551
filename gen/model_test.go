package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// testModelSrc parses a Go file holding one annotated struct type and
// returns its model source, as scanPackage would.
func testModelSrc(t *testing.T, src string) *modelSrc {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "m.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var ms *modelSrc
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE || gd.Doc == nil {
			continue
		}
		for _, c := range gd.Doc.List {
			d, derr := parseComment(fset, c)
			if derr != nil {
				t.Fatal(derr)
			}
			switch {
			case d == nil:
			case d.Verb == verbModel:
				ms = &modelSrc{fset: fset, spec: gd.Specs[0].(*ast.TypeSpec), head: d}
			default:
				ms.lines = append(ms.lines, d)
			}
		}
	}
	if ms == nil {
		t.Fatal("no model")
	}
	return ms
}

const phaseModel = `package m

// Reg is a linear regression.
//
//ocannl:model float64
//ocannl:let lin = linear[2]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = lin(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input p : 1 | 3
//ocannl:return lin(p)
type Reg struct{ ocannlReg }
`

// TestModelPhases runs compileModel's phases one at a time on a linear
// regression and checks each phase's product against the model worked
// out by hand: w is 3 -> 2 and b is 2 (linear[2] on 3 inputs), the loss
// entry gets a forward and a backward kernel, predict a forward kernel.
func TestModelPhases(t *testing.T) {
	c := &modelCompiler{ms: testModelSrc(t, phaseModel), typeName: "Reg"}
	if err := c.header(); err != nil || c.elem != "float64" {
		t.Fatalf("header: %v, elem %q", err, c.elem)
	}
	if err := c.expand(); err != nil {
		t.Fatalf("expand: %v", err)
	}
	if len(c.m.Entries) != 2 || len(c.inf.Graphs) != 2 {
		t.Fatalf("expand: %d entries, %d graphs", len(c.m.Entries), len(c.inf.Graphs))
	}
	if err := c.params(); err != nil {
		t.Fatalf("params: %v", err)
	}
	var got []string
	for _, p := range c.gm.Params {
		got = append(got, p.Field+" "+p.Shape)
	}
	if want := []string{"LinW 3 -> 2", "LinB 2"}; !slices.Equal(got, want) {
		t.Errorf("params: %v, want %v", got, want)
	}
	if c.gm.Name != "ocannlReg" || c.gm.Elem != "float64" || c.gm.Optim != nil {
		t.Errorf("model: name %s, elem %s, optim %v", c.gm.Name, c.gm.Elem, c.gm.Optim)
	}
	if err := c.entries(); err != nil {
		t.Fatalf("entries: %v", err)
	}
	var kernels []string
	for _, k := range c.kernels {
		if k.Prog == nil || !k.Prog.Reached(loopir.Looped|loopir.Padded|loopir.Checked) {
			t.Errorf("kernel %s is not fully lowered", k.Name)
		}
		kernels = append(kernels, k.Name)
	}
	if want := []string{"ocannlRegTrainLoss", "ocannlRegBackward", "ocannlRegPredict"}; !slices.Equal(kernels, want) {
		t.Errorf("kernels %v, want %v", kernels, want)
	}
	if c.gm.Loss != 0 || c.gm.Backward != "ocannlRegBackward" || !slices.Equal(c.gm.BackwardGrads, []int{0, 1}) {
		t.Errorf("loss %d, backward %q, grads %v", c.gm.Loss, c.gm.Backward, c.gm.BackwardGrads)
	}
	// The whole compileModel gives the same.
	gm, ks, errs := compileModel(testModelSrc(t, phaseModel))
	if errs != nil || len(ks) != 3 || len(gm.Entries) != 2 {
		t.Errorf("compileModel: %v, %d kernels", errs, len(ks))
	}
}

// TestModelPhaseErrors: each phase reports its own errors, at the
// directive that causes them.
func TestModelPhaseErrors(t *testing.T) {
	for _, tc := range []struct {
		edit, with string
		want       string
	}{
		{"//ocannl:model float64", "//ocannl:model float16", `m.go:5:16: //ocannl:model takes an optional element type, float32 (the default), float64 or bf16 (float32 with the contractions on bf16 operands), not "float16"`},
		{"type Reg struct{ ocannlReg }", "type Reg int", "m.go:5:10: //ocannl:model belongs on a non-generic struct type"},
		{"//ocannl:let lin = linear[2]", "//ocannl:let lin = linear[2", "m.go:6:"},
		{"//ocannl:entry predict:", "//ocannl:entry init:", "m.go:12:"},
		{"//ocannl:return (d *. d) ++ \"...|... => 0\"", "//ocannl:return d", "the loss train must be a single number"},
	} {
		src := strings.Replace(phaseModel, tc.edit, tc.with, 1)
		_, _, errs := compileModel(testModelSrc(t, src))
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: errors %v, want %q", tc.with, errs, tc.want)
		}
	}
}
