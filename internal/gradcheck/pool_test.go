package gradcheck

import (
	"math"
	"testing"
)

// maxPoolLoss is sum r *. max_pool[window, stride](img) for img : 2 | n, n, 2.
func maxPoolLoss(n, window, stride int) func(p map[string][]float64, in [][]float64) float64 {
	const B, C = 2, 2
	return func(p map[string][]float64, in [][]float64) float64 {
		img, r := p["Img"], in[0]
		out := (n-window)/stride + 1
		l := 0.0
		for b := range B {
			for oh := range out {
				for ow := range out {
					for c := range C {
						y := math.Inf(-1)
						for wh := range window {
							for ww := range window {
								y = math.Max(y, img[((b*n+stride*oh+wh)*n+stride*ow+ww)*C+c])
							}
						}
						l += r[((b*out+oh)*out+ow)*C+c] * y
					}
				}
			}
		}
		return l
	}
}

func TestPool(t *testing.T) {
	runCases(t, []gcase{
		{name: "max_pool", m: new(MaxPool), want: maxPoolLoss(4, 2, 2)},
		{name: "max_pool_overlap", m: new(MaxPoolOverlap), want: maxPoolLoss(4, 3, 1)},
		{name: "max_pool_conv", m: new(MaxPoolConv)},
		{name: "avg_pool", m: new(AvgPool)},
		{name: "reduce_max", m: new(ReduceMax),
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, r := p["A"], in[0]
				l := 0.0
				for i := range 3 {
					m := slicesMax(a[i*4 : i*4+4])
					for j := range 4 {
						l += r[i*4+j] * m * a[i*4+j]
					}
				}
				return l
			}},
		{name: "reduce_max_all", m: new(ReduceMaxAll)},
		{name: "tropical_same", m: new(TropicalSame)},
		{name: "tropical_matmul", m: new(TropicalMatmul),
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, b, r := p["A"], p["B"], in[0]
				l := 0.0
				for i := range 3 {
					for k := range 2 {
						m := math.Inf(-1)
						for j := range 4 {
							m = math.Max(m, a[i*4+j]+b[j*2+k])
						}
						l += r[i*2+k] * m
					}
				}
				return l
			}},
		{name: "sum_pool_label_only", m: new(SumPoolLabelOnly),
			want: func(p map[string][]float64, in [][]float64) float64 {
				x, r := p["Xp"], in[0]
				l := 0.0
				for o := range 3 {
					l += r[o] * (x[2*o] + x[2*o+1])
				}
				return l
			}},
	})
}

func slicesMax(s []float64) float64 {
	m := math.Inf(-1)
	for _, x := range s {
		m = math.Max(m, x)
	}
	return m
}
