package rowscheck

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ocannlgen/ocannlgen/model"
)

// near fails t unless got and want agree cell by cell to 1e-12, relative
// to the larger of 1 and |want|.
func near(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d cells, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= 1e-12*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s[%d] = %.17g, want %.17g (diff %.3g)", what, i, got[i], want[i], d)
		}
	}
}

// grads8 flattens a parameter set of the mlp2[6, 5] models.
func grads8(p *ocannlRows8Params) []float64 {
	return slices.Concat(p.NetW1[:], p.NetB1[:], p.NetW2[:], p.NetB2[:], p.NetW3[:], p.NetB3[:])
}

// TestRows8MatchRowByRow checks Rows8 (blocks of 8, 4 and 2 rows, then
// single rows) for every n in 1..8: its loss, Backward's loss and
// gradient are the mean over the first n rows of the one-row model's
// (Row1), and its predictions (the model's and a runner's) are Row1's.
func TestRows8MatchRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, one := new(Rows8), new(Row1)
	m.Init(5)
	// Params away from the init, so that no gradient is trivially zero.
	for _, p := range [][]float64{m.Params.NetB1[:], m.Params.NetB2[:], m.Params.NetB3[:]} {
		for i := range p {
			p[i] = rng.Float64() - 0.5
		}
	}
	one.Params = ocannlRow1Params(m.Params)
	run := m.NewRunner()
	var x [8][3]float64
	var y [8][2]float64
	for r := range x {
		for c := range x[r] {
			x[r][c] = 2*rng.Float64() - 1
		}
		y[r][rng.IntN(2)] = 1
	}
	if got := model.RowBlocks(8); !slices.Equal(got, []int{8, 4, 2}) {
		t.Fatalf("RowBlocks(8) = %v, want [8 4 2]", got)
	}
	for n := 1; n <= 8; n++ {
		var wantLoss float64
		wantGrads := make([]float64, len(grads8(&m.Params)))
		for r := range n {
			l := one.Backward((*[1][3]float64)(x[r:r+1]), (*[1][2]float64)(y[r:r+1]))
			wantLoss += l / float64(n)
			for i, g := range grads8((*ocannlRows8Params)(&one.Grads)) {
				wantGrads[i] += g / float64(n)
			}
		}
		l, err := m.TrainLoss(&x, &y, n)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "TrainLoss", []float64{l}, []float64{wantLoss})
		lb, err := m.Backward(&x, &y, n)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "Backward's loss", []float64{lb}, []float64{wantLoss})
		near(t, "gradient", grads8(&m.Grads), wantGrads)
		p, err := m.Predict(&x, n)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := run.Predict(&x, n)
		if err != nil {
			t.Fatal(err)
		}
		for r := range n {
			want := one.Predict((*[1][3]float64)(x[r : r+1]))[0][:]
			near(t, "prediction", p[r][:], want)
			near(t, "runner's prediction", rp[r][:], want)
		}
	}
}

// TestRows8FullBlockIsFixed checks that at n = 8 Rows8 runs the kernels
// of all 8 rows: its loss, gradient and TrainStep are those of the
// fixed-batch model Fixed8, bit for bit, step after step (with a
// one-row kernel, or a mean of block means, they would differ in the last
// bits).
func TestRows8FullBlockIsFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, f := new(Rows8), new(Fixed8)
	m.Init(7)
	f.Init(7)
	var x [8][3]float64
	var y [8][2]float64
	for r := range x {
		for c := range x[r] {
			x[r][c] = 2*rng.Float64() - 1
		}
		y[r][rng.IntN(2)] = 1
	}
	for step := range 5 {
		if l, err := m.TrainLoss(&x, &y, 8); err != nil || l != f.TrainLoss(&x, &y) {
			t.Fatalf("step %d: TrainLoss (%.17g, %v), the fixed batch's %.17g", step, l, err, f.TrainLoss(&x, &y))
		}
		l, err := m.TrainStep(&x, &y, 8)
		if err != nil {
			t.Fatal(err)
		}
		lf := f.TrainStep(&x, &y)
		if l != lf || !slices.Equal(grads8(&m.Grads), grads8((*ocannlRows8Params)(&f.Grads))) ||
			!slices.Equal(grads8(&m.Params), grads8((*ocannlRows8Params)(&f.Params))) {
			t.Fatalf("step %d: loss %.17g, the fixed batch's %.17g; gradients or parameters differ", step, l, lf)
		}
	}
}

// TestSeq100MatchRowByRow checks Seq100 (a sum over rows and positions;
// blocks of 100, 50, 25, 12, 6 and 3 rows, then up to 2 single rows) for
// every n in 1..100: its loss and gradient are the sums of the one-row
// model's (SeqRow1) over the first n rows, and its predictions are that
// model's.
func TestSeq100MatchRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, one := new(Seq100), new(SeqRow1)
	m.Init(9)
	one.Params = ocannlSeqRow1Params(m.Params)
	var x [100][2][3]float64
	var y [100][2][2]float64
	for r := range x {
		for p := range x[r] {
			for c := range x[r][p] {
				x[r][p][c] = 2*rng.Float64() - 1
			}
			y[r][p][rng.IntN(2)] = 1
		}
	}
	flat := func(p *ocannlSeq100Params) []float64 {
		return slices.Concat(p.NetW1[:], p.NetB1[:], p.NetW2[:], p.NetB2[:], p.NetW3[:], p.NetB3[:])
	}
	if got := model.RowBlocks(100); !slices.Equal(got, []int{100, 50, 25, 12, 6, 3}) {
		t.Fatalf("RowBlocks(100) = %v, want [100 50 25 12 6 3]", got)
	}
	var rowLoss []float64
	var rowGrads [][]float64
	for r := range 100 {
		rowLoss = append(rowLoss, one.Backward((*[1][2][3]float64)(x[r:r+1]), (*[1][2][2]float64)(y[r:r+1])))
		rowGrads = append(rowGrads, flat((*ocannlSeq100Params)(&one.Grads)))
	}
	for n := 1; n <= 100; n++ {
		var wantLoss float64
		wantGrads := make([]float64, len(rowGrads[0]))
		for r := range n {
			wantLoss += rowLoss[r]
			for i, g := range rowGrads[r] {
				wantGrads[i] += g
			}
		}
		l, err := m.TrainLoss(&x, &y, n)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "TrainLoss", []float64{l}, []float64{wantLoss})
		lb, err := m.Backward(&x, &y, n)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "Backward's loss", []float64{lb}, []float64{wantLoss})
		near(t, "gradient", flat(&m.Grads), wantGrads)
		p, err := m.Predict(&x, n)
		if err != nil {
			t.Fatal(err)
		}
		for r := range n {
			want := one.Predict((*[1][2][3]float64)(x[r : r+1]))[0]
			near(t, "prediction", slices.Concat(p[r][0][:], p[r][1][:]), slices.Concat(want[0][:], want[1][:]))
		}
	}
	if a := testing.AllocsPerRun(10, func() { _, _ = m.Backward(&x, &y, 99) }); a != 0 {
		t.Errorf("Backward: %v allocs/op, want 0", a)
	}
}
