package autodiff

import (
	"fmt"
	"testing"
)

// weighted appends a loss that multiplies result by a random weight
// tensor rw (a leaf shaped by use) before summing everything, so that the
// gradients are not uniform.
func weighted(src, result string) string {
	return src + fmt.Sprintf(`
leaf rw
let loss = (%s *. rw) ++ "...|...->... => 0"`, result)
}

func TestGradPrimitives(t *testing.T) {
	pos := uniform(0.5, 2)
	unary := []struct {
		fn string
		g  gen
	}{
		{"id", nil},
		{"neg", nil},
		{"relu", awayFrom(-1, 1, 0.05, 0)},
		{"sat01", awayFrom(-0.5, 1.5, 0.05, 0, 1)},
		{"exp", nil},
		{"log", pos},
		{"exp2", nil},
		{"log2", pos},
		{"sin", uniform(-3, 3)},
		{"cos", uniform(-3, 3)},
		{"sqrt", pos},
		{"recip", awayFrom(-2, 2, 0.5, 0)},
		{"recip_sqrt", pos},
		{"tanh", uniform(-2, 2)},
	}
	var cases []gcase
	for _, u := range unary {
		c := gcase{name: u.fn, src: weighted(`
input x : 3,4
let y = `+u.fn+` x`, "y")}
		if u.g != nil {
			c.gens = map[string]gen{"x": u.g}
		}
		cases = append(cases, c)
	}
	cases = append(cases,
		gcase{name: "neg prefix and nested", src: weighted(`
input x : 3,4
let y = -(exp (sin x))`, "y")},
		gcase{name: "add", src: weighted(`
input x : 3,4
input y : 3,4
let z = x + y`, "z")},
		gcase{name: "sub", src: weighted(`
input x : 3,4
input y : 3,4
let z = x - y`, "z")},
		gcase{name: "mul", src: weighted(`
input x : 3,4
input y : 3,4
let z = x *. y`, "z")},
		gcase{name: "mul same operand", src: weighted(`
input x : 3,4
let z = x *. x`, "z")},
		gcase{name: "div", src: weighted(`
input x : 3,4
input y : 3,4
let z = x /. y`, "z"), gens: map[string]gen{"y": awayFrom(-2, 2, 0.5, 0)}},
		gcase{name: "div slash", src: weighted(`
input x : 3,4
input y : 3,4
let z = x / y`, "z"), gens: map[string]gen{"y": awayFrom(-2, 2, 0.5, 0)}},
		gcase{name: "pow 2", src: weighted(`
input x : 3,4
let z = x **. 2`, "z")},
		gcase{name: "pow 3", src: weighted(`
input x : 3,4
let z = x **. 3`, "z")},
		gcase{name: "pow 1", src: weighted(`
input x : 3,4
let z = x **. 1`, "z")},
		gcase{name: "pow fractional", src: weighted(`
input x : 3,4
let z = x **. 0.5 + x **. -1.5`, "z"), gens: map[string]gen{"x": pos}},
		gcase{name: "where", src: weighted(`
input c : 3,4
input a : 3,4
input b : 3,4
let z = where c a b`, "z"),
			gens:   map[string]gen{"c": bits},
			noGrad: []string{"c"}},
		gcase{name: "where of a comparison", src: weighted(`
input a : 3,4
input b : 3,4
let z = where (a < b) (a *. b) (a - b)`, "z"), gens: map[string]gen{"a": distinct(-1, 1), "b": distinct(-1.01, 0.99)}},
		gcase{name: "comparisons have no gradient", src: weighted(`
input a : 3,4
input b : 3,4
input x : 3,4
let z = x *. ((a < b) + (a = b) + (a <> b) + not a)`, "z"), noGrad: []string{"a", "b"}},
		gcase{name: "fma", src: weighted(`
input a : 3,4
input b : 3,4
input c : 3,4
let z = fma a b c`, "z")},
		gcase{name: "fma broadcast", src: weighted(`
input a : 3,4
input b : 4
input c : 3,1
let z = fma a b (c ++ "ij => i0")`, "z")},
	)
	runChecks(t, cases)
}

