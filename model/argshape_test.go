package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/spec"
)

// inferError expands and infers src, which must fail in inference, and
// returns the entry's inference error.
func inferError(t *testing.T, src string) *inference.Error {
	t.Helper()
	m, err := expand(t, src)
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	_, err = m.Infer()
	var ee *EntryError
	if !errors.As(err, &ee) {
		t.Fatalf("want an *EntryError, got %v (%T)", err, err)
	}
	ie, ok := inference.AsError(ee.Err)
	if !ok {
		t.Fatalf("want an inference error, got %v", ee.Err)
	}
	return ie
}

// TestArgShapeFlatImages: a convolution or pooling layer applied to flat
// images is a rank mismatch at the application (the layer or instance
// name), saying what the layer wants, from the spec of the operation that
// consumes its argument, and what the argument has, without solver
// variables or the inlined spec.
func TestArgShapeFlatImages(t *testing.T) {
	const wants = " wants its argument as ... | oh, ow, ..%s.. (at least 2 output axes), but images has shape 32 | 64 (1 output axis); declare input images with at least 2 output axes"
	for _, tc := range []struct {
		name, model, apply string
		col                int
		who, row           string
	}{
		{"conv2d", "let c1 = conv2d[16]\n", "c1(images)", 12, "conv2d c1", "ic"},
		{"conv2d_valid", "let c1 = conv2d_valid[16]\n", "c1(images)", 12, "conv2d_valid c1", "ic"},
		{"anonymous conv2d", "", "relu conv2d[16, k=5](images)", 17, "conv2d", "ic"},
		{"max_pool", "let p = max_pool\n", "p(images)", 12, "max_pool p", "c"},
		{"avg_pool", "", "avg_pool[3, 1](images)", 12, "avg_pool", "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.model + "entry predict:\n    input images : 32 | 64\n    return " + tc.apply + "\n"
			line := 3 + strings.Count(tc.model, "\n")
			e := inferError(t, src)
			want := tc.who + strings.ReplaceAll(wants, "%s", tc.row)
			if e.Kind != inference.KindRankMismatch || e.Pos != (spec.Pos{Line: line, Col: tc.col}) || e.Detail() != want {
				t.Errorf("got %s at %v: %s\nwant %s at %d:%d: %s", e.Kind, e.Pos, e.Detail(), inference.KindRankMismatch, line, tc.col, want)
			}
		})
	}
}

// TestArgShapeForms: a loss (the argument's error comes before the loss's
// other uses), an argument computed at the call, a layer of two
// arguments, a layer of the model (citing the operation in its body), a
// standard layer applied in a model layer (citing the outer
// application), and an exact slot with too many axes.
func TestArgShapeForms(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		pos       spec.Pos
		want      string
	}{
		{"loss", "let c1 = conv2d[16]\nloss train:\n    input images : 32 | 64\n    input labels : 32 | 10\n    return cross_entropy(c1(images), labels)\n",
			spec.Pos{Line: 5, Col: 26},
			"conv2d c1 wants its argument as ... | oh, ow, ..ic.. (at least 2 output axes), but images has shape 32 | 64 (1 output axis); declare input images with at least 2 output axes"},
		{"computed argument", "entry predict:\n    input images : 32 | 64\n    return conv2d[16](relu images)\n",
			spec.Pos{Line: 3, Col: 12},
			"conv2d wants its argument as ... | oh, ow, ..ic.. (at least 2 output axes), but the argument (relu images) has shape 32 | 64 (1 output axis)"},
		{"two arguments", "layer pair(a, x) = a + (x ++ \"b | i, j => b | 0\")\nentry predict:\n    input p : 4 | 2\n    input q : 4 | 2\n    return pair(p, q)\n",
			spec.Pos{Line: 5, Col: 12},
			"pair wants its argument x as b | i, j (2 output axes, for the operation at 1:27), but q has shape 4 | 2 (1 output axis); declare input q with 2 output axes"},
		{"model layer", "layer sum2(x) = x ++ \"b | i, j => b | 0\"\nentry predict:\n    input p : 4 | 2, 3, 5\n    return sum2(p)\n",
			spec.Pos{Line: 4, Col: 12},
			"sum2 wants its argument as b | i, j (2 output axes, for the operation at 1:19), but p has shape 4 | 2,3,5 (3 output axes); declare input p with 2 output axes"},
		{"nested", "layer block[c](x) :\n    let h = relu x\n    return conv2d[c](h)\nlet b1 = block[8]\nentry predict:\n    input images : 32 | 64\n    return b1(images)\n",
			spec.Pos{Line: 3, Col: 12},
			"conv2d wants its argument as ... | oh, ow, ..ic.. (at least 2 output axes), but h (from the argument of block b1 applied at 7:12) has shape 32 | 64 (1 output axis)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := inferError(t, tc.src)
			if e.Kind != inference.KindRankMismatch || e.Pos != tc.pos || e.Detail() != tc.want {
				t.Errorf("got %s at %v: %s\nwant rank-mismatch at %v: %s", e.Kind, e.Pos, e.Detail(), tc.pos, tc.want)
			}
		})
	}
}

// TestArgShapeOtherErrors: mismatches that are not an argument with a
// number of axes its layer's spec forbids keep inference's message: a
// convolution over images with the wrong number of channels for the
// kernel another application fixed, a size mismatch after the layer, and
// a rank mismatch between two of the layer's own tensors.
func TestArgShapeOtherErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"channels", "let c1 = conv2d[4]\nentry predict:\n    input a : 2 | 8, 8, 3\n    input b : 2 | 8, 8, 3, 2\n    return c1(a) + c1(b)\n", "number of axes mismatch"},
		{"after the layer", "let c1 = conv2d[16]\nloss train:\n    input images : 32 | 8, 8\n    input labels : 32 | 10\n    return cross_entropy(c1(images), labels)\n", "dimension mismatch: 10 vs 16"},
		{"inside the layer", "layer bad(x) :\n    let y = x ++ \"b | i => b | i, 0\"\n    return y ++ \"b | i => b | 0\"\nentry predict:\n    input p : 4 | 2\n    return bad(p)\n", "number of axes mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := inferError(t, tc.src)
			if !strings.Contains(e.Detail(), tc.want) || strings.Contains(e.Detail(), "wants its argument") {
				t.Errorf("got %s at %v: %s\nwant inference's message containing %q", e.Kind, e.Pos, e.Detail(), tc.want)
			}
		})
	}
}

// TestArgShapeFits: conv2d over images with more than three output axes
// (the row variable ..ic.. takes the channel axes) or exactly two (no
// channel axis) infers.
func TestArgShapeFits(t *testing.T) {
	for in, kernel := range map[string]string{"32 | 8, 8, 3, 2": "3,3,3,2 -> 16", "32 | 8, 8": "3,3 -> 16"} {
		m, err := expand(t, "let c1 = conv2d[16]\nentry predict:\n    input images : "+in+"\n    return c1(images)\n")
		if err != nil {
			t.Fatal(err)
		}
		inf, err := m.Infer()
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := inf.Shapes["c1.kernel"].String(); got != kernel {
			t.Errorf("%s: kernel %s, want %s", in, got, kernel)
		}
	}
}
