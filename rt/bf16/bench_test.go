package bf16

import (
	"fmt"
	"testing"
)

// BenchmarkGemm times the decoder's MLP product shape (1024x1536x384
// and its layouts) in each tier (GFLOP/s reported).
func BenchmarkGemm(b *testing.B) {
	m, n, k := 1024, 1536, 384
	for _, l := range []struct {
		name string
		s    Shape
	}{
		{"NN", Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: k, AK: 1, BK: n, BN: 1}},
		{"NT", Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: k, AK: 1, BK: 1, BN: k}},
		{"TN", Shape{M: m, N: n, K: k, CM: n, CN: 1, AM: 1, AK: m, BK: n, BN: 1}},
	} {
		_, an, bn := l.s.spans()
		a, bb, c := make([]float32, an), make([]float32, bn), make([]float32, m*n)
		for i := range a {
			a[i] = float32(i%7) * 0.1
		}
		for i := range bb {
			bb[i] = float32(i%5) * 0.1
		}
		for _, t := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(t) || t == Go && l.name != "NN" {
				continue
			}
			b.Run(fmt.Sprintf("%s/%v", l.name, t), func(b *testing.B) {
				for b.Loop() {
					GemmTier(t, &c[0], &a[0], &bb[0], l.s)
				}
				b.ReportMetric(float64(l.s.Flops())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
