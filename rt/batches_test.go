package rt

import (
	"slices"
	"testing"
)

// TestBatchesEpochs: every epoch visits each example exactly once, in
// batches of the size asked (the last one short, or dropped with
// dropLast), the epochs' orders differ from each other and from another
// seed's, and the same seed gives the same batches.
func TestBatchesEpochs(t *testing.T) {
	for _, c := range []struct {
		n, size  int
		dropLast bool
		per      int
	}{{10, 3, false, 4}, {10, 3, true, 3}, {12, 4, false, 3}, {12, 4, true, 3}, {5, 8, false, 1}, {1, 1, false, 1}} {
		b, err := NewBatches(c.n, c.size, 42, c.dropLast)
		if err != nil {
			t.Fatal(err)
		}
		if b.PerEpoch() != c.per {
			t.Errorf("%+v: %d batches per epoch, want %d", c, b.PerEpoch(), c.per)
		}
		var sizes []int // the batch sizes of an epoch
		for k := 0; k+c.size <= c.n; k += c.size {
			sizes = append(sizes, c.size)
		}
		if r := c.n % c.size; r > 0 && !c.dropLast {
			sizes = append(sizes, r)
		}
		var epochs [][]int
		for i := range 3 * c.per {
			idx, e := b.Next()
			if e != i/c.per || len(idx) != sizes[i%c.per] {
				t.Errorf("%+v: batch %d: epoch %d, %d examples; want epoch %d, %d", c, i, e, len(idx), i/c.per, sizes[i%c.per])
			}
			if e >= len(epochs) {
				epochs = append(epochs, nil)
			}
			epochs[e] = append(epochs[e], idx...)
		}
		if len(epochs) != 3 {
			t.Fatalf("%+v: %d epochs in %d batches", c, len(epochs), 3*c.per)
		}
		for e, seen := range epochs {
			want := c.n
			if c.dropLast {
				want = c.n / c.size * c.size
			}
			s := slices.Clone(seen)
			slices.Sort(s)
			if len(s) != want || len(slices.Compact(s)) != want || s[0] < 0 || s[len(s)-1] >= c.n {
				t.Errorf("%+v: epoch %d visits %v", c, e, seen)
			}
		}
		if c.n >= 10 && slices.Equal(epochs[0], epochs[1]) {
			t.Errorf("%+v: epochs 0 and 1 in the same order %v", c, epochs[0])
		}
		again, _ := NewBatches(c.n, c.size, 42, c.dropLast)
		other, _ := NewBatches(c.n, c.size, 43, c.dropLast)
		a, _ := again.Next()
		o, _ := other.Next()
		if !slices.Equal(a, epochs[0][:len(a)]) {
			t.Errorf("%+v: the same seed gives %v, then %v", c, epochs[0][:len(a)], a)
		}
		if c.n >= 10 && slices.Equal(a, o) {
			t.Errorf("%+v: seeds 42 and 43 give the same first batch %v", c, a)
		}
	}
}

// TestBatchesSeek: Seek(s) then Next gives the batch the s-th Next gives,
// across epochs, and Next does not allocate.
func TestBatchesSeek(t *testing.T) {
	b, _ := NewBatches(23, 5, 7, false)
	var all [][]int
	for range 17 {
		idx, _ := b.Next()
		all = append(all, slices.Clone(idx))
	}
	for s := range all {
		c, _ := NewBatches(23, 5, 7, false)
		c.Seek(s)
		if idx, _ := c.Next(); !slices.Equal(idx, all[s]) {
			t.Errorf("Seek(%d): %v, want %v", s, idx, all[s])
		}
	}
	if n := testing.AllocsPerRun(100, func() { b.Next() }); n != 0 {
		t.Errorf("Next allocates %v times", n)
	}
}

// TestBatchesShuffleUniform: over many seeds, every example lands in every
// position about equally often (a biased shuffle would not).
func TestBatchesShuffleUniform(t *testing.T) {
	const n, seeds = 6, 6000
	var count [n][n]int
	for s := range seeds {
		b, _ := NewBatches(n, n, uint64(s), true)
		idx, _ := b.Next()
		for pos, k := range idx {
			count[k][pos]++
		}
	}
	for k := range count {
		for pos, c := range count[k] {
			if c < seeds/n*8/10 || c > seeds/n*12/10 {
				t.Errorf("example %d at position %d %d times of %d (want about %d)", k, pos, c, seeds, seeds/n)
			}
		}
	}
}

// TestBatchesErrors and Gather.
func TestBatchesErrors(t *testing.T) {
	for _, c := range []struct {
		n, size int
		drop    bool
	}{{0, 1, false}, {5, 0, false}, {3, 4, true}} {
		if _, err := NewBatches(c.n, c.size, 1, c.drop); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	src := [][2]float32{{0, 0}, {1, 10}, {2, 20}, {3, 30}}
	var dst [3][2]float32
	if got := Gather(dst[:], src, []int{3, 1, 2}); got != 3 || dst != [3][2]float32{{3, 30}, {1, 10}, {2, 20}} {
		t.Errorf("Gather: %d %v", got, dst)
	}
	if n := testing.AllocsPerRun(100, func() { Gather(dst[:], src, []int{0, 1}) }); n != 0 {
		t.Errorf("Gather allocates %v times", n)
	}
}
