package program

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/spec"
)

func TestPrecedence(t *testing.T) {
	tests := []struct{ src, want string }{
		// multiplicative vs additive, left associativity
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a - b + c", "((a - b) + c)"},
		{"a *. b /. c", "((a *. b) /. c)"},
		{"a * b *. c / d", "(((a * b) *. c) / d)"},
		{"a /. b * c", "((a /. b) * c)"},
		// power binds tightest
		{"x **. 2 *. y", "((x **. 2) *. y)"},
		{"y *. x **. 2", "(y *. (x **. 2))"},
		{"a + b **. 0.5", "(a + (b **. 0.5))"},
		{"x **. -1", "(x **. -1)"},
		{"x **. (0.5)", "(x **. 0.5)"},
		{"x **. 1e-5", "(x **. 1e-05)"},
		{"(x **. 2) **. 3", "((x **. 2) **. 3)"},
		// function application binds tighter than every operator
		{"relu x + y", "((relu x) + y)"},
		{"relu (x + y)", "(relu (x + y))"},
		{"exp x *. 2", "((exp x) *. 2)"},
		{"x *. exp y", "(x *. (exp y))"},
		{"sqrt (dim d)", "(sqrt dim d)"},
		{"sqrt dim d", "(sqrt dim d)"},
		{"a /. dim m", "(a /. dim m)"},
		{"relu (exp x)", "(relu (exp x))"},
		{"exp x **. 2", "((exp x) **. 2)"},
		{"where mask scores (0 - 1000000000)", "(where mask scores (0 - 1000000000))"},
		{"where c a b + 1", "((where c a b) + 1)"},
		{"fma a x b *. 2", "((fma a x b) *. 2)"},
		{"where (a < b) a b", "(where (a < b) a b)"},
		{"where c -1 2", "(where c -1 2)"},
		{"fma {w} x {b = 0.}", "(fma {w} x {b = 0.})"},
		// spec operators at the additive level
		{`x ++ "s" + y`, `((x ++ "s") + y)`},
		{`y + x ++ "s"`, `((y + x) ++ "s")`},
		{`x ++ "s" ++ "t"`, `((x ++ "s") ++ "t")`},
		{`a +* "s" b * c`, `(a +* "s" (b * c))`},
		{`a +* "s" b + c`, `((a +* "s" b) + c)`},
		{`a + b +* "s" c`, `((a + b) +* "s" c)`},
		{`a +* "s" b +* "t" c`, `((a +* "s" b) +* "t" c)`},
		{`a +++ "s" b - c`, `((a +++ "s" b) - c)`},
		{`a *. b +* "s" c *. d`, `((a *. b) +* "s" (c *. d))`},
		{`relu x +* "s" y`, `((relu x) +* "s" y)`},
		{`a +* "s" relu b`, `(a +* "s" (relu b))`},
		// @-level: right associative, below additive
		{`a @^+ "s" b + c`, `(a @^+ "s" (b + c))`},
		{`a + b @^+ "s" c`, `((a + b) @^+ "s" c)`},
		{`a @^+ "s" b @^+ "t" c`, `(a @^+ "s" (b @^+ "t" c))`},
		{`a @^+ "s" b @^^ "t"`, `(a @^+ "s" (b @^^ "t"))`},
		{`a @^^ "s" @^+ "t" b`, `((a @^^ "s") @^+ "t" b)`},
		{`a + b @^^ "t"`, `((a + b) @^^ "t")`},
		{`a @^^ "s" @^^ "t"`, `((a @^^ "s") @^^ "t")`},
		{"x + y @| 0", "((x + y) @| 0)"},
		{"x @| 1 @| 0", "((x @| 1) @| 0)"},
		{`x @| 2 @^^ "s"`, `((x @| 2) @^^ "s")`},
		// comparisons are loosest
		{"a < b + c", "(a < (b + c))"},
		{"a = b < c", "((a = b) < c)"},
		{"a = b = c", "((a = b) = c)"},
		{`a <> b @^^ "s"`, `(a <> (b @^^ "s"))`},
		{`a @^+ "s" b < c`, `((a @^+ "s" b) < c)`},
		{"a < b * c - d", "(a < ((b * c) - d))"},
		{"a =-1", "(a = -1)"},
		// prefix minus
		{"-x **. 2", "((neg x) **. 2)"},
		{"-2 **. 2", "(-2 **. 2)"},
		{"-3 + x", "(-3 + x)"},
		{"x - -3", "(x - -3)"},
		{"x-3", "(x - 3)"},
		{"x * -y", "(x * (neg y))"},
		{"- - x", "(neg (neg x))"},
		{"-(a + b)", "(neg (a + b))"},
		{"neg (a)", "(neg a)"},
		{"exp -x", "(exp (neg x))"},
		{"relu -2", "(relu -2)"},
		{"-relu x", "(neg (relu x))"},
		// concatenation and tuples
		{`(a, b) ++^ "s" + c`, `(((a, b) ++^ "s") + c)`},
		{`c + (a, b) ++^ "s"`, `(c + ((a, b) ++^ "s"))`},
		{`c * (a, b) ++^ "s"`, `(c * ((a, b) ++^ "s"))`},
		{`sin ((a, b) ++^ "s")`, `(sin ((a, b) ++^ "s"))`},
		{`(a) ++^ "s"`, `((a) ++^ "s")`},
		{"(a, b)", "(a, b)"},
		{"(a)", "a"},
		{"((a))", "a"},
		{"(3,)", "(3,)"},
		{"()", "()"},
		// inline parameters, the MLP layer
		{"{w} * x + {b = 0.; o=[16]}", "(({w} * x) + {b = 0.; o=[16]})"},
		{"relu ({w} * x + {b = 0.; o=[16]})", "(relu (({w} * x) + {b = 0.; o=[16]}))"},
		{"{x2; o=[2; 3; 4]}", "{x2; o=[2; 3; 4]}"},
		{"{w; output_dims=[3]; input_dims=[2]; batch_dims=[]}", "{w; o=[3]; i=[2]; b=[]}"},
		{"{w;}", "{w}"},
		{"{a = [-4]}", "{a = [-4]}"},
		{"{c = a + b}", "{c = (a + b)}"},
	}
	for _, tc := range tests {
		e, err := ParseExpr(tc.src)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.src, err)
			continue
		}
		if got := Format(e); got != tc.want {
			t.Errorf("ParseExpr(%q) = %s, want %s", tc.src, got, tc.want)
		}
		// The canonical form parses to the same tree.
		e2, err := ParseExpr(tc.want)
		if err != nil {
			t.Errorf("ParseExpr(%q) (canonical form): %v", tc.want, err)
			continue
		}
		stripPos(&e)
		stripPos(&e2)
		if !reflect.DeepEqual(e, e2) {
			t.Errorf("%q and its canonical form %q parse differently", tc.src, tc.want)
		}
	}
}

