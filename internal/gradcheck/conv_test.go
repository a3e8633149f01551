package gradcheck

import "testing"

// conv1d is the direct 1-D convolution y[o] = sum_k w[k] x[s*o + d*k -
// left] with zeros outside x. A padded convolution has left = S - (S+1)/2
// with S = 1 + (K-1)*d the dilated kernel span (docs/design.md; OCANNL uses
// the undilated K), a valid one left = 0.
func conv1d(x, w []float64, out, s, d, left int) []float64 {
	y := make([]float64, out)
	for o := range y {
		for k := range w {
			if j := s*o + d*k - left; j >= 0 && j < len(x) {
				y[o] += w[k] * x[j]
			}
		}
	}
	return y
}

// conv1dLoss is sum_o r[o] * conv1d(x + xp, w) for the Conv1D models
// (inputs r, x for padded models; r only for valid ones).
func conv1dLoss(out, s, d, left int, padded bool) func(p map[string][]float64, in [][]float64) float64 {
	return func(p map[string][]float64, in [][]float64) float64 {
		x := append([]float64(nil), p["Xp"]...)
		if padded {
			for i := range x {
				x[i] += in[1][i]
			}
		}
		y := conv1d(x, p["W"], out, s, d, left)
		l := 0.0
		for o := range y {
			l += in[0][o] * y[o]
		}
		return l
	}
}

func TestConv(t *testing.T) {
	runCases(t, []gcase{
		{name: "conv2d_padded", m: new(ConvPadded), want: conv2dLoss("ObjectiveConv2d1", 4, 3, 1, 1, true)},
		{name: "conv2d_padded_stride2", m: new(ConvPaddedStride2), want: conv2dLoss("ObjectiveConv2d1", 4, 3, 2, 1, true)},
		{name: "conv2d_padded_k2_stride2", m: new(ConvPaddedK2Stride2), want: conv2dLoss("ObjectiveConv2d1", 4, 2, 2, 1, true)},
		{name: "conv2d_valid", m: new(ConvValid), want: conv2dLoss("ObjectiveConv2dValid1", 4, 3, 1, 0, false)},
		{name: "conv2d_valid_stride2", m: new(ConvValidStride2), want: conv2dLoss("ObjectiveConv2dValid1", 5, 3, 2, 0, false)},
		{name: "conv2d_stack", m: new(ConvStack)},
		{name: "conv1d_padded", m: new(Conv1DPadded), want: conv1dLoss(6, 1, 1, 1, true)},
		{name: "conv1d_padded_stride2", m: new(Conv1DPaddedStride2), want: conv1dLoss(3, 2, 1, 1, true)},
		{name: "conv1d_padded_dilated", m: new(Conv1DPaddedDilated), want: conv1dLoss(6, 1, 2, 2, true)},
		{name: "conv1d_valid", m: new(Conv1DValid), want: conv1dLoss(4, 1, 1, 0, false)},
		{name: "conv1d_valid_stride2_dilated", m: new(Conv1DValidStride2Dilated), want: conv1dLoss(4, 2, 3, 0, false)},
	})
}

// conv2dLoss is the loss of the Conv* models built on the standard conv2d
// and conv2d_valid layers: batch 2, an n x n image with 2 channels (x *.
// img for padded models, inputs r and x; the parameter img for valid ones,
// input r), a k x k kernel with 3 output channels and a bias, sum r *. y.
func conv2dLoss(layer string, n, k, s, left int, padded bool) func(p map[string][]float64, in [][]float64) float64 {
	const B, IC, OC = 2, 2, 3
	return func(p map[string][]float64, in [][]float64) float64 {
		img := make([]float64, B*n*n*IC)
		for i := range img {
			if padded {
				img[i] = in[1][i] * p["Img"][i%(n*n*IC)]
			} else {
				img[i] = p["Img"][i]
			}
		}
		ker, bias, r := p[layer+"Kernel"], p[layer+"Bias"], in[0]
		out := n / s
		if !padded {
			out = (n-k)/s + 1
		}
		l := 0.0
		for b := range B {
			for oh := range out {
				for ow := range out {
					for oc := range OC {
						y := bias[oc]
						for kh := range k {
							for kw := range k {
								ih, iw := s*oh+kh-left, s*ow+kw-left
								if ih < 0 || ih >= n || iw < 0 || iw >= n {
									continue
								}
								for ic := range IC {
									y += img[((b*n+ih)*n+iw)*IC+ic] * ker[((oc*k+kh)*k+kw)*IC+ic]
								}
							}
						}
						l += r[((b*out+oh)*out+ow)*OC+oc] * y
					}
				}
			}
		}
		return l
	}
}
