package schedule

import (
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// coversOnceRef is CoversOnce by brute force: every cell of the loops'
// product, counted in a map.
func coversOnceRef(loops []*loopir.For, idx []loopir.IndexExpr, bd []int) bool {
	size := 1
	for _, d := range bd {
		size *= d
	}
	n := 1
	for _, l := range loops {
		n *= l.Extent
	}
	if n != size || len(idx) != len(bd) {
		return false
	}
	seen := map[int]bool{}
	vals := map[int]int{}
	ok := true
	var walk func(i int)
	walk = func(i int) {
		if !ok {
			return
		}
		if i == len(loops) {
			off := 0
			for a, x := range idx {
				v := x.Offset
				for _, tm := range x.Terms {
					v += tm.Coeff * vals[tm.Var]
				}
				if v < 0 || v >= bd[a] {
					ok = false
					return
				}
				off = off*bd[a] + v
			}
			if seen[off] {
				ok = false
			}
			seen[off] = true
			return
		}
		for v := range loops[i].Extent {
			vals[loops[i].Var] = v
			walk(i + 1)
		}
	}
	walk(0)
	return ok
}

// TestCoversOnceMatchesBruteForce checks CoversOnce (its permutation
// fast path and its cell walk) against the brute-force count on random
// nests: permutations of the loops, coefficients, offsets, repeated and
// missing variables, unit axes.
func TestCoversOnceMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	trues := 0
	for it := 0; it < 20000; it++ {
		nl := 1 + r.IntN(3)
		var loops []*loopir.For
		for i := range nl {
			loops = append(loops, &loopir.For{Var: i * (1 + r.IntN(2)), Extent: 1 + r.IntN(4)})
		}
		na := 1 + r.IntN(3)
		var idx []loopir.IndexExpr
		var bd []int
		perm := r.Perm(nl)
		for a := range na {
			var x loopir.IndexExpr
			size := 1
			switch r.IntN(5) {
			case 0: // a constant
				x.Offset = r.IntN(2)
				size = 1 + r.IntN(2)
			case 1: // two terms
				l1, l2 := loops[r.IntN(nl)], loops[r.IntN(nl)]
				x.Terms = []loopir.IndexTerm{{Var: l1.Var, Coeff: 1 + r.IntN(2)}, {Var: l2.Var, Coeff: 1}}
				size = 1 + r.IntN(8)
			default: // one loop variable, mostly the permutation's
				l := loops[perm[a%nl]]
				if r.IntN(4) == 0 {
					l = loops[r.IntN(nl)]
				}
				x.Terms = []loopir.IndexTerm{{Var: l.Var, Coeff: 1 + r.IntN(5)/4}}
				x.Offset = r.IntN(6) / 5
				size = l.Extent
				if r.IntN(5) == 0 {
					size += r.IntN(2)
				}
			}
			idx = append(idx, x)
			bd = append(bd, size)
		}
		want := coversOnceRef(loops, idx, bd)
		if got := CoversOnce(loops, idx, bd); got != want {
			t.Fatalf("CoversOnce(%v, %v, %v) = %v, brute force %v", loops, idx, bd, got, want)
		}
		if want {
			trues++
		}
	}
	if trues < 500 {
		t.Fatalf("only %d of the random nests cover their buffer once: the test does not exercise the fast path", trues)
	}
}
