package tiers

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestGatherEveryTier checks that the gather and the scatter-add of its
// gradient give the same bits on every tier (Go, AVX2, AVX-512) and on
// 1, 2 and 4 threads, equal to a plain loop adding the contributions of
// each position in order. Ids repeat (512 positions over 64 rows), so
// the order of the additions shows in the bits.
func TestGatherEveryTier(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 2))
	var ids [32][16]int32
	var r [32][16][96]float32
	var table [96 * 64]float32
	for i := range table {
		table[i] = float32(rng.NormFloat64())
	}
	for b := range ids {
		for s := range ids[b] {
			ids[b][s] = int32(rng.IntN(64))
			for o := range r[b][s] {
				r[b][s][o] = float32(rng.NormFloat64())
			}
		}
	}
	want := make([]float32, len(table))
	for b := range ids {
		for s := range ids[b] {
			for o := range 96 {
				want[o*64+int(ids[b][s])] += r[b][s][o]
			}
		}
	}
	for _, tf := range append([]tierFlags{goLoops}, asmTiers()...) {
		for _, threads := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d threads", tf.name, threads), func(t *testing.T) {
				defer setTiers(tf)()
				pool := rt.NewPool(threads)
				defer pool.Close()
				m := new(Embed)
				m.Pool = pool
				m.Params.Table = table
				if _, err := m.Backward(&ids, &r); err != nil {
					t.Fatal(err)
				}
				sameBits(t, "table.grad", m.Grads.Table[:], want)
			})
		}
	}
}