func TestGradContractions(t *testing.T) {
	runChecks(t, []gcase{
		{name: "matmul compose", src: weighted(`
input x : 5 | 3
input w : 3 -> 4
let y = w * x`, "y")},
		{name: "mlp with params", src: weighted(`
input x : 6 | 3
let h = tanh ({w1} * x + {b1; o=[4]})
let y = {w2} * h + {b2; o=[2]}`, "y"), gens: map[string]gen{"w1": uniform(-1, 1)}},
		{name: "einsum matmul", src: weighted(`
input a : 2,3
input b : 3,4
let c = a +* "ij;jk=>ik" b`, "c")},
		{name: "einsum fixed index in the result", src: weighted(`
input a : 3,4
input v : 4
let y = a +* "ij;j=>i0" v`, "y")},
		{name: "einsum fixed index scatters", src: weighted(`
input a : 2,3
input b : 3,4
let c = a +* "ij;jk=>i1k" b`, "c")},
		{name: "einsum fixed index slices an operand", src: weighted(`
input a : 4,3
input b : 4,5
let c = a +* "i2;ij=>j" b`, "c")},
		{name: "einsum batched rows", src: weighted(`
input a : 2 | 3,4
input b : 2 | 4,5
let c = a +* "...|ij; ...|jk => ...|ik" b`, "c")},
		{name: "einsum contracting row variables", src: weighted(`
input a : 2,3,4
input b : 3,4,5
let c = a +* "a, ..r..; ..r.., b => a, b" b`, "c")},
		{name: "outer sum", src: weighted(`
input a : 3
input b : 4
let c = a +++ "i; j => i j" b`, "c")},
		{name: "einsum1 permute reduce diagonal", src: weighted(`
input m : 2,3,3
input q : 3,3
input v : 3
let p = (m ++ "ijk => kj") + ((q ++ "ii => i") +* "i; j => j i" v)
let d = v ++ "i => ii"`, "p + (d ++ \"ij => 0 j\")")},
		{name: "sum into a scalar", src: weighted(`
input a : 2 | 3 -> 4
let s = a ++ "...|...->... => 0"`, "s")},
		{name: "three-operand chain", src: weighted(`
input a : 2,3
input b : 3,4
input c : 4,2
let d = (a +* "ij;jk=>ik" b) +* "ik;kl=>il" c`, "d")},
	})
}

func TestGradBroadcasting(t *testing.T) {
	runChecks(t, []gcase{
		{name: "row broadcast", src: weighted(`
input x : 3,4
input b : 4
let y = x + b`, "y")},
		{name: "scalar broadcast", src: weighted(`
input x : 3,4
input z : 5
let s = z ++ "i => 0"
let y = x *. s`, "y")},
		{name: "number broadcast", src: weighted(`
input x : 3,4
let y = 2 *. x - 0.5`, "y")},
		{name: "batch broadcast", src: weighted(`
input x : 2 | 3,4
input w : 3,4
let y = x *. w`, "y")},
		{name: "column broadcast through a reduction", src: weighted(`
input x : 3,4
let m = x ++ "ij => i0"
let y = x - m`, "y")},
	})
}

