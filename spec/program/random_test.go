package program

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/ocannlgen/ocannlgen/spec"
)

// gen builds random trees of the shapes the parser produces.
type gen struct{ r *rand.Rand }

var (
	genNames   = []string{"x", "w_q", "b", "o", "i", "x'", "_t", "A1"}
	genFuncs   = []string{"relu", "sat01", "exp", "log", "exp2", "log2", "sin", "cos", "sqrt", "recip", "recip_sqrt", "neg", "tanh", "not", "id"}
	genBinOps  = []string{"*", "*.", "/.", "/", "+", "-", "<", "=", "<>"}
	genSpecs   = []string{"ij=>ji", " ... | t -> ... => ... | 0 -> ...", `a"b`, `c\d`, "", "a; b => a^b"}
	genNumbers = []string{"0", "2", "0.5", "7.0", "0.", "1e-5", "1.5E+3", "-3", "-0.25", "123456789"}
	genAccums  = []string{"=:", "=+", "=:+", "=-", "=:-", "=*", "=:*", "=/", "=:/", "=@^", "=:@^", "=@-", "=:@-"}
)

func (g gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g gen) number() *Number {
	t := g.pick(genNumbers)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		panic(err)
	}
	return &Number{Value: v, Text: t}
}

func (g gen) captures() []Capture {
	var cs []Capture
	for range g.r.IntN(3) {
		cs = append(cs, Capture{Name: g.pick(genSpecs)})
	}
	return cs
}

func (g gen) fields() []Field {
	var fs []Field
	for range g.r.IntN(3) {
		f := Field{Kind: "oib"[g.r.IntN(3)]}
		for range g.r.IntN(3) {
			f.Dims = append(f.Dims, g.r.IntN(100))
		}
		fs = append(fs, f)
	}
	return fs
}

func (g gen) exprs(depth, max int) []Expr {
	var xs []Expr
	for range g.r.IntN(max + 1) {
		xs = append(xs, g.expr(depth-1))
	}
	return xs
}

func (g gen) expr(depth int) Expr {
	if depth <= 0 {
		switch g.r.IntN(3) {
		case 0:
			return g.number()
		case 1:
			return &DimRef{Name: g.pick(append(genNames, "range", "relu"))}
		}
		return &Ident{Name: g.pick(genNames)}
	}
	d := depth - 1
	switch g.r.IntN(13) {
	case 0:
		return &Binary{Op: g.pick(genBinOps), X: g.expr(d), Y: g.expr(d)}
	case 1:
		return &Pow{X: g.expr(d), Exp: g.number().Value}
	case 2:
		return &Unary{Func: g.pick(genFuncs), X: g.expr(d)}
	case 3:
		e := &Einsum{Op: g.pick([]string{"+*", "@^+", "+++"}), Spec: g.pick(genSpecs), Captures: g.captures(),
			X: g.expr(d), Y: g.expr(d)}
		return e
	case 4:
		return &Einsum{Op: g.pick([]string{"++", "@^^"}), Spec: g.pick(genSpecs), Captures: g.captures(), X: g.expr(d)}
	case 5:
		ops := g.exprs(depth, 3)
		if len(ops) == 0 {
			ops = []Expr{g.expr(d)}
		}
		return &Concat{Operands: ops, Spec: g.pick(genSpecs), Captures: g.captures()}
	case 6:
		return &Slice{X: g.expr(d), Index: g.r.IntN(5)}
	case 7:
		return &Ternary{Op: g.pick([]string{"where", "fma"}), A: g.expr(d), B: g.expr(d), C: g.expr(d)}
	case 8:
		ip := &InlineParam{Name: g.pick(genNames), Fields: g.fields()}
		if g.r.IntN(2) == 0 {
			ip.Init = g.expr(d)
		}
		return ip
	case 9:
		return &Literal{Kind: LitKind(g.r.IntN(3)), Items: g.exprs(depth, 3)}
	case 10:
		return &Unary{Func: "neg", X: g.expr(d)}
	}
	return g.expr(0)
}

