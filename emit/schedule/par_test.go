package schedule

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// TestParts pins the part counts of loop extents (Parallel.PartRanges).
func TestParts(t *testing.T) {
	for e, want := range map[int]int{512: 8, 256: 8, 32: 8, 10: 5, 9: 3, 7: 7, 5: 5, 3: 3, 2: 2, 1: 0, 11: 11, 13: 13, 17: 0, 97: 0, 18: 6, 34: 2} {
		if got := Parts(target.Generic().Parallel, e); got != want {
			t.Errorf("Parts(%d) = %d, want %d", e, got, want)
		}
	}
}

// TestGoCost: a transcendental primitive counts TranscendentalCost more.
func TestGoCost(t *testing.T) {
	x := &loopir.Load{Tensor: 0}
	for _, c := range []struct {
		e    loopir.Expr
		want int
	}{
		{x, 1},
		{&loopir.Apply{Prim: "add", Args: []loopir.Expr{x, x}}, 1},
		{&loopir.Apply{Prim: "exp", Args: []loopir.Expr{x}}, 1 + target.Generic().Parallel.TranscendentalCost},
		{&loopir.Apply{Prim: "mul", Args: []loopir.Expr{&loopir.Apply{Prim: "log", Args: []loopir.Expr{x}}, &loopir.Apply{Prim: "tanh", Args: []loopir.Expr{x}}}}, 1 + 2*target.Generic().Parallel.TranscendentalCost},
	} {
		if got := GoCost(target.Generic().Parallel, c.e); got != c.want {
			t.Errorf("GoCost(%v) = %d, want %d", c.e, got, c.want)
		}
	}
}