func TestGradConvolutions(t *testing.T) {
	runChecks(t, []gcase{
		{name: "conv1d valid", src: weighted(`
input x : 8
input w : 3
let y = x +* "o<+k; k => o" w`, "y")},
		{name: "conv1d padded", src: weighted(`
input x : 6
input w : 3
let y = x +* "o=+k; k => o" w`, "y")},
		{name: "conv1d strided dilated", src: weighted(`
input x : 13
input w : 3
let y = x +* "2*o<+3*k; k => o" w`, "y")},
		{name: "conv2d valid", src: weighted(`
input img : 6,6
input k : 3,3
let y = img +* "oh<+kh, ow<+kw; kh, kw => oh, ow" k`, "y")},
		{name: "conv2d padded", src: weighted(`
input img : 5,5
input k : 3,3
let y = img +* "oh=+kh, ow=+kw; kh, kw => oh, ow" k`, "y")},
		{name: "conv2d padded even kernel", src: weighted(`
input img : 4,5
input k : 2,4
let y = img +* "oh=+kh, ow=+kw; kh, kw => oh, ow" k`, "y")},
		{name: "conv2d strided with channels", src: weighted(`
input img : 2 | 7,7,2
let y = (img +* "... | 2*oh<+kh, 2*ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {kernel}) + {bias}
dim kh = 3
dim kw = 3
dim oc = 3`, "y")},
		{name: "strided without kernel", src: weighted(`
input x : 8
let odd = x ++ "2*i+1 => i"
let even = x ++ "2*i => i"`, "odd *. even")},
		{name: "stride scatter", src: weighted(`
input x : 4
input y : 4
let z = (x ++ "i => 2*i") + (y ++ "i => 2*i + 1")`, "z")},
	})
}

func TestGradMax(t *testing.T) {
	d := distinct(-2, 2)
	runChecks(t, []gcase{
		{name: "max reduction rows", src: weighted(`
input m : 3,5
let rm = m @^^ "ij => i0"`, "rm"), gens: map[string]gen{"m": d}},
		{name: "max reduction to scalar", src: weighted(`
input m : 2 | 3,4
let mx = m @^^ "...|...->... => 0"`, "mx"), gens: map[string]gen{"m": d}},
		{name: "max-pool valid stride 2, constant-0 window", src: weighted(`
input img : 4,6
leaf win : 2,2 = 0
let p = img @^+ "2*oh<+wh, 2*ow<+ww; wh, ww => oh, ow" win`, "p"),
			gens: map[string]gen{"img": d, "win": keep}},
		{name: "max-pool padded 3x3 (shared case)", src: weighted(`
input base : 4,4
let img = base - 16
let pooled = img @^+ "oh=+wh, ow=+ww; wh, ww => oh, ow" ["wh"; "ww"] (0.0 + 0.0)
dim wh = 3
dim ww = 3
let conv_out = img +* "oh=+kh, ow=+kw; kh, kw => oh, ow" ["kh"; "kw"] (1.0 + 0.0)
dim kh = 3
dim kw = 3`, "(pooled + conv_out)"), gens: map[string]gen{"base": d}},
		{name: "padded max-pool of negative values", src: weighted(`
input x : 6
leaf w : 3 = 0
let p = x @^+ "o=+k; k => o" w`, "p"), gens: map[string]gen{"x": distinct(-5, -1), "w": keep}},
		{name: "tropical product", src: weighted(`
input a : 3,4
input b : 4,2
let c = a @^+ "ij;jk=>ik" b`, "c"), gens: map[string]gen{"a": d, "b": distinct(-0.3, 0.3)}},
	})
}

