package gradcheck

// Regression tests for generator problems found while writing this
// package (all fixed): a pointwise broadcast against a row with a leading
// flank before a row variable, a spurious hidden-dim error for an einsum
// over a pointwise result, and a valid convolution with an offset. Each
// test states the intended behaviour and fails if it regresses. They use the generator's own pipeline (model.Expand,
// Infer, then pipeline.CompileGraph per entry, as gen.compileModel
// does) on small programs, since a model that fails to generate cannot be
// committed in this package.

import (
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/model"
	"github.com/ocannlgen/ocannlgen/pipeline"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// compile runs a model program through expansion, inference, projection
// derivation and lowering, and returns the result shape of each entry.
func compile(t *testing.T, src string) (map[string][]int, error) {
	t.Helper()
	prog, err := program.Parse(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	std, err := program.Parse(model.StdSource())
	if err != nil {
		t.Fatalf("std: %v", err)
	}
	m, err := model.Expand(prog, std)
	if err != nil {
		return nil, err
	}
	inf, err := m.Infer()
	if err != nil {
		return nil, err
	}
	shapes := map[string][]int{}
	for i, e := range inf.Entries {
		g := inf.Graphs[i]
		if _, err := pipeline.CompileGraph(g, pipeline.Options{}); err != nil {
			return nil, err
		}
		var dims []int
		for _, d := range g.Tensors[model.Tensor(g, e.Result)].Shape.Dims() {
			dims = append(dims, d.Size)
		}
		shapes[e.Name] = dims
	}
	return shapes, nil
}

// TestBroadcastLeadingFlank: a pointwise operation between a tensor whose
// output row was produced by a spec row "a, ..o.." (a leading flank before
// a row variable) and a tensor of the same concrete shape must keep that
// shape. The generator instead prepends the flank: 4,3 *. 4,3 gives
// 4,4,3, and 4,3 *. 2,3 gives 4,2,3 instead of a mismatch. The result is
// silently wrong (forward and gradients agree, so a gradient check does not
// see it). It hits the standard conv2d, conv2d_valid, max_pool and
// avg_pool (results "... | oh, ow, ..c..") followed by a pointwise
// operation with a concretely shaped tensor, e.g. conv2d_valid[3](img) *. r.
// With "..o.. => ..o.." or "..o.., a => ..o.., a" the shape is right.
func TestBroadcastLeadingFlank(t *testing.T) {
	cases := []struct {
		name, src string
		want      []int
	}{
		{"identity_einsum", `
entry f:
    input x : 4,3
    input r : 4,3
    let y = x ++ "a, ..o.. => a, ..o.."
    return y *. r
`, []int{4, 3}},
		{"two_flank_axes", `
entry f:
    input x : 4,3
    input r : 4,3
    let y = x ++ "a, b, ..o.. => a, b, ..o.."
    return y *. r
`, []int{4, 3}},
		{"conv2d_valid", `
entry f:
    input img : 2 | 4,4,2
    input r : 2 | 2,2,3
    return conv2d_valid[3](img) *. r
`, []int{2, 2, 2, 3}},
		{"max_pool", `
entry f:
    input img : 2 | 4,4,2
    input r : 2 | 2,2,2
    return max_pool(img) *. r
`, []int{2, 2, 2, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			shapes, err := compile(t, c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := shapes["f"]; !slices.Equal(got, c.want) {
				t.Fatalf("regression: pointwise broadcast against a row with a leading flank before a row variable: result dims %v, want %v", got, c.want)
			}
		})
	}
	t.Run("mismatch_is_an_error", func(t *testing.T) {
		shapes, err := compile(t, `
entry f:
    input x : 4,3
    input r : 2,3
    let y = x ++ "a, ..o.. => a, ..o.."
    return y *. r
`)
		if err == nil {
			t.Fatalf("regression: 4,3 *. 2,3 (after a \"a, ..o..\" einsum) is accepted with result dims %v instead of a dimension mismatch", shapes["f"])
		}
	})
}

// TestPointwiseOperandOfRowVarEinsum: an einsum whose operand slot has a
// row variable shared with a parameter's input row ("a, ..c..; ..c.. -> o")
// must infer the parameter's input row from the operand. It does when the
// operand is a model input, but fails with a hidden-dim error when the
// operand is a pointwise result (tanh x, x + 0, id x) of the same, fully
// known, shape. This makes the standard conv2d and conv2d_valid unusable
// on a pointwise result, including id(x), which the generator's own
// message about padded inputs suggests as the workaround. (This package
// feeds conv2d an einsum x +* "...|h,w,c; h,w,c => ...|h,w,c" img
// instead.)
func TestPointwiseOperandOfRowVarEinsum(t *testing.T) {
	for _, c := range []struct{ name, ret string }{
		{"raw_tanh", `(tanh x) +* "a, ..c..; ..c.. -> o => a, o" ["o"] {k}`},
		{"raw_plus_0", `(x + 0) +* "a, ..c..; ..c.. -> o => a, o" ["o"] {k}`},
		{"raw_input_ok", `x +* "a, ..c..; ..c.. -> o => a, o" ["o"] {k}`},
		{"raw_no_row_var_ok", `(tanh x) +* "a, c; c -> o => a, o" ["o"] {k}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compile(t, `
entry f:
    input x : 4,2
    let y = `+c.ret+`
    dim o = 3
    return y
`)
			if err != nil && strings.Contains(err.Error(), "hidden dimension") {
				t.Fatalf("regression: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range []struct{ name, arg string }{
		{"conv2d_id", "id x"},
		{"conv2d_tanh", "tanh x"},
		{"conv2d_valid_tanh", "tanh x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			layer := "conv2d[3]"
			if strings.Contains(c.name, "valid") {
				layer = "conv2d_valid[3]"
			}
			_, err := compile(t, `
entry f:
    input x : 2 | 4,4,2
    return `+layer+`(`+c.arg+`)
`)
			if err != nil && strings.Contains(err.Error(), "hidden dimension") {
				t.Fatalf("regression: %s(%s): %v", layer, c.arg, err)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestValidConvOffset: docs/language.md allows an offset on a convolution
// ("2*o<+k+1"), but for a valid convolution the offset is not part of the
// size relation n = s(O-1) + 1 + (K-1)d, so the last window always reads
// past the end: on 8 positions with a kernel of 2, O is inferred as 4 and
// position 2*3 + 1 + 1 = 8 is read. Inference accepts it and lowering
// fails with an internal pass-check error. Either the offset should count
// in the relation (n = s(O-1) + 1 + (K-1)d + c) or inference should reject
// it with a stride/offset error.
func TestValidConvOffset(t *testing.T) {
	_, err := compile(t, `
entry f:
    input x : 8
    input w : 2
    return x +* "2*o<+k+1; k => o" w
`)
	if err != nil && strings.Contains(err.Error(), "outside the buffer") {
		t.Fatalf("regression: a valid convolution with an offset reads out of bounds: %v", err)
	}
	// Either a clean shape error or a correct lowering is fine.
	if err != nil {
		t.Logf("rejected: %v", err)
	}
}
