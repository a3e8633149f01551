package inference

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// convSpec is model/std.ocl's conv2d spec with stride 1.
const convSpec = `"... | 1*oh=+kh, 1*ow=+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc"`

// inferErr infers src, which must fail, and returns the error and the
// program.
func inferErr(t *testing.T, src string) (*Error, *program.Program) {
	t.Helper()
	p, err := program.Parse(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	_, err = Infer(p)
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("want an *Error, got %v (%T)", err, err)
	}
	return e, p
}

// letExpr returns the expression of the let named name in p.
func letExpr(t *testing.T, p *program.Program, name string) program.Expr {
	t.Helper()
	for _, s := range p.Stmts {
		if l, ok := s.(*program.LetStmt); ok && l.Name == name {
			return l.Expr
		}
	}
	t.Fatalf("no let %s", name)
	return nil
}

// TestOperandRankConv: a convolution over a tensor with one output axis
// fails with a rank mismatch whose Operand names the operation, the
// operand, its row, the slot and the operand's shape in words, without
// solver variables; the message itself is the solver's, unchanged.
func TestOperandRankConv(t *testing.T) {
	src := "input images : 32 | 64\nleaf k : 3, 3 -> 16 = 0\nlet y = images +* " + convSpec + " k\n"
	e, p := inferErr(t, src)
	if e.Kind != KindRankMismatch || !strings.Contains(e.Msg, "number of axes mismatch") {
		t.Fatalf("got %s: %s", e.Kind, e.Msg)
	}
	o := e.Operand
	if o == nil {
		t.Fatalf("no Operand on %v", e)
	}
	if o.Node != letExpr(t, p, "y") {
		t.Errorf("Node %#v is not the einsum of y", o.Node)
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %q, want %q", what, got, want)
		}
	}
	if o.Arg != 0 || o.Row != spec.Output {
		t.Errorf("Arg %d Row %v, want 0 output", o.Arg, o.Row)
	}
	check("Operand", o.Operand, "images")
	check("Wants", o.Wants(), "... | oh, ow, ..ic..")
	check("WantsCount", o.WantsCount(), "at least 2 output axes")
	check("Shape", o.Shape.String(), "32 | 64")
	check("Count", o.Shape.Count(spec.Output), "1 output axis")
	k, ok := o.ShapeOf("k")
	if !ok {
		t.Fatal("ShapeOf(k) failed")
	}
	check("ShapeOf(k)", k.String(), "3,3 -> 16")
	if _, ok := o.ShapeOf("nosuch"); ok {
		t.Error("ShapeOf(nosuch) succeeded")
	}
	if o.Fits(o.Shape) {
		t.Error("the operand's shape fits its slot")
	}
	if in, _ := o.ShapeOf("images"); !strings.Contains(in.String(), "64") || o.Fits(in) {
		t.Errorf("ShapeOf(images) = %s fits the slot", in)
	}
}

// TestOperandRankExact: an operand with more axes than a slot without a
// row variable allows; a batch row too short for its slot.
func TestOperandRankExact(t *testing.T) {
	e, _ := inferErr(t, "input x : 4 | 2, 3\nlet y = x ++ \"b | i => b | 0\"\n")
	o := e.Operand
	if o == nil {
		t.Fatalf("no Operand on %v", e)
	}
	if got := o.Wants() + " (" + o.WantsCount() + ") / " + o.Shape.String() + " (" + o.Shape.Count(o.Row) + ")"; got != "b | i (1 output axis) / 4 | 2,3 (2 output axes)" {
		t.Errorf("got %q", got)
	}
	e, _ = inferErr(t, "input x : 2 -> 3\nlet y = x ++ \"b | i -> o => b | o\"\n")
	o = e.Operand
	if o == nil || o.Row != spec.Batch || o.WantsCount() != "1 batch axis" || o.Shape.Count(spec.Batch) != "no batch axes" || o.Wants() != "b | i -> o" {
		t.Fatalf("got %+v from %v", o, e)
	}
}

// TestOperandRankOnlyForTheOperand: errors that are not an operand with
// a number of axes its slot forbids carry no Operand: a row variable
// bound by the other operand (the operand itself fits its slot), a size
// mismatch, and a rank mismatch of a non-spec operation.
func TestOperandRankOnlyForTheOperand(t *testing.T) {
	for src, kind := range map[string]ErrorKind{
		"input x : 4 | 2, 3\ninput y : 4 | 5\nlet z = x +* \"... | ..r..; ... | ..r.. => ... | 0\" y\n": KindRankMismatch,
		"input a : 64, 32\ninput b : 48, 16\nlet c = a +* \"i,j; j,k => i,k\" b\n":                      KindDimMismatch,
		"input x : 4 | 2, 3\nleaf w : 5 -> 7 = 0\nlet y = w * x\n":                                      KindRankMismatch,
	} {
		e, _ := inferErr(t, src)
		if e.Kind != kind || e.Operand != nil {
			t.Errorf("%s: got %s with Operand %+v (%v), want %s without", src, e.Kind, e.Operand, e, kind)
		}
	}
}

// TestPartialShape prints rows as far as solved: unknown sizes as "?",
// the axes an open row may gain as "...", and counts an open row as "at
// least".
func TestPartialShape(t *testing.T) {
	p := PartialShape{rows: [3]partialRow{
		spec.Batch:  {open: true},
		spec.Input:  {end: []string{"3"}},
		spec.Output: {beg: []string{"2"}, end: []string{"?"}, open: true},
	}}
	if got, want := p.String(), "... | 3 -> 2,...,?"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	for k, want := range map[spec.Kind]string{spec.Batch: "any number of batch axes", spec.Input: "1 input axis", spec.Output: "at least 2 output axes"} {
		if got := p.Count(k); got != want {
			t.Errorf("Count(%v): got %q, want %q", k, got, want)
		}
	}
	if got := (PartialShape{}).String(); got != "[]" {
		t.Errorf("empty: got %q", got)
	}
	for _, tc := range []struct {
		n    int
		open bool
		row  string
		want bool
	}{
		{1, false, "..., a, b", false}, {2, false, "..., a, b", true}, {0, true, "..., a, b", true},
		{2, false, "a", false}, {1, false, "a", true}, {2, true, "a", false}, {1, true, "a", true}, {0, true, "a", true},
	} {
		sl, err := spec.ParseSlot(tc.row)
		if err != nil {
			t.Fatal(err)
		}
		if got := fits(&sl.Rows[spec.Output], tc.n, tc.open); got != tc.want {
			t.Errorf("fits(%q, %d, open %v) = %v, want %v", tc.row, tc.n, tc.open, got, tc.want)
		}
	}
}