func TestExprNodes(t *testing.T) {
	n := func(text string, v float64) *Number { return &Number{Value: v, Text: text} }
	id := func(name string) *Ident { return &Ident{Name: name} }
	tests := []struct {
		src  string
		want Expr
	}{
		{`q +* " ... s | h d; ... t | h d => ... s | t -> h" ["h"; "d"] k`, &Einsum{Op: "+*",
			Spec: " ... s | h d; ... t | h d => ... s | t -> h", Captures: []Capture{{Name: "h"}, {Name: "d"}},
			X: id("q"), Y: id("k")}},
		{`x ++ "ij=>ji"`, &Einsum{Op: "++", Spec: "ij=>ji", X: id("x")}},
		{`x ++ "a\"b\\c\d"`, &Einsum{Op: "++", Spec: `a"b\c\d`, X: id("x")}},
		{`m @^^ "... | t -> ... => ... | 0 -> ..."`, &Einsum{Op: "@^^", Spec: "... | t -> ... => ... | 0 -> ...", X: id("m")}},
		{`a @^+ "i;i=>i" b`, &Einsum{Op: "@^+", Spec: "i;i=>i", X: id("a"), Y: id("b")}},
		{`a +++ "i;j=>ij" b`, &Einsum{Op: "+++", Spec: "i;j=>ij", X: id("a"), Y: id("b")}},
		{`(a, b, c) ++^ "ii; mm; kk => ii^mm^kk" ["ii"]`, &Concat{Operands: []Expr{id("a"), id("b"), id("c")},
			Spec: "ii; mm; kk => ii^mm^kk", Captures: []Capture{{Name: "ii"}}}},
		{"x @| 3", &Slice{X: id("x"), Index: 3}},
		{"x **. 2.5", &Pow{X: id("x"), Exp: 2.5}},
		{"x **. -2", &Pow{X: id("x"), Exp: -2}},
		{"dim d", &DimRef{Name: "d"}},
		{"where m a b", &Ternary{Op: "where", A: id("m"), B: id("a"), C: id("b")}},
		{"fma a x b", &Ternary{Op: "fma", A: id("a"), B: id("x"), C: id("b")}},
		{"not x", &Unary{Func: "not", X: id("x")}},
		{"recip_sqrt x", &Unary{Func: "recip_sqrt", X: id("x")}},
		{"-x", &Unary{Func: "neg", X: id("x")}},
		{"a <> b", &Binary{Op: "<>", X: id("a"), Y: id("b")}},
		{"{b = 0.; o=[16]}", &InlineParam{Name: "b", Init: n("0.", 0), Fields: []Field{{Kind: 'o', Dims: []int{16}}}}},
		{"{w; i=[2;3]; b=[4;]}", &InlineParam{Name: "w", Fields: []Field{{Kind: 'i', Dims: []int{2, 3}}, {Kind: 'b', Dims: []int{4}}}}},
		{"x'", id("x'")},
		// numbers
		{"2", n("2", 2)},
		{"0.5", n("0.5", 0.5)},
		{"7.0", n("7.0", 7)},
		{"0.", n("0.", 0)},
		{"1e-5", n("1e-5", 1e-5)},
		{"1.5E+3", n("1.5E+3", 1500)},
		{"0.00001", n("0.00001", 0.00001)},
		{"-3", n("-3", -3)},
		{"- 3", n("-3", -3)},
		{"-0.25", n("-0.25", -0.25)},
		{"1e-400", n("1e-400", 0)},
		{"123456789012345678901234567890", n("123456789012345678901234567890", 123456789012345678901234567890)},
	}
	for _, tc := range tests {
		e := mustExpr(t, tc.src)
		stripPos(&e)
		if !reflect.DeepEqual(e, tc.want) {
			t.Errorf("ParseExpr(%q) = %#v (%s), want %#v", tc.src, e, Format(e), tc.want)
		}
	}
}

func TestLiterals(t *testing.T) {
	n := func(text string, v float64) *Number { return &Number{Value: v, Text: text} }
	lit := func(k LitKind, items ...Expr) *Literal { return &Literal{Kind: k, Items: items} }
	tests := []struct {
		src  string
		want Expr
		fmt  string
	}{
		{"[1; 2; 3]", lit(LitOutput, n("1", 1), n("2", 2), n("3", 3)), "[1; 2; 3]"},
		{"[1; 2; 3;]", lit(LitOutput, n("1", 1), n("2", 2), n("3", 3)), "[1; 2; 3]"},
		{"(1, 2, 3)", lit(LitInput, n("1", 1), n("2", 2), n("3", 3)), "(1, 2, 3)"},
		{"(1, 2, 3,)", lit(LitInput, n("1", 1), n("2", 2), n("3", 3)), "(1, 2, 3)"},
		{"[|1; 2|]", lit(LitBatch, n("1", 1), n("2", 2)), "[|1; 2|]"},
		{"[]", lit(LitOutput), "[]"},
		{"[||]", lit(LitBatch), "[||]"},
		{"[(-3, 1)]", lit(LitOutput, lit(LitInput, n("-3", -3), n("1", 1))), "[(-3, 1)]"},
		{"[(1, 2, 3); (4, 5, 6)]", lit(LitOutput,
			lit(LitInput, n("1", 1), n("2", 2), n("3", 3)),
			lit(LitInput, n("4", 4), n("5", 5), n("6", 6))), "[(1, 2, 3); (4, 5, 6)]"},
		{"[[[1; 2]; [3; 4]]; [[5; 6]; [7; 8]]]", lit(LitOutput,
			lit(LitOutput, lit(LitOutput, n("1", 1), n("2", 2)), lit(LitOutput, n("3", 3), n("4", 4))),
			lit(LitOutput, lit(LitOutput, n("5", 5), n("6", 6)), lit(LitOutput, n("7", 7), n("8", 8)))),
			"[[[1; 2]; [3; 4]]; [[5; 6]; [7; 8]]]"},
		{"[| [1;2]; [3;4] |]", lit(LitBatch,
			lit(LitOutput, n("1", 1), n("2", 2)), lit(LitOutput, n("3", 3), n("4", 4))), "[|[1; 2]; [3; 4]|]"},
		{"[| [ (1, 2); (3, 4) ] |]", lit(LitBatch, lit(LitOutput,
			lit(LitInput, n("1", 1), n("2", 2)), lit(LitInput, n("3", 3), n("4", 4)))), "[|[(1, 2); (3, 4)]|]"},
		// a parenthesized single item is just that item
		{"[(5)]", lit(LitOutput, n("5", 5)), "[5]"},
		{"[(5,)]", lit(LitOutput, lit(LitInput, n("5", 5))), "[(5,)]"},
		// tensor expressions stack along a new axis
		{"[x1; x2]", lit(LitOutput, &Ident{Name: "x1"}, &Ident{Name: "x2"}), "[x1; x2]"},
		{"(x1, x2 + 1)", lit(LitInput, &Ident{Name: "x1"},
			&Binary{Op: "+", X: &Ident{Name: "x2"}, Y: n("1", 1)}), "(x1, (x2 + 1))"},
		{"[| relu x; -y |]", lit(LitBatch, &Unary{Func: "relu", X: &Ident{Name: "x"}},
			&Unary{Func: "neg", X: &Ident{Name: "y"}}), "[|(relu x); (neg y)|]"},
		{"[1;\n 2; # two\n 3]", lit(LitOutput, n("1", 1), n("2", 2), n("3", 3)), "[1; 2; 3]"},
	}
	for _, tc := range tests {
		e := mustExpr(t, tc.src)
		if got := Format(e); got != tc.fmt {
			t.Errorf("Format(ParseExpr(%q)) = %s, want %s", tc.src, got, tc.fmt)
		}
		stripPos(&e)
		var want Expr = tc.want
		stripPos(&want)
		if !reflect.DeepEqual(e, want) {
			t.Errorf("ParseExpr(%q) = %s, want %s", tc.src, Format(e), Format(want))
		}
	}
}

