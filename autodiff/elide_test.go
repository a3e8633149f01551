package autodiff

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// elideCases are gradient programs whose first gradient contributions
// include plain copies (additions, biases, residual connections).
var elideCases = []gcase{
	{name: "residual block", src: weighted(`
input x : 6 | 4
let h = {w1} * x + {b1; o=[4]}
let y = h + relu ({w2} * h + {b2; o=[4]})`, "y"), gens: map[string]gen{"x": awayFrom(-1, 1, 0.05, 0)}},
	{name: "two residual blocks", src: weighted(`
input x : 5 | 3
let h0 = {w0} * x + {b0; o=[3]}
let h1 = h0 + tanh ({w1} * h0)
let h2 = h1 + ({w2} * h1 + {b2; o=[3]})`, "h2")},
	{name: "a plus its transpose", src: weighted(`
input a : 3,3
let x = tanh a
let b = x ++ "ij => ji"
let v = x + b`, "v")},
	{name: "sum of sums", src: weighted(`
input a : 2,3
input b : 2,3
input c : 2,3
let d = (a + b) + c
let e = d *. d + a`, "e")},
}

// elideKeep is what ElideCopies must keep in a gradient program: the
// graph's tensors and the leaves' gradients.
func elideKeep(gr *Gradients) map[int]bool {
	keep := map[int]bool{}
	for id, tn := range gr.Graph.Tensors {
		keep[id] = true
		if leafKind(tn.Kind) {
			if g := gr.Of(id); g >= 0 {
				keep[g] = true
			}
		}
	}
	return keep
}

// TestElideCopies: loopir.ElideCopies removes copies from the gradient
// programs of additions and residual connections, the program with the
// copies elided computes the leaves' gradients with the same values as
// the one with them (the loop-IR interpreter, random data), and those
// gradients pass the finite-difference check.
func TestElideCopies(t *testing.T) {
	for _, c := range elideCases {
		t.Run(c.name, func(t *testing.T) {
			g, err := inference.InferSource(strings.TrimSpace(c.src) + "\n")
			if err != nil {
				t.Fatal(err)
			}
			if err := inference.DeriveProjections(g); err != nil {
				t.Fatal(err)
			}
			loss := -1
			for _, n := range g.Named {
				if n.Name == "loss" {
					loss = n.Tensor
				}
			}
			gr, err := Backward(g, loss)
			if err != nil {
				t.Fatal(err)
			}
			keep := elideKeep(gr)
			q, n := loopir.ElideCopies(gr.Program, keep)
			if n == 0 {
				t.Fatalf("no copy elided:\n%s", gr.String())
			}
			if q2, n2 := loopir.ElideCopies(gr.Program, keep); n2 != n || q2.String() != q.String() {
				t.Error("the elision is not deterministic")
			}
			if !strings.Contains(q.String(), "the copy elided") {
				t.Errorf("the elided copy's operation does not say so:\n%s", q.String())
			}
			r := rand.New(rand.NewPCG(seedOf(c.name), 3))
			inputs := map[int][]float64{}
			for id, tn := range g.Tensors {
				if leafKind(tn.Kind) {
					inputs[id] = uniform(-1, 1)(r, tn.Shape.Size())
				}
			}
			a, err := loopir.RunWith[float64](gr.Program, inputs)
			if err != nil {
				t.Fatal(err)
			}
			b, err := loopir.RunWith[float64](q, inputs)
			if err != nil {
				t.Fatal(err)
			}
			for id, tn := range g.Tensors {
				gi := gr.Of(id)
				if !leafKind(tn.Kind) || gi < 0 {
					continue
				}
				va, vb := a.Values(gi), b.Values(gi)
				for k := range va {
					if va[k] != vb[k] {
						t.Errorf("d loss / d %s[%d] = %v with the copies elided, %v with them", tn.Name, k, vb[k], va[k])
						break
					}
				}
			}
			c.mutate = func(gr *Gradients) { gr.Program, _ = loopir.ElideCopies(gr.Program, elideKeep(gr)) }
			gradCheck(t, c)
		})
	}
}
