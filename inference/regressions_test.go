package inference_test

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/pipeline"
)

// Regression tests for three bugs reported by the gradient-check suite
// (internal/gradcheck/bugs_test.go).

// TestPointwiseAfterLeadingFlank: a spec row with axes before its row
// variable ("a, ..o..") gives a row with a leading flank, [4]·◇·[3]. A
// pointwise operation with a partner of the same rank aligns them (leading
// axes from the left, trailing axes from the right) instead of growing the
// result on both sides ([4]·◇·[4,3], shape 4,4,3), and a genuine mismatch
// is an error instead of a broadcast in the middle (4,2,3).
func TestPointwiseAfterLeadingFlank(t *testing.T) {
	runShapeCases(t, []shapeCase{
		{"same shape", `
input x : 4,3 = range
input r : 4,3 = 1
let y = x ++ "a, ..o.. => a, ..o.."
let z = y *. r`, map[string]string{"y": "4,3", "z": "4,3"}},
		{"operands swapped", `
input x : 4,3 = range
input r : 4,3 = 1
let y = x ++ "a, ..o.. => a, ..o.."
let z = r *. y`, map[string]string{"z": "4,3"}},
		{"two leading axes", `
input x : 4,5,3 = range
input r : 4,5,3 = 1
let y = x ++ "a, b, ..o.. => a, b, ..o.."
let z = y + r`, map[string]string{"z": "4,5,3"}},
		{"a number does not add an axis", `
input x : 4 = range
let y = x ++ "a, ..o.. => a, ..o.."
let z = y + 1`, map[string]string{"z": "4"}},
		{"a leaf's inherited leading flank", `
leaf a
let y = a ++ "i, ..r.. => ..r.., i, i"
let z = a + y`, map[string]string{"a": "1", "y": "1,1", "z": "1,1"}},
		{"conv2d_valid then a full-rank partner", `
input img : 2 | 4,4,2 = range
input r : 2 | 2,2,3 = 1
let c = img +* "... | oh<+kh, ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {k}
dim kh = 3
dim kw = 3
let z = c *. r`, map[string]string{"k": "3,3,2 -> 3", "c": "2 | 2,2,3", "z": "2 | 2,2,3"}},
		{"residual after a padded conv", `
input x : 2 | 4,4,3 = range
let c = x +* "... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {k}
dim kh = 3
dim kw = 3
let z = c + x`, map[string]string{"k": "3,3,3 -> 3", "z": "2 | 4,4,3"}},
		{"max pool then a partner", `
input img : 2 | 4,4,2 = range
input r : 2 | 2,2,2 = 1
let p = img @^+ "... | 2*oh<+wh, 2*ow<+ww, ..c..; wh, ww => ... | oh, ow, ..c.." ["wh"; "ww"] (0.0 + 0.0)
dim wh = 2
dim ww = 2
let z = p *. r`, map[string]string{"p": "2 | 2,2,2", "z": "2 | 2,2,2"}},
	})
	for _, tc := range []struct{ name, src, msg string }{
		{"mismatch", `
input x : 4,3 = range
input r : 2,3 = 1
let y = x ++ "a, ..o.. => a, ..o.."
let z = y *. r
`, "4 vs 2"},
		{"channel mismatch after conv2d_valid", `
input img : 2 | 4,4,2 = range
input r : 2 | 2,2,3 = 1
let c = img +* "... | oh<+kh, ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {k}
dim kh = 3
dim kw = 3
dim oc = 4
let z = c *. r
`, "dimension mismatch"},
		{"a leading axis does not broadcast into the middle of a longer row", `
input x : 4,3 = range
input r : 5,4,3 = 1
let y = x ++ "a, ..o.. => a, ..o.."
let z = y *. r
`, "4 vs 5"},
		{"an inherited leading flank meets a trailing one", `
let z = {x} + (x ++ "a,b,..r.. => ..r..,b,a" ["a"; "b"])
dim a = 3
dim b = 5
`, "3 vs 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inference.InferSource(strings.TrimSpace(tc.src) + "\n")
			e, ok := inference.AsError(err)
			if !ok || e.Kind != inference.KindDimMismatch || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("got %v, want a dim-mismatch mentioning %q", err, tc.msg)
			}
		})
	}
}

