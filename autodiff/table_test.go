package autodiff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
)

// TestGradTablePrimitives differentiates every pointwise primitive of the
// op table through autodiff (the table's derivative rule expanded into
// gradient assignments, run by the interpreter) and compares with finite
// differences of the forward program. The program applies a primitive of
// the same arity and the test then puts the table's primitive in its
// place, so every primitive is covered whatever its spelling. A primitive
// whose rule autodiff cannot expand fails here.
func TestGradTablePrimitives(t *testing.T) {
	var cases []gcase
	for _, p := range ops.Prims() {
		src := ""
		gens := map[string]gen{}
		var noGrad []string
		for i := range p.Arity {
			name := fmt.Sprintf("a%d", i)
			src += fmt.Sprintf("input %s : 3,4\n", name)
			d := p.Domain(i)
			gens[name] = func(r *rand.Rand, n int) []float64 {
				out := make([]float64, n)
				for k := range out {
					out[k] = d.Draw(r)
				}
				return out
			}
			if p.Grad[i] == nil {
				noGrad = append(noGrad, name)
			}
		}
		src += [...]string{1: "let o = id a0", 2: "let o = a0 + a1", 3: "let o = fma a0 a1 a2"}[p.Arity]
		prim := p.Name
		cases = append(cases, gcase{name: string(prim), src: weighted(src, "o"), gens: gens, noGrad: noGrad,
			graph: func(g *inference.Graph) {
				for _, op := range g.Ops {
					if g.Tensors[op.LHS].Name == "o" {
						op.Prim = prim
					}
				}
			}})
	}
	runChecks(t, cases)
}