func TestCapturesVsLiteral(t *testing.T) {
	tests := []struct{ src, want string }{
		// '[' followed by a string: a capture list
		{`x ++ "ij=>ji" ["i"; "j"]`, `(x ++ "ij=>ji" ["i"; "j"])`},
		{`x ++ "ij=>ji" [ "i" ]`, `(x ++ "ij=>ji" ["i"])`},
		{`x ++ "ij=>ji" ["i";]`, `(x ++ "ij=>ji" ["i"])`},
		{`x +* "i;i=>i" ["i"] [1; 2]`, `(x +* "i;i=>i" ["i"] [1; 2])`},
		{"x +* \"i;i=>i\" [\n \"i\"] y", `(x +* "i;i=>i" ["i"] y)`},
		// '[' followed by anything else: a literal operand
		{`x +* "i;i=>i" [1; 2]`, `(x +* "i;i=>i" [1; 2])`},
		{`x +* "i;i=>i" []`, `(x +* "i;i=>i" [])`},
		{`x +* "i;i=>i" [y; z]`, `(x +* "i;i=>i" [y; z])`},
		{`x +* "i;i=>i" [[1]]`, `(x +* "i;i=>i" [[1]])`},
		{`x +* "i;i=>i" [|1|]`, `(x +* "i;i=>i" [|1|])`},
		// captures on the other spec operators
		{`a @^+ "s" ["k"] b`, `(a @^+ "s" ["k"] b)`},
		{`a @^^ "s" ["k"]`, `(a @^^ "s" ["k"])`},
		{`a +++ "s" ["k"; "l"] b`, `(a +++ "s" ["k"; "l"] b)`},
		{`(a, b) ++^ "s" ["k"]`, `((a, b) ++^ "s" ["k"])`},
		{`img @^+ "oh=+wh, ow=+ww; wh, ww => oh, ow" ["wh"; "ww"] (0.0 + 0.0)`,
			`(img @^+ "oh=+wh, ow=+ww; wh, ww => oh, ow" ["wh"; "ww"] (0.0 + 0.0))`},
	}
	for _, tc := range tests {
		e := mustExpr(t, tc.src)
		if got := Format(e); got != tc.want {
			t.Errorf("ParseExpr(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
	e := mustExpr(t, `x ++ "ij=>ji" ["i"; "j"]`).(*Einsum)
	if len(e.Captures) != 2 || e.Captures[0].Name != "i" || e.Captures[1].Name != "j" {
		t.Errorf("captures = %+v", e.Captures)
	}
	if e.Captures[0].Pos != (spec.Pos{Line: 1, Col: 16}) || e.Captures[1].Pos != (spec.Pos{Line: 1, Col: 21}) {
		t.Errorf("capture positions = %v, %v; want 1:16, 1:21", e.Captures[0].Pos, e.Captures[1].Pos)
	}
	if _, ok := mustExpr(t, `x +* "i;i=>i" [1; 2]`).(*Einsum).Y.(*Literal); !ok {
		t.Errorf("the literal after a spec was not parsed as the right operand")
	}
}

func TestConcatVsInputLiteral(t *testing.T) {
	if _, ok := mustExpr(t, `(a, b) ++^ "a; b => a^b"`).(*Concat); !ok {
		t.Errorf("a tuple followed by ++^ is not a *Concat")
	}
	if l, ok := mustExpr(t, "(a, b)").(*Literal); !ok || l.Kind != LitInput || len(l.Items) != 2 {
		t.Errorf("a tuple not followed by ++^ is not an input literal")
	}
	if _, ok := mustExpr(t, "(a)").(*Ident); !ok {
		t.Errorf("(a) is not a parenthesized name")
	}
	c := mustExpr(t, `((x1 ++ "...|...->... => ...|0,...->..."), (x2 ++ "...|...->... => ...|0,...->...")) ++^ "...|bt0,...->...; ...|bt1,...->... => ...|bt0^bt1,...->..."`).(*Concat)
	if len(c.Operands) != 2 {
		t.Fatalf("got %d operands", len(c.Operands))
	}
	for _, op := range c.Operands {
		if _, ok := op.(*Einsum); !ok {
			t.Errorf("operand %s is not an einsum", Format(op))
		}
	}
	// A nested tuple inside a concat operand list stays an input literal.
	c = mustExpr(t, `((1, 2), x) ++^ "s"`).(*Concat)
	if l, ok := c.Operands[0].(*Literal); !ok || l.Kind != LitInput {
		t.Errorf("first operand = %s, want an input literal", Format(c.Operands[0]))
	}
	// Concat position is the operator, SpecPos the quote.
	c = mustExpr(t, `(a, b) ++^ "s"`).(*Concat)
	if c.Pos != (spec.Pos{Line: 1, Col: 8}) || c.SpecPos != (spec.Pos{Line: 1, Col: 12}) {
		t.Errorf("concat positions %v %v, want 1:8 1:12", c.Pos, c.SpecPos)
	}
}

func TestStatements(t *testing.T) {
	n := func(text string, v float64) *Number { return &Number{Value: v, Text: text} }
	row := func(dims ...int) *RowDecl {
		r := &RowDecl{}
		for _, d := range dims {
			r.Dims = append(r.Dims, DimDecl{Size: d})
		}
		return r
	}
	tests := []struct {
		src  string
		want Stmt
	}{
		{"input x : 2 | 3 -> 4 = range", &InputStmt{Name: "x",
			Shape: &ShapeDecl{Batch: row(2), Input: row(3), Output: row(4)}, Init: &Init{Kind: InitRange}}},
		{"input seq : 2,8 | 100 = range", &InputStmt{Name: "seq",
			Shape: &ShapeDecl{Batch: row(2, 8), Output: row(100)}, Init: &Init{Kind: InitRange}}},
		{"input mask : 8 | 8 -> = 1", &InputStmt{Name: "mask",
			Shape: &ShapeDecl{Batch: row(8), Input: row(8), Output: row()}, Init: &Init{Kind: InitNumber, Number: 1}}},
		{"input t1 : 4:batch = 1", &InputStmt{Name: "t1",
			Shape: &ShapeDecl{Output: &RowDecl{Dims: []DimDecl{{Size: 4, Basis: "batch"}}}},
			Init:  &Init{Kind: InitNumber, Number: 1}}},
		// A size may be a name (a Go model's integer constant).
		{"input x : BatchN | 2, n:rgb", &InputStmt{Name: "x",
			Shape: &ShapeDecl{Batch: &RowDecl{Dims: []DimDecl{{Name: "BatchN"}}},
				Output: &RowDecl{Dims: []DimDecl{{Size: 2}, {Name: "n", Basis: "rgb"}}}}}},
		{"input p : 3:rgb, 2 -> 5", &InputStmt{Name: "p",
			Shape: &ShapeDecl{Input: &RowDecl{Dims: []DimDecl{{Size: 3, Basis: "rgb"}, {Size: 2}}}, Output: row(5)}}},
		{"input a : 3 -> 2 = [(1, 2, 3); (4, 5, 6)]", &InputStmt{Name: "a",
			Shape: &ShapeDecl{Input: row(3), Output: row(2)},
			Init: &Init{Kind: InitLiteral, Literal: &Literal{Kind: LitOutput, Items: []Expr{
				&Literal{Kind: LitInput, Items: []Expr{n("1", 1), n("2", 2), n("3", 3)}},
				&Literal{Kind: LitInput, Items: []Expr{n("4", 4), n("5", 5), n("6", 6)}}}}}}},
		{"input b : 4 = -1.5", &InputStmt{Name: "b", Shape: &ShapeDecl{Output: row(4)},
			Init: &Init{Kind: InitNumber, Number: -1.5}}},
		{"input b : 4 =-2", &InputStmt{Name: "b", Shape: &ShapeDecl{Output: row(4)},
			Init: &Init{Kind: InitNumber, Number: -2}}},
		{"input s : = 3", &InputStmt{Name: "s", Shape: &ShapeDecl{Output: row()}, Init: &Init{Kind: InitNumber, Number: 3}}},
		{"leaf l", &LeafStmt{Name: "l"}},
		{"leaf l : ? | ? -> 3", &LeafStmt{Name: "l",
			Shape: &ShapeDecl{Batch: &RowDecl{Unknown: true}, Input: &RowDecl{Unknown: true}, Output: row(3)}}},
		{"leaf l : ? = 0.5", &LeafStmt{Name: "l", Shape: &ShapeDecl{Output: &RowDecl{Unknown: true}},
			Init: &Init{Kind: InitNumber, Number: 0.5}}},
		{"leaf l = [|1; 2|]", &LeafStmt{Name: "l", Init: &Init{Kind: InitLiteral,
			Literal: &Literal{Kind: LitBatch, Items: []Expr{n("1", 1), n("2", 2)}}}}},
		{"param w", &ParamStmt{Name: "w"}},
		{"param w = 0.5", &ParamStmt{Name: "w", Init: &Init{Kind: InitNumber, Number: 0.5}}},
		{"param b = 0 o=[16]", &ParamStmt{Name: "b", Init: &Init{Kind: InitNumber},
			Fields: []Field{{Kind: 'o', Dims: []int{16}}}}},
		{"param w o=[3] i=[2; 4]; b=[5]", &ParamStmt{Name: "w", Fields: []Field{
			{Kind: 'o', Dims: []int{3}}, {Kind: 'i', Dims: []int{2, 4}}, {Kind: 'b', Dims: []int{5}}}}},
		{"param w; o=[3]; i=[2];", &ParamStmt{Name: "w", Fields: []Field{
			{Kind: 'o', Dims: []int{3}}, {Kind: 'i', Dims: []int{2}}}}},
		{"param w = [1; 2]", &ParamStmt{Name: "w", Init: &Init{Kind: InitLiteral,
			Literal: &Literal{Kind: LitOutput, Items: []Expr{n("1", 1), n("2", 2)}}}}},
		{"let y = x", &LetStmt{Name: "y", Expr: &Ident{Name: "x"}}},
		{"y = x", &LetStmt{Name: "y", Expr: &Ident{Name: "x"}}},
		{"y = -3", &LetStmt{Name: "y", Expr: n("-3", -3)}},
		{"let y =-3", &LetStmt{Name: "y", Expr: n("-3", -3)}},
		{"let y = a = b", &LetStmt{Name: "y", Expr: &Binary{Op: "=", X: &Ident{Name: "a"}, Y: &Ident{Name: "b"}}}},
		{"dim d = 64", &DimStmt{Name: "d", Value: 64}},
		{"dim relu = 2", &DimStmt{Name: "relu", Value: 2}},
	}
	for _, tc := range tests {
		p := mustParse(t, tc.src)
		if len(p.Stmts) != 1 {
			t.Errorf("Parse(%q): %d statements", tc.src, len(p.Stmts))
			continue
		}
		want := &Program{Stmts: []Stmt{tc.want}}
		got := p.String()
		if !sameProgram(p, want) {
			t.Errorf("Parse(%q) = %s, want %s", tc.src, got, want.String())
		}
		checkRoundTrip(t, tc.src, mustParse(t, tc.src))
	}
}

func TestStatementPositions(t *testing.T) {
	src := "input x : 2 | 3 -> 4:rgb = range\n  let y = x + 1\nparam w = 2 o=[3]\ndim d = 4\n{ t } =+ a *. b ~logic:\"@\"\n"
	p := mustParse(t, src)
	in := p.Stmts[0].(*InputStmt)
	if in.Pos != (spec.Pos{Line: 1, Col: 1}) || in.Shape.Pos != (spec.Pos{Line: 1, Col: 11}) || in.Shape.Batch.Pos != (spec.Pos{Line: 1, Col: 11}) ||
		in.Shape.Input.Pos != (spec.Pos{Line: 1, Col: 15}) || in.Shape.Output.Pos != (spec.Pos{Line: 1, Col: 20}) ||
		in.Shape.Output.Dims[0].Pos != (spec.Pos{Line: 1, Col: 20}) || in.Init.Pos != (spec.Pos{Line: 1, Col: 28}) {
		t.Errorf("input positions: %+v %+v", in, in.Shape)
	}
	let := p.Stmts[1].(*LetStmt)
	if let.Pos != (spec.Pos{Line: 2, Col: 3}) || let.Expr.ExprPos() != (spec.Pos{Line: 2, Col: 13}) || let.Expr.(*Binary).X.ExprPos() != (spec.Pos{Line: 2, Col: 11}) {
		t.Errorf("let positions: %v %v", let.Pos, let.Expr.ExprPos())
	}
	pr := p.Stmts[2].(*ParamStmt)
	if pr.Pos != (spec.Pos{Line: 3, Col: 1}) || pr.Init.Pos != (spec.Pos{Line: 3, Col: 11}) || pr.Fields[0].Pos != (spec.Pos{Line: 3, Col: 13}) {
		t.Errorf("param positions: %v %v %v", pr.Pos, pr.Init.Pos, pr.Fields[0].Pos)
	}
	if d := p.Stmts[3].(*DimStmt); d.Pos != (spec.Pos{Line: 4, Col: 1}) {
		t.Errorf("dim position %v", d.Pos)
	}
	as := p.Stmts[4].(*AssignStmt)
	if as.Pos != (spec.Pos{Line: 5, Col: 1}) || as.TargetPos != (spec.Pos{Line: 5, Col: 3}) || as.LogicPos != (spec.Pos{Line: 5, Col: 24}) ||
		as.Args[0].ExprPos() != (spec.Pos{Line: 5, Col: 10}) || as.Args[1].ExprPos() != (spec.Pos{Line: 5, Col: 15}) {
		t.Errorf("assign positions: %v %v %v %v %v", as.Pos, as.TargetPos, as.LogicPos, as.Args[0].ExprPos(), as.Args[1].ExprPos())
	}

	sl := mustExpr(t, "relu -x + [1; 2] @| 0").(*Slice)
	bin := sl.X.(*Binary)
	relu := bin.X.(*Unary)
	neg := relu.X.(*Unary)
	lit := bin.Y.(*Literal)
	for _, c := range []struct {
		what      string
		got, want spec.Pos
	}{
		{"slice", sl.Pos, spec.Pos{Line: 1, Col: 18}}, {"binary", bin.Pos, spec.Pos{Line: 1, Col: 9}}, {"relu", relu.Pos, spec.Pos{Line: 1, Col: 1}},
		{"neg", neg.Pos, spec.Pos{Line: 1, Col: 6}}, {"x", neg.X.ExprPos(), spec.Pos{Line: 1, Col: 7}}, {"literal", lit.Pos, spec.Pos{Line: 1, Col: 11}},
		{"1", lit.Items[0].ExprPos(), spec.Pos{Line: 1, Col: 12}}, {"2", lit.Items[1].ExprPos(), spec.Pos{Line: 1, Col: 15}},
	} {
		if c.got != c.want {
			t.Errorf("%s at %v, want %v", c.what, c.got, c.want)
		}
	}
	pw := mustExpr(t, "where c -2 (dim k) **. 3").(*Pow)
	tern := pw.X.(*Ternary)
	if pw.Pos != (spec.Pos{Line: 1, Col: 20}) || tern.Pos != (spec.Pos{Line: 1, Col: 1}) || tern.A.ExprPos() != (spec.Pos{Line: 1, Col: 7}) ||
		tern.B.ExprPos() != (spec.Pos{Line: 1, Col: 9}) || tern.C.ExprPos() != (spec.Pos{Line: 1, Col: 13}) {
		t.Errorf("pow/ternary positions %v %v %v %v %v", pw.Pos, tern.Pos, tern.A.ExprPos(), tern.B.ExprPos(), tern.C.ExprPos())
	}
	es := mustExpr(t, "({w}\n +* \"s\" b)").(*Einsum)
	if es.Pos != (spec.Pos{Line: 2, Col: 2}) || es.SpecPos != (spec.Pos{Line: 2, Col: 5}) || es.X.ExprPos() != (spec.Pos{Line: 1, Col: 2}) {
		t.Errorf("einsum positions %v %v %v", es.Pos, es.SpecPos, es.X.ExprPos())
	}
}

func TestAssignments(t *testing.T) {
	accums := []string{"=:", "=+", "=:+", "=-", "=:-", "=*", "=:*", "=/", "=:/", "=@^", "=:@^", "=@-", "=:@-"}
	for _, acc := range accums {
		for _, sp := range []string{" ", ""} {
			src := "t " + acc + sp + "a + b"
			p := mustParse(t, src)
			as, ok := p.Stmts[0].(*AssignStmt)
			if !ok {
				t.Errorf("Parse(%q): %T, want *AssignStmt", src, p.Stmts[0])
				continue
			}
			if as.Accum != acc || as.Target != "t" || as.Inline || as.Op != "+" || len(as.Args) != 2 {
				t.Errorf("Parse(%q) = %+v", src, as)
			}
			checkRoundTrip(t, src, p)
		}
	}
	id := func(name string) *Ident { return &Ident{Name: name} }
	tests := []struct {
		src  string
		want *AssignStmt
	}{
		{"t =: x", &AssignStmt{Target: "t", Accum: "=:", Args: []Expr{id("x")}}},
		{"{ t } =: x", &AssignStmt{Target: "t", Inline: true, Accum: "=:", Args: []Expr{id("x")}}},
		{"{t} =+ x", &AssignStmt{Target: "t", Inline: true, Accum: "=+", Args: []Expr{id("x")}}},
		{"t =: relu x", &AssignStmt{Target: "t", Accum: "=:", Op: "relu", Args: []Expr{id("x")}}},
		{"t =: id x", &AssignStmt{Target: "t", Accum: "=:", Op: "id", Args: []Expr{id("x")}}},
		{"t =: relu x + y", &AssignStmt{Target: "t", Accum: "=:", Op: "relu",
			Args: []Expr{&Binary{Op: "+", X: id("x"), Y: id("y")}}}},
		{"t =: (relu x) + y", &AssignStmt{Target: "t", Accum: "=:", Op: "+",
			Args: []Expr{&Unary{Func: "relu", X: id("x")}, id("y")}}},
		{"t =: (relu x)", &AssignStmt{Target: "t", Accum: "=:", Args: []Expr{&Unary{Func: "relu", X: id("x")}}}},
		{"t =+ a *. b", &AssignStmt{Target: "t", Accum: "=+", Op: "*.", Args: []Expr{id("a"), id("b")}}},
		{"t =:+ a * b ~logic:\"@\"", &AssignStmt{Target: "t", Accum: "=:+", Op: "*", Args: []Expr{id("a"), id("b")}, Logic: "@"}},
		{"t =: a / b", &AssignStmt{Target: "t", Accum: "=:", Op: "/", Args: []Expr{id("a"), id("b")}}},
		{"t =: a /. b", &AssignStmt{Target: "t", Accum: "=:", Op: "/.", Args: []Expr{id("a"), id("b")}}},
		{"t =: a - b", &AssignStmt{Target: "t", Accum: "=:", Op: "-", Args: []Expr{id("a"), id("b")}}},
		{"t =: a < b", &AssignStmt{Target: "t", Accum: "=:", Op: "<", Args: []Expr{id("a"), id("b")}}},
		{"t =: a = b", &AssignStmt{Target: "t", Accum: "=:", Op: "=", Args: []Expr{id("a"), id("b")}}},
		{"t =: a <> b", &AssignStmt{Target: "t", Accum: "=:", Op: "<>", Args: []Expr{id("a"), id("b")}}},
		{"t =: a **. 2", &AssignStmt{Target: "t", Accum: "=:", Op: "**.", Args: []Expr{id("a"), &Number{Value: 2, Text: "2"}}}},
		{"t =: a **. -0.5", &AssignStmt{Target: "t", Accum: "=:", Op: "**.", Args: []Expr{id("a"), &Number{Value: -0.5, Text: "-0.5"}}}},
		{"t =: a + b * c", &AssignStmt{Target: "t", Accum: "=:", Op: "+",
			Args: []Expr{id("a"), &Binary{Op: "*", X: id("b"), Y: id("c")}}}},
		{"t =: x ~logic:\"T\"", &AssignStmt{Target: "t", Accum: "=:", Args: []Expr{id("x")}, Logic: "T"}},
		{"t =: x ~logic:\".\"", &AssignStmt{Target: "t", Accum: "=:", Args: []Expr{id("x")}, Logic: "."}},
		{"t =+ a * b ~logic: \"ij;jk=>ik\"", &AssignStmt{Target: "t", Accum: "=+", Op: "*", Args: []Expr{id("a"), id("b")}, Logic: "ij;jk=>ik"}},
		{"t =: a +* \"i;i=>i\" b", &AssignStmt{Target: "t", Accum: "=:",
			Args: []Expr{&Einsum{Op: "+*", Spec: "i;i=>i", X: id("a"), Y: id("b")}}}},
		{"t =: where c a b", &AssignStmt{Target: "t", Accum: "=:",
			Args: []Expr{&Ternary{Op: "where", A: id("c"), B: id("a"), C: id("b")}}}},
		{"t =: -3", &AssignStmt{Target: "t", Accum: "=:", Args: []Expr{&Number{Value: -3, Text: "-3"}}}},
		{"t =-3", &AssignStmt{Target: "t", Accum: "=-", Args: []Expr{&Number{Value: 3, Text: "3"}}}},
		{"t =:-x", &AssignStmt{Target: "t", Accum: "=:-", Args: []Expr{id("x")}}},
	}
	for _, tc := range tests {
		p := mustParse(t, tc.src)
		got := p.String()
		if !sameProgram(p, &Program{Stmts: []Stmt{tc.want}}) {
			t.Errorf("Parse(%q) = %s %+v, want %+v", tc.src, got, p.Stmts[0], tc.want)
		}
		checkRoundTrip(t, tc.src, mustParse(t, tc.src))
	}
	as := mustParse(t, "t =: x ~logic:\"T\"").Stmts[0].(*AssignStmt)
	if as.LogicPos != (spec.Pos{Line: 1, Col: 15}) {
		t.Errorf("LogicPos = %v, want 1:15", as.LogicPos)
	}
	if as := mustParse(t, "t =: x").Stmts[0].(*AssignStmt); as.Logic != "" || as.LogicPos != (spec.Pos{}) {
		t.Errorf("absent ~logic: got %q at %v", as.Logic, as.LogicPos)
	}
	pw := mustParse(t, "t =: a **. 2").Stmts[0].(*AssignStmt)
	if pw.Args[1].ExprPos() != (spec.Pos{Line: 1, Col: 12}) {
		t.Errorf("exponent position %v, want 1:12", pw.Args[1].ExprPos())
	}
}

func TestLinesCommentsContinuation(t *testing.T) {
	src := `# a comment line

input x : 3 = range   # trailing comment
let y = relu ({w} * x
              + {b = 0.; o=[16]})   # continues inside the parens
let z = [1;
  2;  # a comment inside a literal
  3]
let s = x ++ "a#b => a"
	let q = {w2;
	  o=[4]} * y
`
	p := mustParse(t, src)
	want := "input x : 3 = range\n" +
		"let y = relu ({w} * x + {b = 0.; o=[16]})\n" +
		"let z = [1; 2; 3]\n" +
		"let s = x ++ \"a#b => a\"\n" +
		"let q = {w2; o=[4]} * y\n"
	if got := p.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if p.Stmts[2].StmtPos() != (spec.Pos{Line: 6, Col: 1}) || p.Stmts[4].StmtPos() != (spec.Pos{Line: 10, Col: 2}) {
		t.Errorf("positions %v %v", p.Stmts[2].StmtPos(), p.Stmts[4].StmtPos())
	}
	// Windows line endings and an empty program.
	p = mustParse(t, "let a = 1\r\nlet b = a\r\n")
	if len(p.Stmts) != 2 {
		t.Errorf("CRLF: %d statements", len(p.Stmts))
	}
	for _, empty := range []string{"", "\n\n", "# only a comment", "  \t\n# c\n"} {
		if p := mustParse(t, empty); len(p.Stmts) != 0 {
			t.Errorf("Parse(%q): %d statements", empty, len(p.Stmts))
		}
	}
	// A newline outside brackets ends the statement.
	if _, err := Parse("let y = a +\n b"); err == nil {
		t.Errorf("a statement continued outside brackets")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		src, pos, msg string
	}{
		{"input x = 1", "1:9", "expected ':' after input name"},
		{"let h = rleu x", "1:9", `unknown function "rleu"`},
		{"let h = rleu (x)", "1:9", `with no space before the bracket`},
		{"layer f(x) = x\nlet y = f (x)", "2:9", `unknown function "f"`},
		{"entry p:\n  input x : 2\n", "3:1", `has no return statement`},
		{"layer f[a, a](x) = x", "1:12", `declared twice`},
		{"layer f(x):\n  input y : 2\n  return y", "2:3", `belong to entry points`},
		{"let y = f[1](x; y)", "1:15", `expected ',' or ')' in the application`},
		{"let y = f[1 2](x)", "1:13", `expected ',' or ']' in the configuration`},
		{"let s = x ++ \"abc", "1:14", "unterminated string"},
		{"let s = x ++ \"abc\n\"", "1:14", "unterminated string"},
		{"let y = x)", "1:10", `unexpected ")"`},
		{"let y = )", "1:9", `unexpected ")"`},
		{"let y = (x", "1:11", "expected ',' or ')'"},
		{"let y = (a,\n  b", "2:4", "expected ',' or ')'"},
		{"input x : 3\nlet y = 2 3", "2:11", "unexpected number 3"},
		{"let relu = 3", "1:5", `"relu" is a reserved word`},
		{"relu = 3", "1:1", `"relu" is a reserved word`},
		{"input where : 3", "1:7", `"where" is a reserved word`},
		{"let y = x +* y", "1:14", `expected a spec string after "+*"`},
		{"let y = x ++", "1:13", `expected a spec string after "++"`},
		{"let y = [1, 2]", "1:11", "expected ';' or ']'"},
		{"let y = [|1; 2]", "1:15", "expected ';' or '|]'"},
		{"let y = x ** 2", "1:11", `unknown operator "**"`},
		{"let y = x **. 2 **. 3", "1:17", "exponent of '**.' must be a single number"},
		{"let y = x **. a", "1:15", "expected a number after '**.'"},
		{"let y = relu exp x", "1:14", `"exp" must be parenthesized`},
		{"let y = relu", "1:13", `expected an argument after "relu"`},
		{"let y = where a b", "1:18", `expected an argument after "where"`},
		{"param w o=[16] q=[3]", "1:16", `unknown field "q"`},
		{"param w o=16", "1:11", "expected '['"},
		{"param w o=[1.5]", "1:12", "expected an integer"},
		{"dim d = 3.5", "1:9", "expected an integer"},
		{"dim d = -1", "1:9", "expected an integer"},
		{"dim d 3", "1:7", "expected '=' after dim name"},
		{"y =: x ~logic:3", "1:15", "expected a string after ~logic:"},
		{"y =: x ~foo:\"s\"", "1:8", `only "~logic:"`},
		{"{ y; o=[3] } =: x", "1:4", "expected '}'"},
		{"{ y } = x", "1:7", "expected an assignment operator"},
		{"x + y", "1:3", "expected '=' or an assignment operator"},
		{"x", "1:2", "expected '=' or an assignment operator"},
		{"let y = 1e999", "1:9", "out of range"},
		{"input x : 99999999999999999999", "1:11", "out of range"},
		{"let y = x @| 99999999999999999999", "1:14", "out of range"},
		{"let y = x @| 0 + 1", "1:16", "the index of '@|' must be a single integer"},
		{"let y = x @| a", "1:14", "expected an integer"},
		{"let y = a\xff", "1:10", "invalid UTF-8"},
		{"let y = a $ b", "1:11", "unexpected character"},
		{"let y = a ++^ \"s\"", "1:11", `"++^" must follow a parenthesized list`},
		{"let y = () ++^ \"s\"", "1:12", "at least one operand"},
		{"let y = range", "1:9", `"range" can only be used as an initializer`},
		{"let y = let", "1:9", `unexpected keyword "let"`},
		{"leaf x : 2 -> 3 | 4", "1:17", `unexpected "|" in shape`},
		{"leaf x : 2 -> 3 -> 4", "1:17", `unexpected "->" in shape`},
		{"leaf x : 2, ", "1:13", "expected an integer dimension size"},
		{"input x : 3:4", "1:13", "expected a basis name"},
		{"input x : 3 = [a]", "1:16", "may contain only numbers"},
		{"input x : 3 = x", "1:15", "expected an initializer"},
		{"input x : 3 = (x)", "1:16", "an initializer must be"},
		{"  let y = x # comment\nlet z = )", "2:9", `unexpected ")"`},
		{"let y = 3x", "1:9", `invalid number "3x"`},
		{"let y = 2e", "1:9", `invalid number "2e"`},
		{"let y = {w = 1; o=[2}", "1:21", "expected ';' or ']'"},
		{"let y = {w o=[2]}", "1:12", "expected ';' or '}'"},
		{"let y = {relu}", "1:10", `"relu" is a reserved word`},
		{"let\ty = )", "1:9", `unexpected ")"`},
		{"let y = x ++ \"s\" [\"i\" 3]", "1:23", "expected ';' or ']' in the capture list"},
		{"let y = x @ z", "1:11", `unknown operator starting with "@"`},
		{"let y = dim 3", "1:13", "expected a label name after dim"},
		{"let y = [1; 2", "1:14", "expected ';' or ']'"},
		{"let y = {w", "1:11", "expected ';' or '}'"},
		{"let y = x +", "1:12", "unexpected end of input (expected an expression)"},
		{"let y = x +\nlet z = 1", "1:12", "unexpected end of line (expected an expression)"},
		{") = 3", "1:1", `unexpected ")" (expected a statement)`},
		{"let x = 1 let y = 2", "1:11", `unexpected keyword "let"`},
		{"let y = x \"s\"", "1:11", `unexpected string "s"`},
		{"input x : 3 = range\nlet y = x\nlet z = y +* \"i=>i\" ", "3:21", "unexpected end of input (expected an expression)"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.src)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %s: %s", tc.src, tc.pos, tc.msg)
			continue
		}
		pe := checkErrorPos(t, tc.src, err)
		if pe.Pos.String() != tc.pos || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("Parse(%q) error = %v, want %s: ...%s...", tc.src, err, tc.pos, tc.msg)
		}
		if got := err.Error(); got != pe.Pos.String()+": "+pe.Message() {
			t.Errorf("Error() = %q", got)
		}
	}
	// ParseExpr rejects trailing tokens and reports positions likewise.
	for _, tc := range []struct{ src, pos, msg string }{
		{"a + b c", "1:5", `unknown function "b"`},
		{"a b", "1:1", `unknown function "a"`},
		{"(a + b", "1:7", "expected ',' or ')'"},
		{"a\nb", "2:1", `unexpected name "b"`},
		{"", "1:1", "unexpected end of input"},
	} {
		_, err := ParseExpr(tc.src)
		if err == nil {
			t.Errorf("ParseExpr(%q): no error", tc.src)
			continue
		}
		pe := checkErrorPos(t, tc.src, err)
		if pe.Pos.String() != tc.pos || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("ParseExpr(%q) error = %v, want %s: ...%s...", tc.src, err, tc.pos, tc.msg)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	for _, tc := range []struct{ src, msg string }{
		{"let y = " + strings.Repeat("(", 100000) + "x" + strings.Repeat(")", 100000), "brackets nested too deeply"},
		{"let y = " + strings.Repeat("[", 100000), "brackets nested too deeply"},
		{"let y = " + strings.Repeat("-", 100000) + "x", "expression nested too deeply"},
		{"let y = x" + strings.Repeat(" + x", 20000), "expression nested too deeply"},
		{"let y = x" + strings.Repeat(` @^+ "s" x`, 20000), "expression nested too deeply"},
		{"let y = " + strings.Repeat("relu (", 600) + "x" + strings.Repeat(")", 600), ""},
		{"let y = " + strings.Repeat("relu (", 1001) + "x" + strings.Repeat(")", 1001), "brackets nested too deeply"},
	} {
		p, err := Parse(tc.src)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("Parse(%.40q...): %v", tc.src, err)
			} else {
				checkRoundTrip(t, tc.src[:40], p)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%.40q...) error = %v, want %q", tc.src, err, tc.msg)
		} else {
			checkErrorPos(t, tc.src, err)
		}
	}
	// Long chains within the limits parse iteratively and round-trip.
	for _, src := range []string{
		"let y = x" + strings.Repeat(" + x", 4000),
		"let y = x" + strings.Repeat(` @^+ "s" x`, 4000),
		"let y = " + strings.Repeat("-", 4000) + "x",
		"let y = relu " + strings.Repeat("-", 4000) + "x",
		"let y = " + strings.Repeat("(", 1000) + "x" + strings.Repeat(")", 1000),
	} {
		checkRoundTrip(t, src[:20], mustParse(t, src))
	}
}

