package inference_test

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

// shapesOf infers src and returns name -> shape string for named tensors.
func shapesOf(t *testing.T, src string) map[string]string {
	t.Helper()
	g, err := inference.InferSource(src)
	if err != nil {
		t.Fatalf("inference failed: %v\nprogram:\n%s", err, src)
	}
	out := map[string]string{}
	for _, n := range g.Named {
		out[n.Name] = g.Tensors[n.Tensor].Shape.String()
	}
	return out
}

type shapeCase struct {
	name string
	src  string
	want map[string]string // name -> shape in declaration syntax
}

func runShapeCases(t *testing.T, cases []shapeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := shapesOf(t, strings.TrimSpace(tc.src)+"\n")
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("%s: got %q, want %q (all: %v)", name, got[name], want, got)
				}
			}
		})
	}
}

// TestSeedNarrative covers the examples with a stated shape outcome in the
// seed documents (Broadcasting Is an Order; Convolution Is a Contraction;
// Split and Concatenation) and OCANNL's MLP.
func TestSeedNarrative(t *testing.T) {
	runShapeCases(t, []shapeCase{
		{"matmul", `
input a : 3 -> 2 = range
input v : 3 = range
let c = a * v`, map[string]string{"c": "2"}},
		{"matmul einsum", `
input a : 2,3 = range
input b : 3,4 = range
let c = a +* "ij;jk=>ik" b`, map[string]string{"c": "2,4"}},
		{"scalar broadcast", `
input m : 2 | 3 -> 4 = range
let y = m *. 0.5
let z = 2 + m`, map[string]string{"y": "2 | 3 -> 4", "z": "2 | 3 -> 4"}},
		{"ones-vector sum: the leaf closes upward", `
input x : 3 -> 4 = range
leaf ones
let s = x * ones`, map[string]string{"ones": "3", "s": "4"}},
		{"rank broadening in the middle", `
input big : 3,5,4 = range
leaf small
let y = big + small`, map[string]string{"small": "3,5,4", "y": "3,5,4"}},
		{"cap collapse: two incompatible uses broadcast", `
leaf a
input p : 3 = 1
input q : 5 = 1
let s1 = p + a
let s2 = q + a`, map[string]string{"a": "1", "s1": "3", "s2": "5"}},
		{"MLP: w gets 2 -> 16 from use", `
input x : 32 | 2 = range
let h = relu ({w} * x + {b = 0.; o=[16]})`, map[string]string{"w": "2 -> 16", "b": "16", "h": "32 | 16"}},
		{"two-layer MLP with output from the loss", `
input x : 8 | 2 = range
input target : 8 | 1 = 0
let h = relu ({w1} * x + {b1 = 0; o=[16]})
let out = {w2} * h
let loss = (out - target) ++ "...|... => 0"`, map[string]string{"w1": "2 -> 16", "w2": "16 -> 1", "loss": "1"}},
		{"valid convolution", `
input x : 10 = range
input k : 3 = range
let y = x +* "o<+k; k => o" k`, map[string]string{"y": "8"}},
		{"padded convolution", `
input x : 10 = range
input k : 3 = range
let y = x +* "o=+k; k => o" k`, map[string]string{"y": "10"}},
		{"strided padded convolution", `
input x : 10 = range
input k : 3 = range
let y = x +* "2*o=+k; k => o" k`, map[string]string{"y": "5"}},
		{"dilated valid convolution", `
input x : 10 = range
input k : 3 = range
let y = x +* "o<+2*k; k => o" k`, map[string]string{"y": "6"}},
		{"strided dilated valid convolution", `
input x : 13 = range
input k : 3 = range
let y = x +* "2*o<+3*k; k => o" k`, map[string]string{"y": "4"}},
		{"kernel inferred from sizes", `
input x : 10 = range
input out : 8 = 0
leaf k
let y = (x +* "o<+k; k => o" k) + out`, map[string]string{"k": "3", "y": "8"}},
		{"conv2d with captured kernel", `
input img : 9,9,1 = range
let output = (img +* "... | 2*oh<+kh, 2*ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {kernel}) + {bias = 0}
dim kh = 3
dim kw = 3
dim oc = 4`, map[string]string{"output": "4,4,4", "kernel": "3,3,1 -> 4"}},
		{"strided access: interleave as two strided writes", `
input t1 : 4 = range
input t2 : 4 = range
{t} =:+ id t1 ~logic:"i => 2*i"
t =+ id t2 ~logic:"i => 2*i + 1"`, map[string]string{"t": "8"}},
		{"deinterleave", `
input t : 8 = range
let ev = t ++ "2*i => i"`, map[string]string{"ev": "4"}},
		{"fixed index: a trailing unit axis", `
input x : 4 = range
let c = x ++ "i=>i0"`, map[string]string{"c": "4,1"}},
		{"fixed index 1 inserts a middle axis of size 2", `
input x : 3,4 = range
let c = x ++ "ij=>i1j"`, map[string]string{"c": "3,2,4"}},
		{"batch slice", `
input d : 5,2 | 3 = range
let s = d @| 4`, map[string]string{"s": "2 | 3"}},
		{"stacking literal of tensors", `
input a : 3 = range
input b : 3 = range
let s = [a; b]`, map[string]string{"s": "2,3"}},
	})
}

