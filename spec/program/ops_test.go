package program

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/ops"
)

// TestTableSpellings parses every primitive of the op table as the table
// says the language spells it, and every accumulator's assignment
// operators: a spelling the lexer or parser does not know fails here.
func TestTableSpellings(t *testing.T) {
	for _, p := range ops.Prims() {
		switch p.Syntax {
		case ops.Func:
			if !isKeyword(string(p.Name)) || !IsKeyword(string(p.Name)) {
				t.Errorf("%s: not a reserved word", p.Name)
			}
			src := string(p.Name) + " a"
			if p.Arity == 3 {
				src += " b c"
			}
			e, err := ParseExpr(src)
			if err != nil {
				t.Errorf("%s: %v", src, err)
				continue
			}
			switch e := e.(type) {
			case *Unary:
				if p.Arity != 1 || e.Func != string(p.Name) {
					t.Errorf("%s parsed as unary %q", src, e.Func)
				}
			case *Ternary:
				if p.Arity != 3 || e.Op != string(p.Name) {
					t.Errorf("%s parsed as ternary %q", src, e.Op)
				}
			default:
				t.Errorf("%s parsed as %T", src, e)
			}
		case ops.Infix:
			for _, s := range p.Infix {
				if op, accum := matchOp(s + " "); op != s || accum {
					t.Errorf("%s: infix %q lexes as %q", p.Name, s, op)
				}
			}
		}
	}
	for _, a := range ops.Accums() {
		for _, s := range []string{"=" + a.Symbol, "=:" + a.Symbol} {
			prog, err := Parse("t " + s + " a\n")
			if err != nil {
				t.Errorf("%s: %v", s, err)
				continue
			}
			if st, ok := prog.Stmts[0].(*AssignStmt); !ok || st.Accum != s {
				t.Errorf("%s parsed as %#v", s, prog.Stmts[0])
			}
		}
	}
}
