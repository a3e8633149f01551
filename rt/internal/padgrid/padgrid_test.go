package padgrid

import "testing"

// TestRunsAndIndex: the runs cover every value of the array once, each
// at the copy's index Index gives it, and the copy's other cells are
// the margins; Index refuses a shift out of the copy.
func TestRunsAndIndex(t *testing.T) {
	for _, g := range []Grid{
		{Dims: [4]int{2, 3, 4, 5}, Pad: [4]int{0, 2, 1, 0}},
		{Dims: [4]int{1, 2, 6, 3}, Pad: [4]int{0, 0, 0, 1}},
		{Dims: [4]int{1, 1, 1, 7}, Pad: [4]int{0, 0, 0, 0}},
		{Dims: [4]int{3, 1, 2, 2}, Pad: [4]int{1, 1, 1, 1}},
	} {
		seen := make([]int, g.Len())
		covered := make([]bool, g.Size())
		g.Runs(func(dst, src, n int) {
			for k := range n {
				if covered[src+k] {
					t.Fatalf("%+v: value %d copied twice", g, src+k)
				}
				covered[src+k] = true
				seen[dst+k]++
				if idx, ok := g.Index(src+k, [4]int{}); !ok || idx != dst+k {
					t.Fatalf("%+v: value %d at %d, Index says %d (%v)", g, src+k, dst+k, idx, ok)
				}
			}
		})
		n := 0
		for _, c := range seen {
			n += c
		}
		for i, c := range covered {
			if !c {
				t.Fatalf("%+v: value %d not copied", g, i)
			}
		}
		if n != g.Size() {
			t.Fatalf("%+v: %d cells written, want %d", g, n, g.Size())
		}
		// The last value moved one cell past the last margin leaves the copy.
		far := [4]int{0, 0, 0, g.Pad[3] + 1}
		if _, ok := g.Index(g.Size()-1, far); ok {
			t.Fatalf("%+v: Index accepts a shift out of the copy", g)
		}
		if !g.Valid() || (Grid{Dims: [4]int{-1, 1, 1, 1}}).Valid() {
			t.Fatalf("Valid")
		}
	}
}