// TestConcatenationTable covers every row of the concatenation table of
// "Split and Concatenation Are Two Directions of a Coproduct".
func TestConcatenationTable(t *testing.T) {
	runShapeCases(t, []shapeCase{
		{"a;b=>a^b concatenate", `
input x : 2 = range
input y : 3 = range
let c = (x, y) ++^ "a; b => a^b"`, map[string]string{"c": "5"}},
		{"a^b=>a prefix", `
input src : 5 = range
input x2 : 2 = 1
{p} =:+ id src ~logic:"a^b => a"
let q = p + x2`, map[string]string{"p": "2", "q": "2"}},
		{"a^b=>b suffix", `
input src : 5 = range
input x3 : 3 = 1
{p} =:+ id src ~logic:"a^b => b"
let q = p + x3`, map[string]string{"p": "3"}},
		{"a=>a^b partial update of the prefix", `
input dst : 5 = 0
input x2 : 2 = 1
dst =+ id x2 ~logic:"a => a^b"`, map[string]string{"dst": "5"}},
		{"b=>a^b partial update of the suffix", `
input dst : 5 = 0
input x3 : 3 = 1
dst =+ id x3 ~logic:"b => a^b"`, map[string]string{"dst": "5"}},
		{"a^b^c=>a and =>c: the discarded rest's split does not matter", `
input src : 7 = range
input a2 : 2 = 0
input c1 : 1 = 0
{pa} =:+ id src ~logic:"a^b^c => a"
{pc} =:+ id src ~logic:"a^b^c => c"
let ua = pa + a2
let uc = pc + c1`, map[string]string{"pa": "2", "pc": "1"}},
		{"a^b^c=>b middle extraction with integer components", `
input src : 7 = range
let m = src ++ "2^b^1 => b"`, map[string]string{"m": "4"}},
		{"a^b^c=>b alone: a and c are discardable", `
input src : 7 = range
{m} =:+ id src ~logic:"a^b^c => b"`, map[string]string{"m": "7"}},
		{"b=>a^b^c write the middle (integer components)", `
input dst : 7 = 0
input x3 : 3 = 1
dst =+ id x3 ~logic:"b => 2^b^2"`, map[string]string{"dst": "7"}},
		{"three-way concatenation", `
input x : 2 = range
input y : 3 = range
input z : 2 = range
let c = (x, y, z) ++^ "a; b; c => a^b^c"`, map[string]string{"c": "7"}},
		{"concatenation along the first axis with a shared rest", `
input x : 2,4 = range
input y : 3,4 = range
let c = (x, y) ++^ "p, ...; q, ... => p^q, ..."`, map[string]string{"c": "5,4"}},
		{"2x2 block matrix", `
input a : 2,2 = 1
input b : 2,3 = 2
input c : 1,2 = 3
input d : 1,3 = 4
let m = (a, b, c, d) ++^ "r, s; r, t; u, s; u, t => r^u, s^t"`, map[string]string{"m": "3,5"}},
		{"integer components: skip three at the front", `
input src : 5 = range
let tail = src ++ "3^a => a"`, map[string]string{"tail": "2"}},
		{"integer components: all but the last three", `
input src : 5 = range
let head = src ++ "a^3 => a"`, map[string]string{"head": "2"}},
		{"integer components on both sides", `
input src : 10 = range
let mid = src ++ "3^a^5 => a"`, map[string]string{"mid": "2"}},
		{"a discardable component closes to 0", `
input x : 2 = range
input y : 3 = range
let c = (x, y) ++^ "a; b => a^b^c"`, map[string]string{"c": "5"}},
	})
}

