package gradcheck

import (
	"math"
	"testing"
)

func TestLinalg(t *testing.T) {
	runCases(t, []gcase{
		{name: "matmul_compose", m: new(MatmulCompose),
			// w : 3 -> 4, memory [4][3]; x : 2 | 3; r : 2 | 4.
			want: func(p map[string][]float64, in [][]float64) float64 {
				r, x, w := in[0], in[1], p["W"]
				s := 0.0
				for b := range 2 {
					for o := range 4 {
						y := 0.0
						for i := range 3 {
							y += w[o*3+i] * x[b*3+i]
						}
						s += y * r[b*4+o]
					}
				}
				return s
			}},
		{name: "matmul_params", m: new(MatmulParams)},
		{name: "matmul_chain", m: new(MatmulChain)},
		{name: "einsum_matmul", m: new(EinsumMatmul),
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, b, r := p["A"], p["B"], in[0]
				s := 0.0
				for i := range 2 {
					for k := range 4 {
						y := 0.0
						for j := range 3 {
							y += a[i*3+j] * b[j*4+k]
						}
						s += y * r[i*4+k]
					}
				}
				return s
			}},
		{name: "einsum_batched", m: new(EinsumBatched)},
		{name: "einsum_transpose", m: new(EinsumTranspose)},
		{name: "einsum_row_var", m: new(EinsumRowVar)},
		{name: "einsum_dot", m: new(EinsumDot)},
		{name: "einsum_diag", m: new(EinsumDiag),
			// sum_i r_i (a_ii + sum_j diag(b)_ij) = sum_i r_i (a_ii + b_i).
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, b, r := p["A"], p["B"], in[0]
				s := 0.0
				for i := range 3 {
					s += r[i] * (a[i*3+i] + b[i])
				}
				return s
			}},
		{name: "outer_sum", m: new(OuterSum)},
		{name: "unary_einsum", m: new(UnaryEinsum)},
		{name: "fixed_slice", m: new(FixedSlice),
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, r := p["A"], in[0]
				s := 0.0
				for i := range 3 {
					s += r[i] * (math.Sin(a[i*4+1]) + a[i*4+3])
				}
				return s
			}},
		{name: "fixed_scatter", m: new(FixedScatter),
			// The scattered tensor is 3,3 with only column 2 written; the
			// other cells hold 0, so exp gives 1 there.
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, r := p["A"], in[0]
				s := 0.0
				for i := range 3 {
					for j := range 3 {
						v := 0.0
						if j == 2 {
							v = a[i]
						}
						s += r[i*3+j] * math.Exp(v)
					}
				}
				return s
			}},
		{name: "fixed_einsum", m: new(FixedEinsum),
			// a : 4,3, b : 2,4,5: y_j = sum_i a[i,2] b[1,i,j].
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, b, r := p["A"], p["B"], in[0]
				s := 0.0
				for j := range 5 {
					y := 0.0
					for i := range 4 {
						y += a[i*3+2] * b[20+i*5+j]
					}
					s += r[j] * y
				}
				return s
			}},
		{name: "fixed_input_axis", m: new(FixedInputAxis)},
		{name: "broadcast_bias", m: new(BroadcastBias)},
		{name: "broadcast_scalar", m: new(BroadcastScalar),
			want: func(p map[string][]float64, in [][]float64) float64 {
				sc, a, r := p["S"][0], p["A"], in[0]
				s := 0.0
				for k := range 12 {
					s += r[k] * (sc*a[k] + a[k]*sc*sc)
				}
				return s
			}},
		{name: "broadcast_row_col", m: new(BroadcastRowCol),
			want: func(p map[string][]float64, in [][]float64) float64 {
				u, v, r := p["U"], p["V"], in[0]
				s := 0.0
				for i := range 3 {
					for j := range 4 {
						s += r[i*4+j] * math.Sin(u[i]+v[j]) * v[j]
					}
				}
				return s
			}},
		{name: "broadcast_const", m: new(BroadcastConst)},
	})
}
