package tiers

import (
	"fmt"
	"math"
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

// TestGatherRowsEveryTier checks the standard embedding's row kernels
// (a lookup copies a row of 512, its gradient adds one): the table's
// gradient has the same bits on every tier and thread count as a plain
// loop adding the rows in order, and the loss (a sum the tiers may
// reassociate) is the plain loops' within float32 rounding.
func TestGatherRowsEveryTier(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 3))
	var ids [16][8]int32
	var r [16][8][512]float32
	var table [64 * 512]float32
	for i := range table {
		table[i] = float32(rng.NormFloat64())
	}
	want := make([]float32, len(table))
	var loss float64
	for b := range ids {
		for s := range ids[b] {
			ids[b][s] = int32(rng.IntN(64))
			for o := range r[b][s] {
				r[b][s][o] = float32(rng.NormFloat64())
				want[int(ids[b][s])*512+o] += r[b][s][o]
				loss += float64(table[int(ids[b][s])*512+o]) * float64(r[b][s][o])
			}
		}
	}
	for _, tf := range append([]tierFlags{goLoops}, asmTiers()...) {
		for _, threads := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d threads", tf.name, threads), func(t *testing.T) {
				defer setTiers(tf)()
				pool := rt.NewPool(threads)
				defer pool.Close()
				m := new(EmbedRows)
				m.Pool = pool
				m.Params.EmbTable = table
				l, err := m.Backward(&ids, &r)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(float64(l)-loss) > 1e-4*math.Max(1, math.Abs(loss)) {
					t.Errorf("loss %v, plain loops %v", l, loss)
				}
				sameBits(t, "emb.table.grad", m.Grads.EmbTable[:], want)
			})
		}
	}
}
