package wino

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConv times Conv on the ResNet-20's three stages (one image),
// reporting the direct convolution's flops per second (2*H*W*C*O*9 per
// image: the equivalent rate, which exceeds the FMA peak when the
// Winograd form pays).
func BenchmarkConv(b *testing.B) {
	for _, s := range []struct{ hw, c int }{{32, 16}, {16, 32}, {8, 64}} {
		g := Geom{H: s.hw, W: s.hw, C: s.c, O: s.c, XRow: (s.hw + 2) * s.c, YRow: s.hw * s.c}
		b.Run(fmt.Sprintf("%dx%dx%d", s.hw, s.hw, s.c), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			x := randSlice(rng, (g.H+2)*g.XRow)
			y := make([]float32, g.H*g.YRow)
			u := randSlice(rng, WeightsLen(g.C, g.O))
			b.ReportAllocs()
			for b.Loop() {
				Conv(&y[0], &x[0], &u[0], g)
			}
			b.ReportMetric(float64(2*g.H*g.W*g.C*g.O*9)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkWeights times the kernel transform of the ResNet-20's last
// stage (64 -> 64 channels).
func BenchmarkWeights(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	w := randSlice(rng, 9*64*64)
	u := make([]float32, WeightsLen(64, 64))
	b.ReportAllocs()
	for b.Loop() {
		Weights(&u[0], &w[0], 64, 64, 9*64, 3*64, 64, 1)
	}
}

// BenchmarkKernelGrad times KernelGrad on the ResNet-20's three stages
// (a batch of 32, one part), reporting the direct sums' flops per second.
func BenchmarkKernelGrad(b *testing.B) {
	for _, s := range []struct{ hw, c int }{{32, 16}, {16, 32}, {8, 64}} {
		g := Geom{N: 32, H: s.hw, W: s.hw, C: s.c, O: s.c, XRow: (s.hw + 2) * s.c, YRow: s.hw * s.c}
		g.XImg, g.YImg = (g.H+2)*g.XRow, g.H*g.YRow
		b.Run(fmt.Sprintf("%dx%dx%d", s.hw, s.hw, s.c), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			x := randSlice(rng, g.N*g.XImg)
			dy := randSlice(rng, g.N*g.YImg)
			dw := make([]float32, 9*g.C*g.O)
			acc := make([]float32, GradAccLen(g.C, g.O))
			b.ReportAllocs()
			for b.Loop() {
				KernelGrad(&dw[0], &x[0], &dy[0], &acc[0], g, 9*g.C, 3*g.C, g.C)
			}
			b.ReportMetric(float64(2*g.N*g.H*g.W*g.C*g.O*9)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
