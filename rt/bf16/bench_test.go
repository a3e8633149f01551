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

// BenchmarkPackLayouts times packing the decoder's operands once in the
// AVX512_BF16 tier's layouts that transpose: a weight gradient's A
// (dy^T: contiguous along m) and an input gradient's B (W^T: contiguous
// along the reduction), in ns per element.
func BenchmarkPackLayouts(b *testing.B) {
	for _, l := range []struct {
		name string
		a    bool
		s    Shape
	}{
		{"A-m-contiguous", true, Shape{M: 384, N: 192, K: 1024, CM: 192, CN: 1, AM: 1, AK: 384, BK: 1536, BN: 1}},
		{"B-k-contiguous", false, Shape{M: 128, N: 1536, K: 384, CM: 1536, CN: 1, AM: 384, AK: 1, BK: 1, BN: 384}},
		{"B-k-contiguous-K1536", false, Shape{M: 1024, N: 384, K: 1536, CM: 384, CN: 1, AM: 1536, AK: 1, BK: 1, BN: 1536}},
		{"B-n-contiguous", false, Shape{M: 384, N: 1536, K: 1024, CM: 1536, CN: 1, AM: 1, AK: 384, BK: 1536, BN: 1}},
		{"A-k-contiguous", true, Shape{M: 1024, N: 192, K: 1536, CM: 192, CN: 1, AM: 1536, AK: 1, BK: 1, BN: 1536}},
		{"attn-K^T", false, Shape{M: 128, N: 128, K: 64, CM: 128, CN: 1, AM: 384, AK: 1, BK: 1, BN: 384}},
	} {
		_, an, bn := l.s.spans()
		x := make([]float32, max(an, bn))
		for i := range x {
			x[i] = float32(i%9) * 0.1
		}
		var p Packed
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				if l.a {
					PackA(&p, &x[0], l.s)
				} else {
					Pack(&p, &x[0], l.s)
				}
			}
			n := l.s.M * l.s.K
			if !l.a {
				n = l.s.N * l.s.K
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		})
	}
	x := make([]float32, 1024*1536)
	h := make([]uint16, len(x))
	b.Run("convert", func(b *testing.B) {
		for b.Loop() {
			Convert(&h[0], &x[0], len(x))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/elem")
	})
}

// BenchmarkConvForward times a forward convolution of the ResNet's
// first stage as the generated code calls it (rows folded: 32 pixels x
// 32 image rows x 4 images; the converted input image, padded to 34x34,
// and the packed 3x3x16x16 weight), in ns per output pixel.
func BenchmarkConvForward(b *testing.B) {
	s := Shape{M: 32, N: 16, K: 48, CM: 16, CN: 1, AM: 16, AK: 1, BK: 1, BN: 144, K2: 3, AK2: 34 * 16, BK2: 48,
		M2: 32, CM2: 32 * 16, AM2: 34 * 16, M3: 4, CM3: 1024 * 16, AM3: 34 * 34 * 16, Overwrite: true}
	cn, an, bn := s.spans()
	a, w, c := make([]float32, an), make([]float32, bn), make([]float32, cn)
	for i := range a {
		a[i] = float32(i%9) * 0.1
	}
	var cv Converted
	var p Packed
	cv.Convert(&a[0], an)
	Pack(&p, &w[0], s)
	for b.Loop() {
		GemmOps(&c[0], cv.At(&a[0]), Operand{P: &p}, s)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.M*s.M2*s.M3), "ns/pixel")
}

