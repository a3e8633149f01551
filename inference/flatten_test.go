package inference_test

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
)

// TestFlattenShapes: flatten keeps the batch and input rows and makes the
// output row one axis, the product of the operand's output axes, whether
// they are declared or inferred; a row of one axis stays that axis (with
// its basis), and a known product gives a closed row's one unknown axis.
func TestFlattenShapes(t *testing.T) {
	for _, tc := range []struct{ name, src, tensor, want string }{
		{"image", "input x : 32 | 4, 5, 3\nlet y = flatten x", "y", "32 | 60"},
		{"input axes kept", "input x : 2 | 3 -> 2, 2\nlet y = flatten x", "y", "2 | 3 -> 4"},
		{"one axis keeps its basis", "input x : 2 | 3:rgb\nlet y = flatten x", "y", "2 | 3:rgb"},
		{"inferred operand", "input x : 2 | 4\nlet y = flatten ({w; o=[3; 5]} * x)", "y", "2 | 15"},
		{"linear after flatten", "input x : 2 | 4, 5, 3\nlet y = {w; o=[10]} * flatten x", "w", "60 -> 10"},
		{"twice", "input x : 2,3,4\nlet y = flatten (flatten x)", "y", "24"},
		{"scalar", "let y = flatten 3", "y", "1"},
		// The label c is inferred by division from the product 12 that
		// the einsum's result pins.
		{"unknown axis by division", "input x : 2,3\ninput t : 12\nlet z = x ++ \"a, b => a, b, c\" [\"c\"]\nlet w = (flatten z) ++ \"k => k\"\nlet u = w +* \"k; k => k\" t", "z", "2,3,2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := inference.InferSource(tc.src + "\n")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range g.Named {
				if n.Name == tc.tensor {
					if got := g.Tensors[n.Tensor].Shape.String(); got != tc.want {
						t.Errorf("%s : %s, want %s", tc.tensor, got, tc.want)
					}
					if err := inference.DeriveProjections(g); err != nil {
						t.Errorf("projections: %v", err)
					}
					return
				}
			}
			t.Fatalf("no tensor %s", tc.tensor)
		})
	}
}

// TestFlattenErrors pins the positioned error of each bad use of flatten,
// and its kind.
func TestFlattenErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		kind            inference.ErrorKind
	}{
		{"no output axes", "input x : 2 | 4, 5\nlet y = flatten (x ++ \"... | a, b => ... | \")",
			`2:9: flatten: the operand has no output axes to flatten (in flatten of _y.1)`, inference.KindRankMismatch},
		{"leaf closed to no axes", "leaf l\nlet y = flatten l",
			`2:9: flatten: the operand has no output axes to flatten (in flatten of l)`, inference.KindRankMismatch},
		{"assignment", "input x : 2 | 4, 5\n{ t } =: flatten x",
			`2:1: flatten is not a primitive of an assignment: write let t = flatten EXPR`, inference.KindParse},
		{"no argument", "input x : 2 | 4, 5\nlet y = flatten",
			`2:16: expected an argument after "flatten", found end of line`, inference.KindParse},
		{"reserved", "input flatten : 3",
			`1:7: "flatten" is a reserved word and cannot be used as a tensor name`, inference.KindParse},
		{"product against a size", "input x : 2,3\ninput y : 5\nlet z = flatten x + y",
			`3:19: dimension mismatch: 6 vs 5 (result row [..., 6], operand row [5]) (in pointwise "+" of _z.1, y)`, inference.KindDimMismatch},
		{"known product not divisible", "input x : 2,3\ninput t : 9\nlet z = x ++ \"a, b => a, b, c\" [\"c\"]\nlet w = (flatten z) ++ \"k => k\"\nlet u = w +* \"k; k => k\" t",
			`4:10: flatten: the result's axis has size 9, not a multiple of 6, the product of the known axes of [2, 3, c] (in flatten of z)`, inference.KindTotalElems},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inference.InferSource(tc.src + "\n")
			if err == nil {
				t.Fatal("no error")
			}
			e, ok := inference.AsError(err)
			if !ok {
				t.Fatalf("%T is not an *inference.Error: %v", err, err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if e.Kind != tc.kind {
				t.Errorf("kind %s, want %s", e.Kind, tc.kind)
			}
		})
	}
}
