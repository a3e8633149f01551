package ops

import (
	"strings"
	"testing"
)

// TestCUDARecipesComplete: every primitive and accumulator of the table
// has a CUDA recipe naming each operand, and no recipe names an entry the
// table lacks (a renamed primitive would leave a stale one behind).
func TestCUDARecipesComplete(t *testing.T) {
	for _, p := range Prims() {
		r := p.CUDA()
		if r == "" {
			t.Errorf("primitive %s has no CUDA recipe (ops/cuda.go)", p.Name)
			continue
		}
		for i := 0; i < p.Arity; i++ {
			if !strings.Contains(r, "$"+string(rune('0'+i))) {
				t.Errorf("primitive %s: CUDA recipe %q does not use operand $%d", p.Name, r, i)
			}
		}
	}
	for name := range cudaPrims {
		if Lookup(name) == nil {
			t.Errorf("CUDA recipe for %s, which is not in the table", name)
		}
	}
	for _, a := range Accums() {
		if r := a.CUDA(); !strings.Contains(r, "$0") || !strings.Contains(r, "$1") {
			t.Errorf("accumulator %s: CUDA recipe %q must combine $0 and $1", a.Name, r)
		}
	}
	for name := range cudaAccums {
		if LookupAccum(name) == nil {
			t.Errorf("CUDA recipe for accumulator %s, which is not in the table", name)
		}
	}
}
