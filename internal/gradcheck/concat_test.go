package gradcheck

import (
	"math"
	"testing"
)

func TestConcat(t *testing.T) {
	runCases(t, []gcase{
		{name: "concat", m: new(Concat),
			want: func(p map[string][]float64, in [][]float64) float64 {
				pq := append(append([]float64(nil), p["P"]...), p["Q"]...)
				qp := append(append([]float64(nil), p["Q"]...), p["P"]...)
				l := 0.0
				for i := range 5 {
					l += in[0][i] * math.Sin(pq[i]) * qp[i]
				}
				return l
			}},
		{name: "concat3", m: new(Concat3)},
		{name: "concat_axis0", m: new(ConcatAxis0)},
		{name: "block_matrix", m: new(BlockMatrix),
			want: func(p map[string][]float64, in [][]float64) float64 {
				// [[p q]; [s t]] with p 2,3, q 2,2, s 1,3, t 1,2: a 3,5 matrix.
				var mat [3][5]float64
				for i := range 2 {
					for j := range 3 {
						mat[i][j] = p["P"][i*3+j]
					}
					for j := range 2 {
						mat[i][3+j] = p["Q"][i*2+j]
					}
				}
				for j := range 3 {
					mat[2][j] = p["S"][j]
				}
				for j := range 2 {
					mat[2][3+j] = p["T"][j]
				}
				l := 0.0
				for i := range 3 {
					for j := range 5 {
						l += in[0][i*5+j] * mat[i][j] * mat[i][j]
					}
				}
				return l
			}},
		{name: "batch_slice", m: new(BatchSlice),
			want: func(p map[string][]float64, in [][]float64) float64 {
				a, b := p["A"], p["B"] // a : 3 | 4, b : 3,2 | 4
				l := 0.0
				for o := range 4 {
					l += in[0][o] * (math.Exp(a[4+o]) + a[8+o]*b[(1*2+0)*4+o])
				}
				return l
			}},
		{name: "slice_prefix", m: new(SlicePrefix)},
		{name: "slice_suffix", m: new(SliceSuffix),
			want: func(p map[string][]float64, in [][]float64) float64 {
				return in[0][0]*p["X"][3]*p["Y"][0] + in[0][1]*p["X"][4]*p["Y"][1]
			}},
		{name: "slice_middle", m: new(SliceMiddle),
			want: func(p map[string][]float64, in [][]float64) float64 {
				l := 0.0
				for i := range 4 {
					l += in[0][i] * math.Exp(p["X"][2+i])
				}
				return l
			}},
		{name: "drop_first", m: new(DropFirst)},
		{name: "pad_blocks", m: new(PadBlocks),
			want: func(p map[string][]float64, in [][]float64) float64 {
				l := 0.0
				for i := range 10 {
					v := 0.0
					if i == 3 || i == 4 {
						v = p["X"][i-3]
					}
					l += in[0][i] * math.Exp(v)
				}
				return l
			}},
		{name: "strided_slice", m: new(StridedSlice),
			want: func(p map[string][]float64, in [][]float64) float64 {
				l := 0.0
				for i := range 3 {
					l += in[0][i] * p["X"][2*i+1] * math.Sin(p["X"][2*i])
				}
				return l
			}},
		{name: "interleave", m: new(Interleave),
			want: func(p map[string][]float64, in [][]float64) float64 {
				l := 0.0
				for i := range 3 {
					l += in[0][2*i]*math.Tanh(p["P"][i]) + in[0][2*i+1]*math.Tanh(p["Q"][i])
				}
				return l
			}},
		{name: "stack", m: new(Stack),
			want: func(p map[string][]float64, in [][]float64) float64 {
				l := 0.0
				for i := range 3 {
					l += in[0][i]*math.Exp(p["P"][i]) + in[0][3+i]*math.Exp(p["Q"][i])
				}
				return l
			}},
		{name: "stack_input", m: new(StackInput)},
		{name: "stack_batch", m: new(StackBatch),
			want: func(p map[string][]float64, in [][]float64) float64 {
				l := 0.0
				for i := range 3 {
					l += in[0][i]*math.Tanh(p["P"][i])*p["Q"][i] + in[0][3+i]*math.Tanh(p["Q"][i])*p["P"][i]
				}
				return l
			}},
	})
}