// BenchmarkConvInputGrad times the small calls of a first-stage input
// gradient convolution as the generated code makes them (one per output
// pixel: dy's 16 channels of 32 images, converted, times the packed
// weight's 16x48 transposed), in ns per call.
func BenchmarkConvInputGrad(b *testing.B) {
	s := Shape{M: 32, N: 48, K: 16, CM: 560, CN: 1, AM: 512, AK: 1, BK: 144, BN: 1}
	cn, an, bn := s.spans()
	const calls = 32
	a, w, c := make([]float32, an+16*calls), make([]float32, bn), make([]float32, cn+16*calls)
	for i := range a {
		a[i] = float32(i%9) * 0.1
	}
	var cv Converted
	var p Packed
	cv.Convert(&a[0], len(a))
	Pack(&p, &w[0], s)
	for b.Loop() {
		for i := range calls {
			GemmOps(&c[16*i], cv.At(&a[16*i]), Operand{P: &p}, s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/calls, "ns/call")
}

// BenchmarkGemmDecoder times one part's call of the decoder's bf16
// products as the generated code makes them (the other operand packed
// once, as Pack or PackA leave it), for the float32 operand's layouts
// that the packing converts: A contiguous along k (Am-k) or m (Am-m),
// B contiguous along n (Bn-n) or k (Bn-k), in GFLOP/s.
func BenchmarkGemmDecoder(b *testing.B) {
	for _, l := range []struct {
		name   string
		packed string // the operand packed once: "A" or "B"
		s      Shape
	}{
		{"A-k", "B", Shape{M: 128, N: 384, K: 1536, CM: 384, CN: 1, AM: 1536, AK: 1, BK: 384, BN: 1, Overwrite: true}},
		{"A-m", "B", Shape{M: 192, N: 384, K: 1024, CM: 384, CN: 1, AM: 1, AK: 1536, BK: 384, BN: 1, Overwrite: true}},
		{"B-n", "A", Shape{M: 384, N: 192, K: 1024, CM: 1536, CN: 1, AM: 1, AK: 384, BK: 1536, BN: 1, Overwrite: true}},
		{"B-k", "A", Shape{M: 1024, N: 48, K: 1536, CM: 384, CN: 1, AM: 1536, AK: 1, BK: 1, BN: 1536, Overwrite: true}},
	} {
		cn, an, bn := l.s.spans()
		a, bb, c := make([]float32, an), make([]float32, bn), make([]float32, cn)
		for i := range a {
			a[i] = float32(i%7) * 0.1
		}
		for i := range bb {
			bb[i] = float32(i%5) * 0.1
		}
		var p Packed
		ao, bo := Operand{F: &a[0]}, Operand{F: &bb[0]}
		if l.packed == "A" {
			PackA(&p, &a[0], l.s)
			ao = Operand{P: &p}
		} else {
			Pack(&p, &bb[0], l.s)
			bo = Operand{P: &p}
		}
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				GemmOps(&c[0], ao, bo, l.s)
			}
			b.ReportMetric(float64(l.s.Flops())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConvInputGather times the gather form of
// BenchmarkConvInputGrad's input gradient (gatherCase: the flipped
// kernel over the padded output gradient, one call for 4 images of
// 32x32 pixels, 16 channels in and out, the padded copy included), in
// ns per image: the scatter makes 96 of BenchmarkConvInputGrad's calls
// per image.
func BenchmarkConvInputGather(b *testing.B) {
	for _, g := range []gatherCase{{4, 32, 32, 16, 16}, {4, 16, 16, 32, 32}, {4, 8, 8, 64, 64}} {
		for _, convert := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dx%dx%d/convert=%v", g.h, g.w, g.ci, convert), func(b *testing.B) {
				s := g.shape()
				dy := make([]float32, g.bt*g.h*g.w*g.ko)
				for i := range dy {
					dy[i] = float32(i%9) * 0.1
				}
				kern := make([]float32, g.ko*9*g.ci)
				c := make([]float32, g.bt*(g.h+3)*(g.w+3)*g.ci)
				var pd Padded
				var p Packed
				bp := &kern[8*g.ci]
				Pack(&p, bp, s)
				pd.Convert(&dy[0], [4]int{g.bt, g.h, g.w, g.ko}, [4]int{0, 2, 2, 0})
				for b.Loop() {
					if convert {
						pd.Convert(&dy[0], [4]int{g.bt, g.h, g.w, g.ko}, [4]int{0, 2, 2, 0})
					}
					GemmOps(&c[0], pd.At(&dy[0], [4]int{0, -2, -2, 0}), Operand{P: &p, F: bp}, s)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.bt), "ns/image")
			})
		}
	}
}
