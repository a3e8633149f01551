package program

import (
	"strings"
	"testing"
)

// fuzzSeeds are hand-written seeds covering every construct and several
// error paths; the committed corpus in testdata/fuzz/FuzzParse adds the
// shared case programs.
var fuzzSeeds = []string{
	"input x : 2 | 3 -> 4 = range",
	"input mask : 8 | 8 -> = 1",
	"input t1 : 4:batch = 1\ninput t2 : 4 = -1",
	"input a : 3 -> 2 = [(1, 2, 3); (4, 5, 6)]",
	"leaf l : ? | ? -> 3 = [|[1; 2]; [3; 4]|]",
	"param w = 0.5 o=[16] i=[3; 2]; b=[1]",
	"dim d = 64",
	"let h = relu ({w} * x + {b = 0.; o=[16]})",
	"y = x **. 2 *. y /. 3 - -4",
	"let c1 = {a = [-4]} + {b = [2]}",
	`let s = (q +* " ... s | h d; ... t | h d => ... s | t -> h" ["h"; "d"] k) /. sqrt (dim d)`,
	"let m = where mask scores (0 - 1000000000)",
	`let mx = masked @^^ " ... | t -> ... => ... | 0 -> ..."`,
	`let p = img @^+ "oh=+wh, ow=+ww; wh, ww => oh, ow" ["wh"; "ww"] (0.0 + 0.0)`,
	`let c = ((a, b, c) ++^ "ii; mm; kk => ii^mm^kk") + f`,
	`let o = a +++ "i;j=>ij" b @| 0`,
	"let f = fma a x b < c = d <> e",
	"t =:+ a * b ~logic:\"@\"",
	"{ t } =@^ relu x",
	"t =: x ~logic:\"ij;jk=>ik\"",
	"t =-3\nt =:- -x",
	"let y = [x1; x2]\nlet z = (x1, x2,)\nlet q = [|(1,); ()|]",
	"let y = relu (\n  x # comment\n  + 1)",
	"# comment only\n\n",
	"let y = x ++ \"a\\\"b\"",
	"let h = rleu x",
	"input x = 1",
	"let s = x ++ \"abc",
	"let y = x)",
	"let y = 1e999 + 99999999999999999999",
	"let y = a\xff",
	"let y = x **. 2 **. 3",
	"let y = - - -x **. -2",
	"let y = neg 3 + neg (-3)",
	"leaf x : 2 -> 3 | 4",
}

// FuzzParse checks that Parse never panics, that errors are *Error values
// positioned inside the input, and that printed programs parse back to the
// same tree.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse(src)
		if err != nil {
			if p != nil {
				t.Fatalf("Parse returned both a program and an error")
			}
			checkErrorPos(t, src, err)
		} else {
			text := p.String()
			q, err := Parse(text)
			if err != nil {
				t.Fatalf("printed program does not parse: %v\nsource: %q\nprinted: %q", err, src, text)
			}
			if again := q.String(); again != text {
				t.Fatalf("printing is not stable:\n%q\n%q", text, again)
			}
			if !sameProgram(p, q) {
				t.Fatalf("round trip changed the program\nsource: %q\nprinted: %q", src, text)
			}
		}
		// A single expression, printed as a let, round-trips too.
		e, err := ParseExpr(src)
		if err != nil {
			checkErrorPos(t, src, err)
			return
		}
		_ = Format(e)
		prog := &Program{Stmts: []Stmt{&LetStmt{Name: "x", Expr: e}}}
		text := prog.String()
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("printed expression does not parse: %v\nsource: %q\nprinted: %q", err, src, text)
		}
		if !sameProgram(prog, q) {
			t.Fatalf("expression round trip changed the tree\nsource: %q\nprinted: %q", src, text)
		}
		if strings.Count(text, "\n") != 1 {
			t.Fatalf("an expression printed over several lines: %q", text)
		}
	})
}
