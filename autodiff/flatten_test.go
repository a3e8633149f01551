package autodiff

import (
	"testing"
)

// TestGradFlatten gradient-checks `flatten x` (its backward pass reads
// the result's gradient at the row-major offset of the operand's output
// axes): alone, with batch and input axes kept, feeding a contraction as
// a CNN's flatten feeds its Linear, after a convolution, and twice.
func TestGradFlatten(t *testing.T) {
	runChecks(t, []gcase{
		{name: "flatten three axes", src: weighted(`
input x : 2,3,4
let f = flatten x`, "(f *. f)")},
		{name: "flatten keeps batch and input rows", src: weighted(`
input x : 2 | 3 -> 2,4
let f = flatten x`, "(f *. f)")},
		{name: "flatten one axis", src: weighted(`
input x : 3 | 5
let f = flatten x`, "f")},
		{name: "flatten feeds a contraction", src: `
input x : 2 | 3,2,4
input y : 2 | 5
let h = {w; o=[5]} * flatten (x *. x) + {b}
let d = h - y
let loss = (d *. d) ++ "...|... => 0"`},
		{name: "convolution, flatten, linear", src: `
input x : 2 | 4,4,2
let c = x +* "... | 1*oh=+kh, 1*ow=+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc" ["kh"; "kw"; "oc"] {kernel}
dim kh = 3
dim kw = 3
dim oc = 3
let z = {w; o=[2]} * flatten (tanh c)
let loss = (z *. z) ++ "...|... => 0"`},
		{name: "flatten twice", src: weighted(`
input x : 2,3,2
let f = flatten (flatten x)
let g = flatten ([x; x])`, "(f *. f) + (g ++ \"a => 0\")")},
	})
}

// TestFlattenForward checks flatten's values: the result's cell b, k is
// the operand's cell b, (h, w, c) with k = h*W*C + w*C + c, and input axes
// stay where they were.
func TestFlattenForward(t *testing.T) {
	v, g := blkForward(t, "flatten", `
input x : 2 | 3 -> 2,2,3 = range
let f = flatten x`, map[string]gen{"x": keep})
	if got := g.Tensors[len(g.Tensors)-1].Shape.String(); got != "2 | 3 -> 12" {
		t.Errorf("flatten x : %s, want 2 | 3 -> 12", got)
	}
	x, f := v("x"), v("f")
	// x's memory order is batch, output (h, w, c), input (i).
	for b := range 2 {
		for h := range 2 {
			for w := range 2 {
				for c := range 3 {
					for i := range 3 {
						k := h*2*3 + w*3 + c
						src := (((b*2+h)*2+w)*3+c)*3 + i
						dst := (b*12+k)*3 + i
						if f[dst] != x[src] {
							t.Errorf("f[%d, %d, %d] = %v, want x[%d, %d, %d, %d, %d] = %v", b, k, i, f[dst], b, h, w, c, i, x[src])
						}
					}
				}
			}
		}
	}
}