func (g gen) row() *RowDecl {
	if g.r.IntN(4) == 0 {
		return &RowDecl{Unknown: true}
	}
	r := &RowDecl{}
	for range g.r.IntN(3) {
		d := DimDecl{Size: g.r.IntN(10)}
		if g.r.IntN(3) == 0 {
			d.Basis = g.pick(append(genNames, "range"))
		}
		r.Dims = append(r.Dims, d)
	}
	return r
}

func (g gen) shape() *ShapeDecl {
	s := &ShapeDecl{Output: g.row()}
	if g.r.IntN(2) == 0 {
		s.Batch = g.row()
	}
	if g.r.IntN(2) == 0 {
		s.Input = g.row()
	}
	return s
}

func (g gen) literalOfNumbers(depth int) *Literal {
	l := &Literal{Kind: LitKind(g.r.IntN(3))}
	for range g.r.IntN(3) {
		if depth > 0 && g.r.IntN(2) == 0 {
			l.Items = append(l.Items, g.literalOfNumbers(depth-1))
		} else {
			l.Items = append(l.Items, g.number())
		}
	}
	return l
}

func (g gen) init() *Init {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return &Init{Kind: InitRange}
	case 2:
		return &Init{Kind: InitNumber, Number: g.number().Value}
	}
	return &Init{Kind: InitLiteral, Literal: g.literalOfNumbers(2)}
}

func (g gen) stmt() Stmt {
	name := g.pick(genNames)
	switch g.r.IntN(6) {
	case 0:
		return &InputStmt{Name: name, Shape: g.shape(), Init: g.init()}
	case 1:
		s := &LeafStmt{Name: name, Init: g.init()}
		if g.r.IntN(2) == 0 {
			s.Shape = g.shape()
		}
		return s
	case 2:
		return &ParamStmt{Name: name, Init: g.init(), Fields: g.fields()}
	case 3:
		return &DimStmt{Name: g.pick(append(genNames, "where")), Value: g.r.IntN(100)}
	case 4:
		return &LetStmt{Name: name, Expr: g.expr(4)}
	}
	s := &AssignStmt{Target: name, Inline: g.r.IntN(2) == 0, Accum: g.pick(genAccums)}
	switch g.r.IntN(4) {
	case 0:
		s.Op, s.Args = g.pick(genFuncs), []Expr{g.expr(3)}
	case 1:
		s.Op, s.Args = g.pick(genBinOps), []Expr{g.expr(3), g.expr(3)}
	case 2:
		s.Op, s.Args = "**.", []Expr{g.expr(3), g.number()}
	default:
		e := g.expr(3)
		switch e.(type) {
		case *Binary, *Pow:
			e = &Unary{Func: "relu", X: e}
		}
		s.Args = []Expr{e}
	}
	if g.r.IntN(2) == 0 {
		s.Logic = g.pick(append(genSpecs, ".", "@", "T"))
		s.LogicPos = spec.Pos{Line: 1, Col: 1} // marks the clause as present
	}
	return s
}

// TestRandomRoundTrip prints random trees and checks that they parse back
// unchanged, both as programs (minimal parentheses) and as expressions
// (Format, fully parenthesized).
func TestRandomRoundTrip(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	for i := range 3000 {
		var p Program
		for range 1 + g.r.IntN(4) {
			p.Stmts = append(p.Stmts, g.stmt())
		}
		text := p.String()
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("case %d: printed program does not parse: %v\n%s", i, err, text)
		}
		if !sameProgram(&p, q) {
			t.Fatalf("case %d: round trip changed the program\n%s\nre-printed:\n%s", i, text, q.String())
		}

		e := g.expr(5)
		f := Format(e)
		e2, err := ParseExpr(f)
		if err != nil {
			t.Fatalf("case %d: Format output does not parse: %v\n%s", i, err, f)
		}
		stripPos(&e)
		stripPos(&e2)
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("case %d: Format round trip changed the tree\n%s\n%s", i, f, Format(e2))
		}
	}
}
