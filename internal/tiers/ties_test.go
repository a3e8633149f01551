package tiers

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestMaxTiesEveryTier runs the backward passes of a 2x2 max-pool
// (Pool), an einmax along rows (RowMax) and a max-plus product
// (Tropical) on inputs drawn from three levels, so that most windows,
// rows and products tie, in the Go loops and every assembly tier of this
// machine, on 1, 2 and 4 threads, and checks every gradient cell against
// PyTorch's max_pool2d rule written as plain loops: the first maximal
// cell in iteration order (row-major within a window) takes the whole
// gradient. The weights are small integers, so every expected gradient
// is exact in float32 and the comparison is bit for bit.
func TestMaxTiesEveryTier(t *testing.T) {
	tiers := append([]tierFlags{goLoops}, asmTiers()...)
	rng := rand.New(rand.NewPCG(27, 1))
	lv := func(d []float32) {
		for i := range d {
			d[i] = float32(rng.IntN(3))
		}
	}
	wt := func(d []float32) {
		for i := range d {
			d[i] = float32(1 + rng.IntN(7))
		}
	}
	var img [4096]float32
	var pr [2][8][8][8]float32
	lv(img[:])
	wt(flat32(&pr))
	var x [640]float32
	var xr [16][1]float32
	lv(x[:])
	wt(flat32(&xr))
	var a [60]float32
	var b [80]float32
	var tr [6][8]float32
	lv(a[:])
	lv(b[:])
	wt(flat32(&tr))

	// The references.
	wantImg := poolRef(img[:], flat32(&pr), 2, 16, 16, 8)
	var big [262144]float32
	var br [16][16][16][16]float32
	lv(big[:])
	wt(flat32(&br))
	wantBig := poolRef(big[:], flat32(&br), 16, 32, 32, 16)
	wantX := make([]float32, len(x))
	for i := range 16 {
		best := 40 * i
		for j := 1; j < 40; j++ {
			if x[40*i+j] > x[best] {
				best = 40*i + j
			}
		}
		wantX[best] += xr[i][0]
	}
	wantA, wantB := make([]float32, len(a)), make([]float32, len(b))
	for i := range 6 {
		for k := range 8 {
			best := 0
			for j := 1; j < 10; j++ {
				if a[10*i+j]+b[8*j+k] > a[10*i+best]+b[8*best+k] {
					best = j
				}
			}
			wantA[10*i+best] += tr[i][k]
			wantB[8*best+k] += tr[i][k]
		}
	}
	ties := 0
	for i := range 16 {
		n := 0
		for j := range 40 {
			if x[40*i+j] == 2 {
				n++
			}
		}
		if n > 1 {
			ties++
		}
	}
	if ties == 0 {
		t.Fatal("the rows have no ties: the test would be vacuous")
	}

	for _, tf := range tiers {
		for _, threads := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d threads", tf.name, threads), func(t *testing.T) {
				defer setTiers(tf)()
				pool := rt.NewPool(threads)
				defer pool.Close()

				p := new(Pool)
				p.Pool = pool
				p.Params.Img = img
				p.Backward(&pr)
				sameBits(t, "Pool img.grad", p.Grads.Img[:], wantImg)

				bp := new(BigPool)
				bp.Pool = pool
				bp.Params.Img = big
				bp.Backward(&br)
				sameBits(t, "BigPool img.grad", bp.Grads.Img[:], wantBig)

				m := new(RowMax)
				m.Pool = pool
				m.Params.X = x
				m.Backward(&xr)
				sameBits(t, "RowMax x.grad", m.Grads.X[:], wantX)

				tp := new(Tropical)
				tp.Pool = pool
				tp.Params.A, tp.Params.B = a, b
				tp.Backward(&tr)
				sameBits(t, "Tropical a.grad", tp.Grads.A[:], wantA)
				sameBits(t, "Tropical b.grad", tp.Grads.B[:], wantB)
			})
		}
	}
}

// poolRef is the gradient of a 2x2, stride-2 max-pool of img (nb | h, w,
// c) whose outputs have gradient g, by max_pool2d's rule.
func poolRef(img, g []float32, nb, h, w, c int) []float32 {
	out := make([]float32, len(img))
	oh, ow := h/2, w/2
	for b := range nb {
		for i := range oh {
			for j := range ow {
				for ch := range c {
					best := -1
					for u := range 2 {
						for v := range 2 {
							k := ((b*h+2*i+u)*w+2*j+v)*c + ch
							if best < 0 || img[k] > img[best] {
								best = k
							}
						}
					}
					out[best] += g[((b*oh+i)*ow+j)*c+ch]
				}
			}
		}
	}
	return out
}

func flat32[T any](p *T) []float32 {
	c := view(p)
	return unsafe.Slice((*float32)(c.p), c.n)
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d cells differ in all", what, bad)
	}
}