func TestDiscardability(t *testing.T) {
	// a^b => a: b is discardable, so with nothing else known the whole
	// source is the prefix (b = 0). a^b => a^b: nothing is discardable.
	runShapeCases(t, []shapeCase{
		{"a^b=>a alone", `
input src : 5 = range
let p = src ++ "a^b => a"`, map[string]string{"p": "5"}},
		{"a^b=>b alone", `
input src : 5 = range
let p = src ++ "a^b => b"`, map[string]string{"p": "5"}},
	})
	// a^b => a^b: nothing is discardable, and with no known split the
	// solver must not pick an arbitrary one.
	_, err := inference.InferSource("input src : 5 = range\nlet p = src ++ \"a^b => a^b\"\n")
	if e, ok := inference.AsError(err); !ok || e.Kind != inference.KindConcat {
		t.Fatalf("a^b => a^b with no known split: got %v, want a concat error", err)
	}
}

type errCase struct {
	name string
	src  string
	kind inference.ErrorKind
	line int
	msg  string // substring of the message
}

func TestErrors(t *testing.T) {
	cases := []errCase{
		{"parse", "let y = (x\n", inference.KindParse, 2, ""},
		{"spec syntax", "input x : 3 = 1\nlet y = x ++ \"i => i)\"\n", inference.KindParse, 2, ""},
		{"undefined name", "let y = x + 1\n", inference.KindName, 1, "undefined name \"x\""},
		{"row var and label clash", "let y2 = {x2; o=[2; 3; 4]} ++ \"..v.., v => v, ..v..\"\n", inference.KindName, 1, "both"},
		{"capture not in spec", "input x : 3,4 = range\nlet y = x ++ \"ij=>ji\" [\"k\"]\n", inference.KindName, 2, "\"k\""},
		{"dim of an uncaptured name", "input x : 3 = range\ndim zz = 3\n", inference.KindName, 2, "zz"},
		{"arity", "input x : 3 = range\nlet y = x ++ \"i;i=>i\"\n", inference.KindArity, 2, "2 argument slot"},
		{"hidden dimension", "input x : 2 = range\nlet y = {w} * x\n", inference.KindHiddenDim, 2, "forgot to specify the hidden dimension"},
		{"hidden dimension in a contracted input row", "input x : 3 = range\nlet y = {w; o=[4]} +* \"...|i->o; ...|... => ...|o\" x\n", inference.KindHiddenDim, 2, "hidden dimension"},
		{"rank mismatch", "input a : 2,3 = range\nlet y = a ++ \"i=>i\"\n", inference.KindRankMismatch, 2, "axes"},
		{"too many operand axes", "input a : 3 = range\ninput b : 2,3 = range\n{c} =: id a\nlet d = b *. c\nc =+ id b ~logic:\"i => i\"\n", inference.KindRankMismatch, 5, ""},
		{"dim mismatch", "input a : 2,3 = range\ninput b : 4,5 = range\nlet c = a +* \"ij;jk=>ik\" b\n", inference.KindDimMismatch, 3, "label j: j is 3 but the matching axis is 4 (spec row [j, k] against [4, 5])"},
		{"basis mismatch", "input t1 : 4:batch = 1\ninput t2 : 4 = 1\nlet result = t1 + t2\n", inference.KindBasis, 3, "bases"},
		{"incompatible stride", "input x : 9 = range\nlet y = x ++ \"2*o => o\"\n", inference.KindStride, 2, "stride"},
		{"stride offset not below the stride", "input x : 6 = range\nlet y = x ++ \"i+1 => i\"\n", inference.KindStride, 2, "offset"},
		{"valid conv does not tile", "input x : 6 = range\ninput k : 3 = range\nlet y = x +* \"2*o<+k; k => o\" k\n", inference.KindStride, 3, "stride"},
		{"fixed index out of bounds", "input x : 3 = range\nlet y = x ++ \"5 => 0\"\n", inference.KindFixedIndex, 2, "fixed index"},
		{"concat components exceed", "input x : 2 = range\ninput y : 3 = range\ninput o : 4 = 0\nlet c = ((x, y) ++^ \"a; b => a^b\") + o\n", inference.KindDimMismatch, 4, ""},
		{"concat residual negative", "input src : 3 = range\nlet p = src ++ \"5^a => a\"\n", inference.KindConcat, 2, "exceed"},
		{"ambiguous middle: a and c both may be empty", "input src : 7 = range\ninput x4 : 4 = 1\nlet m = src ++ \"a^b^c => b\"\nlet u = m + x4\n", inference.KindConcat, 3, "concatenation"},
		{"ambiguous middle write", "input dst : 7 = 0\ninput x3 : 3 = 1\ndst =+ id x3 ~logic:\"b => a^b^c\"\n", inference.KindConcat, 3, "concatenation"},
		{"total elems", "input x : 2,3 = range\nlet s = x ++ \"..m.. => 0\" [\"m\"]\ndim m = 5\n", inference.KindTotalElems, 3, ""},
		{"self reference", "leaf a\nlet b = a +* \"..r..; ..r.., i => ..r..\" a\n", inference.KindRankCycle, 2, "Infinite number of axes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inference.InferSource(tc.src)
			if err == nil {
				t.Fatalf("want %s error, got success", tc.kind)
			}
			e, ok := inference.AsError(err)
			if !ok {
				t.Fatalf("error %v is not an *inference.Error", err)
			}
			if e.Kind != tc.kind {
				t.Fatalf("kind %s, want %s (%v)", e.Kind, tc.kind, e)
			}
			if e.Pos.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", e.Pos.Line, tc.line, e)
			}
			if tc.msg != "" && !strings.Contains(e.Error(), tc.msg) {
				t.Errorf("message %q does not contain %q", e.Error(), tc.msg)
			}
		})
	}
}

