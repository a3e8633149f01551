package rowscheck

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// benchData is a batch of 256 rows for BenchRows and BenchFixed.
func benchData() (*[256][32]float32, *[256][10]float32) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := new([256][32]float32), new([256][10]float32)
	for r := range x {
		for c := range x[r] {
			x[r][c] = 2*rng.Float32() - 1
		}
		y[r][rng.IntN(10)] = 1
	}
	return x, y
}

// BenchmarkTrainStep compares the TrainStep of a loss with run-time rows
// (<=256) at several n with the fixed-batch model's on 256 rows, both on
// one thread (docs/benchmarks.md, "Run-time rows"): n = 256 runs the
// block of 256 rows, n = 128 the block of 128, n = 255 the blocks of
// 128, 64, 32, 16 and 8 and 7 single rows.
func BenchmarkTrainStep(b *testing.B) {
	x, y := benchData()
	b.Run("fixed256", func(b *testing.B) {
		m := new(BenchFixed)
		m.Init(1)
		m.Pool = rt.NewPool(1)
		b.ReportAllocs()
		for b.Loop() {
			m.TrainStep(x, y)
		}
	})
	for _, n := range []int{256, 128, 255, 64, 1} {
		b.Run(fmt.Sprintf("rows_n%d", n), func(b *testing.B) {
			m := new(BenchRows)
			m.Init(1)
			m.Pool = rt.NewPool(1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.TrainStep(x, y, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