func TestByteOrderMark(t *testing.T) {
	p := mustParse(t, "\uFEFFlet y = x\n")
	if len(p.Stmts) != 1 || p.Stmts[0].StmtPos() != (spec.Pos{Line: 1, Col: 4}) {
		t.Errorf("BOM: %v", p.String())
	}
	if _, err := Parse("let y = x\uFEFF"); err == nil {
		t.Errorf("a BOM after the start was accepted")
	}
}

func TestModelSyntaxRoundTrip(t *testing.T) {
	src := `layer dense[o, act="relu"](x) = relu ({w} * x + {b = 0.; o=[o]})
layer attn[heads, dk=16](x, mask):
    let q = {w_q} * x
    dim h = heads
    let s = q +* "... s | h d; ... t | h d => ... s | t -> h" ["h"; "d"] q
    return where mask s (-1e9)
let net = dense[16]
let big = dense[o=32, act="id"]
loss train:
    input x : 32 | 2
    input y : 32 | 1
    let s = linear[1](net(big(x)))
    return hinge(s, y)
entry predict:
    input x : 1 | 2
    return net(x)
sgd lr=0.1 momentum=0.9 nesterov weight_decay=1e-4
`
	p := mustParse(t, src)
	if len(p.Stmts) != 7 {
		t.Fatalf("%d statements, want 7:\n%s", len(p.Stmts), p)
	}
	l := p.Stmts[1].(*LayerStmt)
	if l.Name != "attn" || len(l.Config) != 2 || l.Config[1].Default == nil || len(l.Args) != 2 || len(l.Body) != 3 || !l.Block {
		t.Errorf("layer parsed as %+v", l)
	}
	if d := l.Body[1].(*DimStmt); d.ValueName != "heads" {
		t.Errorf("dim parsed as %+v", d)
	}
	if in, ok := p.Stmts[3].(*LetStmt).Expr.(*Instance); !ok || in.Layer != "dense" || in.Args[0].Name != "o" || in.Args[1].Value.Str != "id" {
		t.Errorf("instance parsed as %#v", p.Stmts[3].(*LetStmt).Expr)
	}
	e := p.Stmts[4].(*EntryStmt)
	if !e.Loss || len(e.Body) != 3 {
		t.Errorf("loss parsed as %+v", e)
	}
	c := e.Body[2].(*LetStmt).Expr.(*Call)
	if in, ok := c.Callee.(*Instance); !ok || in.Layer != "linear" {
		t.Errorf("call parsed as %#v", c)
	}
	o := p.Stmts[6].(*OptimStmt)
	if len(o.Settings) != 4 || o.Settings[2].Value != nil || o.Settings[3].Value.Value != 1e-4 {
		t.Errorf("sgd parsed as %+v", o)
	}
	text := p.String()
	q := mustParse(t, text)
	if again := q.String(); again != text {
		t.Errorf("round trip differs:\n%s\n---\n%s", text, again)
	}
	// A setting's value may be a word (schedule=cosine).
	w := mustParse(t, "adamw lr=6e-4 schedule=cosine warmup=100 steps=5000\n")
	if o := w.Stmts[0].(*OptimStmt); len(o.Settings) != 4 || o.Settings[1].Word != "cosine" || o.Settings[1].Value != nil || o.Settings[1].WordPos.Col != 24 {
		t.Errorf("schedule=cosine parsed as %+v", o.Settings)
	}
	if got := w.String(); got != "adamw lr=6e-4 schedule=cosine warmup=100 steps=5000\n" && got != "adamw lr=0.0006 schedule=cosine warmup=100 steps=5000\n" {
		t.Errorf("prints as %q", got)
	}
	// loss and entry stay usable as tensor names.
	mustParse(t, "input loss : 1 = 0\nlet entry = loss + 1\nlet sgd = entry\nlet adam = sgd\nlet adamw = adam")
	for _, kind := range []string{"adam", "adamw"} {
		q := mustParse(t, kind+" lr=1e-3 beta1=0.8 clip_norm=1\n")
		o, ok := q.Stmts[0].(*OptimStmt)
		if !ok || o.Kind != kind || len(o.Settings) != 3 || o.Settings[1].Name != "beta1" || o.Settings[1].Value.Value != 0.8 {
			t.Errorf("%s parsed as %+v", kind, q.Stmts[0])
		}
		if got := q.String(); got != kind+" lr=1e-3 beta1=0.8 clip_norm=1\n" && got != kind+" lr=0.001 beta1=0.8 clip_norm=1\n" {
			t.Errorf("%s prints as %q", kind, got)
		}
	}
}

