package gocode

import "testing"

// TestDistinctCells: the check that keeps bf16Fold from folding loops
// whose cells of C overlap (a transposed convolution's input gradient).
func TestDistinctCells(t *testing.T) {
	for _, c := range []struct {
		name string
		axes [][2]int
		want bool
	}{
		// A forward convolution's rows: channels, pixels along w, rows
		// h (a part of 4), batch.
		{"conv rows", [][2]int{{16, 1}, {32, 16}, {4, 512}, {32, 16384}}, true},
		// Its kernel gradient's 3 channels as N2 next to 9 pixels.
		{"n2", [][2]int{{16, 27}, {9, 1}, {3, 9}}, true},
		// The input gradient: 48 columns (kw, c) and the w loop at
		// stride 16 overlap.
		{"overlap", [][2]int{{32, 560}, {48, 1}, {32, 16}}, false},
		{"kh overlaps rows", [][2]int{{32, 560}, {48, 1}, {3, 560}}, false},
		{"extent 1 ignored", [][2]int{{1, 0}, {5, 1}, {1, 3}}, true},
		{"broadcast", [][2]int{{5, 1}, {2, 0}}, false},
		{"negative", [][2]int{{5, 1}, {2, -5}}, false},
	} {
		if got := distinctCells(c.axes); got != c.want {
			t.Errorf("%s: distinctCells(%v) = %v, want %v", c.name, c.axes, got, c.want)
		}
	}
}