func TestSpecErrorColumn(t *testing.T) {
	// The error position points at the offending character inside the spec
	// string, and SpecCol is the column within the spec.
	src := "input x : 3 = range\nlet y = x ++ \"i => i&\"\n"
	_, err := inference.InferSource(src)
	e, ok := inference.AsError(err)
	if !ok || e.Kind != inference.KindParse {
		t.Fatalf("want a parse error, got %v", err)
	}
	line2 := "let y = x ++ \"i => i&\""
	wantCol := strings.Index(line2, "&") + 1
	if e.Pos.Line != 2 || e.Pos.Col != wantCol {
		t.Fatalf("position %v, want 2:%d (%v)", e.Pos, wantCol, e)
	}
	if e.SpecCol != strings.Index("i => i&", "&")+1 {
		t.Fatalf("spec column %d, want %d", e.SpecCol, strings.Index("i => i&", "&")+1)
	}
}

func TestClosingInterleaveFindsBroadcast(t *testing.T) {
	// The digest's incompleteness example: terminal α, β, interior γ with
	// 3 ⊑ α, 5 ⊑ β, γ ⊑ α, γ ⊑ β. OCANNL commits α=3 and β=5 in one batch
	// and then fails on γ. Re-solving after every single commitment (the
	// formal core's interleave, Def. 6.1 step 2) pins γ=3 as soon as α is
	// committed, which collapses β's caps {5, 3} to the broadcast unit: the
	// satisfiable solution is found.
	src := `
leaf a
leaf b
input three : 3 = 1
input five : 5 = 1
let g = a + b
let u = three + a
let v = five + b
`
	got := shapesOf(t, src)
	if got["a"] != "3" || got["b"] != "1" || got["g"] != "3" {
		t.Fatalf("got %v, want a=3, b=1 (broadcast), g=3", got)
	}
}

// TestLetNamesConstant: a number, numeric literal or dim scalar a let
// binds directly is the tensor of the let's name (issue 27, item 3); the
// operand lists of the operations that use it say so, and a constant
// written inside an expression stays anonymous.
func TestLetNamesConstant(t *testing.T) {
	src := "input x : 3 = range\n" +
		"let s = 2\n" +
		"let v = [1; 2; 3]\n" +
		"let c = x ++ \"i => 0\" [\"i\"]\n" +
		"let n = dim i\n" +
		"let y = s *. x + v + n + 1\n" +
		"let z = y /. dim i\n"
	g, err := inference.InferSource(src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tn := range g.Tensors {
		names = append(names, tn.Name+":"+tn.Kind.String())
	}
	want := "x:input s:number v:literal c:let n:dim _y.1:let _y.2:let _y.3:let _num.1:number y:let _dim_i.1:dim z:let"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tensors\n%s\nwant\n%s", got, want)
	}
	var descs []string
	for _, op := range g.Ops {
		descs = append(descs, op.Desc)
	}
	wantOps := []string{
		`einsum "++" "i => 0" of x`,
		`pointwise "*." of s, x`,
		`pointwise "+" of _y.1, v`,
		`pointwise "+" of _y.2, n`,
		`pointwise "+" of _y.3, _num.1`,
		`pointwise "/." of y, _dim_i.1`,
	}
	if got := strings.Join(descs, "\n"); got != strings.Join(wantOps, "\n") {
		t.Errorf("operations\n%s\nwant\n%s", got, strings.Join(wantOps, "\n"))
	}
	for _, n := range g.Named {
		if got := g.Tensors[n.Tensor].Name; got != n.Name {
			t.Errorf("the let %s names tensor %s", n.Name, got)
		}
	}
}
