package inference

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/ops"
)

// TestTablePrimitivesElaborate infers a program applying every primitive
// of the op table in each of its spellings (and every accumulator) and
// checks the operation elaboration produced (and, for accumulators, its
// accumulation): a spelling elaboration does not know fails here.
func TestTablePrimitivesElaborate(t *testing.T) {
	type want struct {
		src   string
		prim  ops.PrimName
		accum ops.AccumName
	}
	var cases []want
	for _, p := range ops.Prims() {
		switch p.Syntax {
		case ops.Func:
			args := " a"
			if p.Arity == 3 {
				args = " a b c"
			}
			cases = append(cases, want{"let r = " + string(p.Name) + args, p.Name, ""})
			if p.Arity == 1 {
				cases = append(cases, want{"t =: " + string(p.Name) + " a", p.Name, ""})
			}
		case ops.Infix:
			for _, s := range p.Infix {
				if s == "**." {
					cases = append(cases, want{"let r = a **. 2", p.Name, ""})
					continue
				}
				cases = append(cases, want{"let r = a " + s + " b", p.Name, ""}, want{"t =: a " + s + " b", p.Name, ""})
			}
		}
	}
	for _, a := range ops.Accums() {
		cases = append(cases, want{"t =" + a.Symbol + " a", "id", a.Name}, want{"t =:" + a.Symbol + " a", "id", a.Name})
	}
	for _, c := range cases {
		src := "input a : 3 -> 3\ninput b : 3 -> 3\ninput c : 3 -> 3\ninput t : 3 -> 3\n" + c.src + "\n"
		g, err := InferSource(src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		op := g.Ops[len(g.Ops)-1]
		if op.Prim != c.prim || c.accum != "" && op.Accum != c.accum {
			t.Errorf("%s: prim %q accum %q, want %q %q", c.src, op.Prim, op.Accum, c.prim, c.accum)
		}
	}
}
