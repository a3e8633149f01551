package bf16

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// gather2Case is the input gradient of a 3x3 convolution of stride 2
// (dy of bt images of h x w pixels, ko channels; the kernel
// kern[o][i][j][c], ci input channels), whose scatter
// dx[b][2y+i][2x+j][c] += dy[b][y][x][o] * kern[o][i][j][c] reaches
// (2h+1) x (2w+1) cells, run as four gathers, one per parity class
// (ry, rx) of dx's row and column: a class's cell (2u+ry, 2v+rx) sums
// the kernel's taps of the same parity, i = 2m+ry over the rows of dy
// u-m (and the columns alike), a stride-1 gather over dy padded by one
// with the taps' strides doubled (B's reduction strides -2 kernel
// columns and -2 kernel rows: the flipped taps of that parity).
type gather2Case struct{ bt, h, w, ko, ci int }

// class is the call of parity class (ry, rx): its shape, C's offset
// in dx, the shift of A in the padded dy (bf16.Padded with pads 0, 1,
// 1, 0) from dy's first element, and B's offset in kern (the flipped
// first tap).
func (g gather2Case) class(ry, rx int) (s Shape, c int, shift [4]int, b int) {
	ch, cw := 2*g.h+1, 2*g.w+1 // dx's cells
	pw := g.w + 2              // padded dy's columns
	mh, mw := 2-ry, 2-rx       // the class's taps along rows and columns
	s = Shape{
		M: g.h + 1 - ry, N: g.ci, K: g.ko,
		CM: 2 * cw * g.ci, CN: 1, AM: pw * g.ko, AK: 1, BK: 9 * g.ci, BN: 1,
		K2: mw, AK2: g.ko, BK2: -2 * g.ci,
		K3: mh, AK3: pw * g.ko, BK3: -6 * g.ci,
		M2: g.w + 1 - rx, CM2: 2 * g.ci, AM2: g.ko,
		M3: g.bt, CM3: ch * cw * g.ci, AM3: (g.h + 2) * pw * g.ko,
	}
	c = (ry*cw + rx) * g.ci
	shift = [4]int{0, -(mh - 1), -(mw - 1), 0}
	b = ((2*(mh-1)+ry)*3 + 2*(mw-1) + rx) * g.ci
	return s, c, shift, b
}

// TestGemmGather2: in every tier, with B as float32 or packed, the four
// parity classes' gathers give each class's documented order's bits on
// the padded operand (emulate) and agree with the stride-2 scatter's
// sums (float64 over the rounded operands) on every cell.
func TestGemmGather2(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, g := range []gather2Case{{3, 5, 6, 12, 7}, {2, 4, 3, 5, 16}, {1, 8, 8, 16, 33}} {
		ch, cw := 2*g.h+1, 2*g.w+1
		dy := randSlice(rng, g.bt*g.h*g.w*g.ko)
		kern := randSlice(rng, g.ko*9*g.ci)
		cells := g.bt * ch * cw * g.ci
		c0 := randSlice(rng, cells)
		sum, mag := scatterSums(g.bt, g.h, g.w, g.ko, g.ci, dy, kern, c0, func(b, y, x, i, j int) int {
			return (b*ch+2*y+i)*cw + 2*x + j
		})
		ph, pw := g.h+2, g.w+2
		pad := make([]float32, g.bt*ph*pw*g.ko)
		for b := range g.bt {
			for y := range g.h {
				for x := range g.w {
					copy(pad[((b*ph+y+1)*pw+x+1)*g.ko:][:g.ko], dy[((b*g.h+y)*g.w+x)*g.ko:][:g.ko])
				}
			}
		}
		want := append([]float32(nil), c0...)
		for ry := range 2 {
			for rx := range 2 {
				s, c, shift, _ := g.class(ry, rx)
				a := ((1+shift[1])*pw + 1 + shift[2]) * g.ko
				emulate(want[c:], pad[a:], kern[(ry*3+rx)*g.ci:], s) // (B's lowest element)
			}
		}
		for _, tier := range []Tier{Go, AVX2, AVX512, AVX512BF16} {
			if !Available(tier) {
				continue
			}
			var pd Padded
			pd.ConvertTier(tier, &dy[0], [4]int{g.bt, g.h, g.w, g.ko}, [4]int{0, 1, 1, 0})
			for _, packed := range []bool{false, true} {
				name := fmt.Sprintf("%+v, tier %v, packed %v", g, tier, packed)
				c := append([]float32(nil), c0...)
				for ry := range 2 {
					for rx := range 2 {
						s, co, shift, bo := g.class(ry, rx)
						form := Operand{F: &kern[bo]}
						if packed {
							var pk Packed
							PackTier(&pk, tier, &kern[bo], s)
							form.P = &pk
						}
						GemmOpsTier(tier, &c[co], pd.At(&dy[0], shift), form, s)
					}
				}
				checkGathered(t, name, c, want, sum, mag, g.ko*9)
			}
		}
	}
}

// BenchmarkConvInputStride2 times a stride-2 3x3 input gradient of 4
// images (the ResNet's stage 2 and 3 first blocks: dy 16x16x32 into
// 16 channels, 8x8x64 into 32) as the generated code runs it (scatter:
// one call per image, dy column and kernel row, dy converted once, the
// packed kernel) and
// as the four parity gathers (the padded copy included), in ns per
// image.
func BenchmarkConvInputStride2(b *testing.B) {
	for _, g := range []gather2Case{{4, 16, 16, 32, 16}, {4, 8, 8, 64, 32}} {
		ch, cw := 2*g.h+1, 2*g.w+1
		dy := make([]float32, g.bt*g.h*g.w*g.ko)
		for i := range dy {
			dy[i] = float32(i%9) * 0.1
		}
		kern := make([]float32, g.ko*9*g.ci)
		c := make([]float32, g.bt*ch*cw*g.ci)
		b.Run(fmt.Sprintf("scatter/%dx%dx%d", g.h, g.w, g.ko), func(b *testing.B) {
			s := Shape{M: g.h, N: 3 * g.ci, K: g.ko, CM: 2 * cw * g.ci, CN: 1, AM: g.w * g.ko, AK: 1, BK: 9 * g.ci, BN: 1}
			var p [3]Packed
			for i := range p {
				Pack(&p[i], &kern[3*i*g.ci], s)
			}
			var cv Converted
			for b.Loop() {
				cv.Convert(&dy[0], len(dy))
				for im := range g.bt {
					for x := range g.w {
						for i := range 3 {
							GemmOps(&c[((im*ch+i)*cw+2*x)*g.ci], cv.At(&dy[(im*g.h*g.w+x)*g.ko]), Operand{P: &p[i], F: &kern[3*i*g.ci]}, s)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.bt), "ns/image")
		})
		b.Run(fmt.Sprintf("gather/%dx%dx%d", g.h, g.w, g.ko), func(b *testing.B) {
			var pd Padded
			var p [4]Packed
			for k := range 4 {
				s, _, _, bo := g.class(k/2, k%2)
				Pack(&p[k], &kern[bo], s)
			}
			for b.Loop() {
				pd.Convert(&dy[0], [4]int{g.bt, g.h, g.w, g.ko}, [4]int{0, 1, 1, 0})
				for k := range 4 {
					s, co, shift, bo := g.class(k/2, k%2)
					GemmOps(&c[co], pd.At(&dy[0], shift), Operand{P: &p[k], F: &kern[bo]}, s)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.bt), "ns/image")
		})
	}
}
