package program

import (
	"testing"
)

func TestMinimalPrinting(t *testing.T) {
	tests := []struct{ src, want string }{
		{"(a + b) * c", "(a + b) * c"},
		{"a + (b * c)", "a + b * c"},
		{"a - (b - c)", "a - (b - c)"},
		{"(a - b) - c", "a - b - c"},
		{"a *. (b /. c)", "a *. (b /. c)"},
		{"(x **. 2) **. 3", "(x **. 2) **. 3"},
		{`a @^+ "s" (b @^+ "t" c)`, `a @^+ "s" b @^+ "t" c`},
		{`(a @^+ "s" b) @^+ "t" c`, `(a @^+ "s" b) @^+ "t" c`},
		{`(a @^+ "s" b) @^^ "t"`, `(a @^+ "s" b) @^^ "t"`},
		{`(a @^^ "s") @^+ "t" b`, `a @^^ "s" @^+ "t" b`},
		{`(a @| 1) @| 0`, `a @| 1 @| 0`},
		{`(a + b) @^^ "s"`, `a + b @^^ "s"`},
		{`a < (b @^+ "s" c)`, `a < b @^+ "s" c`},
		{"(x @| 0) + 1", "(x @| 0) + 1"},
		{"neg 3", "neg 3"},
		{"neg (-3)", "- -3"},
		{"-x", "-x"},
		{"- -x", "- -x"},
		{"neg (neg x)", "- -x"},
		{"relu (-x)", "relu -x"},
		{"relu (- -x)", "relu - -x"},
		{"relu (- -3)", "relu - -3"},
		{"(-x) **. 2", "-x **. 2"},
		{"neg (x **. 2)", "-(x **. 2)"},
		{"-(relu x)", "-relu x"},
		{"relu (neg 3)", "relu (neg 3)"},
		{"(relu x) + y", "relu x + y"},
		{"relu (relu x)", "relu (relu x)"},
		{"where (a < b) (-1) (c)", "where (a < b) -1 c"},
		{"where (where a b c) b c", "where (where a b c) b c"},
		{"[a + b; (c, d)]", "[a + b; (c, d)]"},
		{"[(c)]", "[c]"},
		{"[(c,)]", "[(c,)]"},
		{`(a + b, c) ++^ "s"`, `(a + b, c) ++^ "s"`},
		{`x * ((a, b) ++^ "s")`, `x * (a, b) ++^ "s"`},
		{`x +* "s" (y * z)`, `x +* "s" y * z`},
		{`x +* "s" (y + z)`, `x +* "s" (y + z)`},
		{`x +* "s" ["k"] [1; 2]`, `x +* "s" ["k"] [1; 2]`},
		{"(a = b) = c", "a = b = c"},
		{"a = (b = c)", "a = (b = c)"},
		{"{w = (a + b); o=[2]}", "{w = a + b; o=[2]}"},
		{"sqrt (dim d)", "sqrt dim d"},
		{"x - (-3)", "x - -3"},
	}
	for _, tc := range tests {
		e := mustExpr(t, tc.src)
		p := &Program{Stmts: []Stmt{&LetStmt{Name: "y", Expr: e}}}
		want := "let y = " + tc.want + "\n"
		if got := p.String(); got != want {
			t.Errorf("%s printed as %q, want %q", tc.src, got, want)
		}
		checkRoundTrip(t, tc.src, p)
	}
}

func TestAssignmentPrinting(t *testing.T) {
	tests := []struct{ src, want string }{
		{"t =: (relu x) + y", "t =: (relu x) + y"},
		{"t =: relu (x + y)", "t =: relu x + y"},
		{"t =: relu x + y", "t =: relu x + y"},
		{`t =: (relu x) ++ "s"`, `t =: (relu x ++ "s")`},
		{"t =: (relu x)", "t =: (relu x)"},
		{"t =: (relu x) **. 2", "t =: (relu x) **. 2"},
		{"t =: -x **. 2", "t =: -x **. 2"},
		{"t =+ (a + b) * c ~logic:\"@\"", "t =+ (a + b) * c ~logic:\"@\""},
		{"{ t } =:+ a +* \"i;i=>i\" b", "{ t } =:+ a +* \"i;i=>i\" b"},
		{"t =: x ~logic:\"a\\\"b\"", "t =: x ~logic:\"a\\\"b\""},
		{"t =- 3", "t =- 3"},
		{"t =: -3", "t =: -3"},
		{"t =: a = b", "t =: a = b"},
	}
	for _, tc := range tests {
		p := mustParse(t, tc.src)
		if got := p.String(); got != tc.want+"\n" {
			t.Errorf("%s printed as %q, want %q", tc.src, got, tc.want)
		}
		checkRoundTrip(t, tc.src, p)
	}
}

func TestProgramString(t *testing.T) {
	src := `input x : 2 | 3 -> 4:rgb = range
input mask : 8 | 8 -> = 1
input e : = -2.5
leaf l : ? | ? -> 3 = [|[1; 2]; [3; 4]|]
leaf m
param w = 0.5 o=[16] i=[3; 2]
param v
dim d = 64
y = x
let z = {w2 = [(-3, 1)]; b=[2]} * x
t =: z *. z ~logic:"."
`
	want := `input x : 2 | 3 -> 4:rgb = range
input mask : 8 | 8 -> = 1
input e : = -2.5
leaf l : ? | ? -> 3 = [|[1; 2]; [3; 4]|]
leaf m
param w = 0.5 o=[16] i=[3; 2]
param v
dim d = 64
let y = x
let z = {w2 = [(-3, 1)]; b=[2]} * x
t =: z *. z ~logic:"."
`
	p := mustParse(t, src)
	if got := p.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	checkRoundTrip(t, "program", p)
	if got := (&Program{}).String(); got != "" {
		t.Errorf("empty program printed as %q", got)
	}
}