func TestInspect(t *testing.T) {
	e, err := ParseExpr(`relu ({w = [1; 2]} * f[2](x, (a, b) ++^ "p; q => p^q") + where c d (e @| 0) **. 2)`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	Inspect(e, func(x Expr) bool {
		switch x := x.(type) {
		case *Ident:
			names = append(names, x.Name)
		case *InlineParam:
			names = append(names, "{"+x.Name+"}")
		case *Instance:
			names = append(names, x.Layer+"[]")
		}
		return true
	})
	if got := strings.Join(names, " "); got != "{w} f[] x a b c d e" {
		t.Errorf("visited %s", got)
	}
	n := 0
	Inspect(e, func(Expr) bool { n++; return false })
	if n != 1 {
		t.Errorf("returning false still descended: %d calls", n)
	}
}

// TestRunTimeRowsDim checks `<=N` in a shape: a dim with Max set, its
// position at the '<', printed back as written; `< =` (split) and `<=`
// without a size are errors.
func TestRunTimeRowsDim(t *testing.T) {
	p, err := Parse("input x : <=8 | 2\ninput y : <=N, 3 | 2\n")
	if err != nil {
		t.Fatal(err)
	}
	x := p.Stmts[0].(*InputStmt).Shape.Batch.Dims[0]
	if !x.Max || x.Size != 8 || x.Pos != (spec.Pos{Line: 1, Col: 11}) {
		t.Errorf("x's rows dim %+v, want Max, size 8 at 1:11", x)
	}
	y := p.Stmts[1].(*InputStmt).Shape.Batch.Dims
	if !y[0].Max || y[0].Name != "N" || y[1].Max || y[1].Size != 3 {
		t.Errorf("y's batch dims %+v, want <=N, 3", y)
	}
	if got, want := p.String(), "input x : <=8 | 2\ninput y : <=N, 3 | 2\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	for _, src := range []string{"input x : < =8 | 2", "input x : <= | 2", "input x : <=8:rows | 2"} {
		if _, err := Parse(src); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
}
