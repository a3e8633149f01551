package main

import "math"

// refNet is an independent float64 implementation of the network of
// model.go, for checking the generated code. Its parameters are flat
// copies of the generated ones, in the same memory order (batch, output,
// input): the kernels are [out][kh][kw][in], head.w is
// [class][row][column][channel].
type refNet struct {
	k1, b1, k2, b2, w, b []float64
}

// newRefNet copies the parameters of m.
func newRefNet(m *CNN) *refNet {
	cp := func(s []float32) []float64 {
		d := make([]float64, len(s))
		for i, v := range s {
			d[i] = float64(v)
		}
		return d
	}
	p := &m.Params
	return &refNet{
		k1: cp(p.NetConv1Kernel[:]), b1: cp(p.NetConv1Bias[:]),
		k2: cp(p.NetConv2Kernel[:]), b2: cp(p.NetConv2Bias[:]),
		w: cp(p.NetHeadW[:]), b: cp(p.NetHeadB[:]),
	}
}

// tensors lists the parameters in the order of ParamTensors.
func (r *refNet) tensors() [][]float64 {
	return [][]float64{r.k1, r.b1, r.k2, r.b2, r.w, r.b}
}

// logits computes the class scores of one image.
func (r *refNet) logits(img *image) [classes]float64 {
	// conv1: valid 3x3, 1 -> 8 channels, then relu: 10x10x8.
	var a1 [10][10][8]float64
	for y := range 10 {
		for x := range 10 {
			for o := range 8 {
				s := r.b1[o]
				for ky := range 3 {
					for kx := range 3 {
						s += float64(img[y+ky][x+kx][0]) * r.k1[(o*3+ky)*3+kx]
					}
				}
				a1[y][x][o] = max(s, 0)
			}
		}
	}
	// max_pool: 2x2, stride 2: 5x5x8.
	var p1 [5][5][8]float64
	for y := range 5 {
		for x := range 5 {
			for c := range 8 {
				p1[y][x][c] = max(a1[2*y][2*x][c], a1[2*y][2*x+1][c], a1[2*y+1][2*x][c], a1[2*y+1][2*x+1][c])
			}
		}
	}
	// conv2: padded ("same") 3x3, 8 -> 16 channels, then relu: 5x5x16.
	var a2 [5][5][16]float64
	for y := range 5 {
		for x := range 5 {
			for o := range 16 {
				s := r.b2[o]
				for ky := range 3 {
					for kx := range 3 {
						iy, ix := y+ky-1, x+kx-1
						if iy < 0 || iy >= 5 || ix < 0 || ix >= 5 {
							continue
						}
						for c := range 8 {
							s += p1[iy][ix][c] * r.k2[((o*3+ky)*3+kx)*8+c]
						}
					}
				}
				a2[y][x][o] = max(s, 0)
			}
		}
	}
	// head: linear 5x5x16 -> classes.
	var out [classes]float64
	for c := range classes {
		s := r.b[c]
		for y := range 5 {
			for x := range 5 {
				for ch := range 16 {
					s += a2[y][x][ch] * r.w[((c*5+y)*5+x)*16+ch]
				}
			}
		}
		out[c] = s
	}
	return out
}

// loss is the train entry's loss: the softmax cross-entropy of the logits
// against the one-hot labels, averaged over the batch.
func (r *refNet) loss(x *[batch]image, y *[batch][classes]float32) float64 {
	total := 0.0
	for i := range x {
		l := r.logits(&x[i])
		mx := math.Inf(-1)
		for _, v := range l {
			mx = max(mx, v)
		}
		s := 0.0
		for _, v := range l {
			s += math.Exp(v - mx)
		}
		for c, v := range l {
			total -= float64(y[i][c]) * (v - mx - math.Log(s))
		}
	}
	return total / batch
}
