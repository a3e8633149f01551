package gocode

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestSeqAdmits: the chaining rule on hand-made access summaries.
func TestSeqAdmits(t *testing.T) {
	unit := func(parts, extent int, rows map[int]bool, writes ...int) *parUnit {
		u := &parUnit{parts: parts, extent: extent, rows: rows, writes: map[int]bool{}}
		for _, w := range writes {
			u.writes[w] = true
		}
		return u
	}
	// a writes rows of 1 reading rows of 0 and all of parameter 9.
	a := unit(8, 256, map[int]bool{0: true, 1: true, 9: false}, 1)
	cases := []struct {
		name string
		u    *parUnit
		want bool
	}{
		{"reads the rows a wrote", unit(8, 256, map[int]bool{1: true, 2: true}, 2), true},
		{"reads the parameter a reads, anyhow", unit(8, 256, map[int]bool{9: false, 3: true}, 3), true},
		{"reads what a wrote across rows", unit(8, 256, map[int]bool{1: false, 2: true}, 2), false},
		{"writes what a reads across rows", unit(8, 256, map[int]bool{9: true, 2: true}, 9), false},
		{"writes what a reads by rows", unit(8, 256, map[int]bool{0: true}, 0), true},
		{"other parts", unit(4, 256, map[int]bool{2: true}, 2), false},
		{"other extent", unit(8, 512, map[int]bool{2: true}, 2), false},
		{"partial sums into what a reads", unit(8, 256, map[int]bool{1: true, 0: false}, 0), false},
	}
	for _, c := range cases {
		var sq seqChain
		sq.add(a, 0, nil)
		if got := sq.admits(c.u); got != c.want {
			t.Errorf("%s: admits = %v, want %v", c.name, got, c.want)
		}
	}
	var sq seqChain
	if sq.admits(a) {
		t.Error("an empty chain admits a nest (a chain starts with add)")
	}
	for range rt.MaxSeq {
		sq.add(unit(8, 256, map[int]bool{0: true}), 0, nil)
	}
	if sq.admits(unit(8, 256, map[int]bool{0: true})) {
		t.Errorf("a chain of %d nests admits another", rt.MaxSeq)
	}
	// A nest whose pre-fill writes an array an earlier nest touches would
	// move the fill before that nest's access.
	pre := unit(8, 256, map[int]bool{1: true, 7: true}, 7)
	pre.preWrites = []int{1}
	sq = seqChain{}
	sq.add(a, 0, nil)
	if sq.admits(pre) {
		t.Error("admits a nest whose pre-fill writes what the chain wrote")
	}
	pre.preWrites = []int{7}
	if !sq.admits(pre) {
		t.Error("refuses a nest whose pre-fill writes only what the chain does not touch")
	}
	// A later nest is checked against every earlier one, not only the last.
	sq = seqChain{}
	sq.add(a, 0, nil)
	sq.add(unit(8, 256, map[int]bool{5: true}, 5), 0, nil)
	if sq.admits(unit(8, 256, map[int]bool{1: false}, 6)) {
		t.Error("admits a nest reading across rows what the first nest wrote")
	}
}