func TestGradConcatSlice(t *testing.T) {
	runChecks(t, []gcase{
		{name: "concatenation", src: weighted(`
input x : 2
input y : 3
let c = (x, y) ++^ "a; b => a^b"`, "(c *. c)")},
		{name: "concatenation of three (shared case)", src: weighted(`
input a_mc : 2
input b_mc : 3
input c_mc : 2
input fixed7_mc : 7
let concat_mc = ((a_mc, b_mc, c_mc) ++^ "ii; mm; kk => ii^mm^kk") + fixed7_mc`, "concat_mc")},
		{name: "concatenation along an axis", src: weighted(`
input x : 2,3
input y : 4,3
let c = (x, y) ++^ "x, ...; y, ... => x^y, ..."`, "c")},
		{name: "block matrix", src: weighted(`
input a : 1,2
input b : 1,1
input c : 2,2
input d : 2,1
let m = (a, b, c, d) ++^ "r, s; r, t; u, s; u, t => r^u, s^t"`, "m")},
		{name: "concatenating one tensor twice", src: weighted(`
input x : 3
let c = (x, x) ++^ "a; b => a^b"`, "(c *. c)")},
		{name: "prefix slice", src: weighted(`
input x : 5
input y : 3
let p = (x ++ "a^b => a") + y`, "p")},
		{name: "suffix slice", src: weighted(`
input x : 5
input y : 2
let p = (x ++ "a^b => b") *. y`, "p")},
		{name: "integer component slices", src: weighted(`
input x : 5
let drop = x ++ "3^a => a"
let drop2 = x ++ "a^3 => a"`, "(drop *. drop2)")},
		{name: "middle slice", src: weighted(`
input src : 9
let m = src ++ "a^b^c => b" ["a"; "c"]
dim a = 2
dim c = 3`, "m")},
		{name: "pad with integer components", src: weighted(`
input x : 2
let p = x ++ "a => 3^a^5"`, "p")},
		{name: "batch slice", src: weighted(`
input x : 3 | 2,4
let s = (x @| 1) *. (x @| 2)`, "s")},
		{name: "nested batch slices", src: weighted(`
input x : 3,2 | 4
let s = x @| 2 @| 1`, "s")},
		{name: "stacking output axis", src: weighted(`
input x : 3
input y : 3
let s = [x; y *. y]`, "s")},
		{name: "stacking input and batch axes", src: weighted(`
input x : 3
input y : 3
let a = (x, y)
let b = [| x; y |] ++ "i|j => i->j"
let s = a *. b`, "s")},
		{name: "stacking one tensor twice", src: weighted(`
input x : 2,3
let s = [x; x]`, "s")},
	})
}

func TestGradAssignments(t *testing.T) {
	runChecks(t, []gcase{
		{name: "interleave", src: weighted(`
input t1 : 4
input t2 : 4
{t} =:+ id t1 ~logic:"i => 2*i"
t =+ id t2 ~logic:"i => 2*i + 1"
let odd = t ++ "2*i+1 => i"`, "((t *. t) + (odd ++ \"i => 2*i\"))")},
		{name: "partial update of an input read before and after", src: weighted(`
input t : 5
input v : 2
let u = t *. t
t =+ v ~logic:"b => a^b"`, "(u + (t *. t))")},
		{name: "overwrite of an input read before", src: weighted(`
input t : 5
input v : 2
let u = sin t
t =: v *. v ~logic:"a; a => a^b"`, "(u + (t *. exp t))")},
		{name: "subtracting assignments", src: weighted(`
input x : 3,4
input y : 3,4
{t} =:- x *. y
t =- exp x`, "(t *. t)")},
		{name: "transpose and compose assignments", src: `
input x : 2 -> 3
input w : 3 -> 4
input b : 2 | 3
{t} =: x ~logic:"T"
{c} =:+ w * b ~logic:"@"
leaf r1
leaf r2
let loss = ((t *. t *. r1) ++ "...|...->... => 0") + ((c *. r2) ++ "...|...->... => 0")`},
		{name: "max and min assignments with reset", src: weighted(`
input x : 3,4
input y : 3,4
{mx} =:@^ x ~logic:"ij => i"
{mn} =:@- x *. y ~logic:"ij; ij => i"`, "(mx *. mn)"), gens: map[string]gen{"x": distinct(0.5, 2), "y": distinct(0.5, 2)}},
		{name: "result updated after use (recomputed)", src: weighted(`
input x : 3,4
input z : 3,4
let e = tanh x
e =+ z *. z`, "(e *. e)")},
		{name: "max reduction whose result is updated later", src: weighted(`
input m : 3,5
input z : 3,1
let rm = m @^^ "ij => i0"
let e = exp rm
rm =+ z`, "(rm *. e)"), gens: map[string]gen{"m": distinct(-2, 2)}},
	})
}