// TestSpecOnPointwiseResult: an einsum operand slot with a row variable
// shared with a parameter's input row ("a, ..c..; ..c.. -> o") on a
// pointwise result. The pointwise result's row is ⟨t⟩·[4,5] (t a deficit
// template of an interior), so "a, ..c.." ≈ ⟨t⟩·[4,5] waits for closing;
// the parameter's row c waits for the interior t to close (to the empty
// row), which then gives a = 4 and c = [5], instead of being reported as a
// forgotten hidden dimension.
func TestSpecOnPointwiseResult(t *testing.T) {
	runShapeCases(t, []shapeCase{
		{"tanh", `
input x : 4,5 = range
let y = (tanh x) +* "a, ..c..; ..c.. -> o => a, o" ["o"] {k}
dim o = 3`, map[string]string{"k": "5 -> 3", "y": "4,3"}},
		{"plus zero", `
input x : 4,2 = range
let y = (x + 0) +* "a, ..c..; ..c.. -> o => a, o" ["o"] {k}
dim o = 3`, map[string]string{"k": "2 -> 3", "y": "4,3"}},
		{"plain leaf instead of a parameter", `
input x : 4,5 = range
leaf k
let y = (tanh x) +* "a, ..c..; ..c.. -> o => a, o" ["o"] k
dim o = 3`, map[string]string{"k": "5 -> 3", "y": "4,3"}},
		{"a parameter axis before the row variable", `
input x : 4,5,6 = range
let y = (tanh x) +* "a, ..c..; a, ..c.. -> o => o" ["o"] {k}
dim o = 3`, map[string]string{"k": "4,5,6 -> 3", "y": "3"}},
		{"strided padded conv on relu", `
input x : 4 | 6,6,1 = range
let h = relu x
let y = h +* "... | 2*oh=+kh, 2*ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {kernel}
dim kh = 3
dim kw = 3
dim oc = 2`, map[string]string{"kernel": "3,3,1 -> 2", "y": "4 | 3,3,2"}},
		{"valid conv on id", `
input x : 2 | 4,4,2 = range
let y = (id x) +* "... | oh<+kh, ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." ["kh"; "kw"; "oc"] {kernel}
dim kh = 3
dim kw = 3
dim oc = 5`, map[string]string{"kernel": "3,3,2 -> 5", "y": "2 | 2,2,5"}},
	})
	// A parameter row that the interior does not determine is still a
	// forgotten hidden dimension.
	_, err := inference.InferSource("input x : 4,5 = range\nlet y = (tanh x) +* \"a, b, ..c..; ..d.. -> o => a, o\" [\"o\"] {k}\ndim o = 3\n")
	if e, ok := inference.AsError(err); !ok || e.Kind != inference.KindHiddenDim {
		t.Fatalf("got %v, want a hidden-dim error for k's input row", err)
	}
}

// TestValidConvOffset: a stride offset is in no size relation, so on a
// valid convolution (n = s·(O−1) + 1 + (K−1)·d) the last window would read
// past the end of the axis (8 positions, kernel 2: O = 4 and position
// 2·3 + 1 + 1 = 8 is read). Inference rejects it with a stride error; a
// padded convolution's margin absorbs the offset, so it stays accepted and
// lowers.
func TestValidConvOffset(t *testing.T) {
	for _, spec := range []string{"2*o<+k+1; k => o", "2*o<+1+k; k => o", "3*o<+2*k+2; k => o", "k; x => 2*o<+k+1"} {
		_, err := inference.InferSource("input x : 8 = range\ninput w : 2 = 1\nlet y = x +* \"" + spec + "\" w\n")
		e, ok := inference.AsError(err)
		if !ok || e.Kind != inference.KindStride || !strings.Contains(e.Msg, "valid convolution") {
			t.Errorf("%s: got %v, want a stride error about the valid convolution's offset", spec, err)
			continue
		}
		if e.Pos.Line != 3 || e.SpecCol == 0 {
			t.Errorf("%s: error position %v spec column %d, want line 3 inside the spec", spec, e.Pos, e.SpecCol)
		}
	}
	for _, src := range []string{
		"input x : 8 = range\ninput w : 2 = 1\nlet y = x +* \"2*o=+k+1; k => o\" w\n",
		"input x : 8 = range\ninput w : 2 = 1\nlet y = x +* \"2*o<+k; k => o\" w\n",
		"input x : 8 = range\nlet y = x ++ \"2*o+1 => o\"\n",
	} {
		if _, err := pipeline.Compile(src, pipeline.Options{}); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
}

// TestBiasClosesToTheFullRow: an unannotated bias after a convolution
// whose output channels are set by a later dim closes to the whole result
// row (oh, ow, oc), as in OCANNL (digest §3.5), not to (oh, ow): its cap
// [oh, ow, ..oc..] is committed only after the kernel's output row is
// fixed by its total (stage 3 closes rows fixed by a total, and leaves
// whose caps are closed, before leaves whose caps are still open).
func TestBiasClosesToTheFullRow(t *testing.T) {
	runShapeCases(t, []shapeCase{
		{"padded conv, channels set after", `
input x : 6,6,4 = range
let c = x +* "oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => oh, ow, ..oc.." ["kh"; "kw"; "oc"] {k}
let y = c + {b = 0.}
dim kh = 3
dim kw = 3
dim oc = 8`, map[string]string{"k": "3,3,4 -> 8", "b": "6,6,8", "y": "6,6,8"}},
	})
}
