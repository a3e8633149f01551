//go:build amd64 && gc && !purego

package bf16

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestAsmRounding: the AVX512_BF16 packing routines (VCVTNEPS2BF16)
// round every value as rt.BF16FromFloat32 does: ties both ways,
// denormals, zeros, infinities, NaNs, overflow, and random bits.
func TestAsmRounding(t *testing.T) {
	if !Available(AVX512BF16) {
		t.Skip("no AVX512_BF16")
	}
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001,
		0x7f800000, 0xff800000, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00001, 0x7fbfffff, 0x477fffff}
	r := rand.New(rand.NewPCG(9, 9))
	src := make([]float32, 1024)
	for i := range src {
		u := r.Uint32()
		if i < len(specials) {
			u = specials[i]
		}
		src[i] = math.Float32frombits(u)
	}
	row := make([]uint32, 512)
	cvtRow(&row[0], &src[0], 64)
	odd := make([]uint16, 1030)
	for i := range odd {
		odd[i] = 0xdead
	}
	cvtN(&odd[1], &src[0], 1021) // from an odd bf16, a partial last vector
	if odd[0] != 0xdead || odd[1022] != 0xdead {
		t.Errorf("cvtN wrote outside its %d elements: %#04x, %#04x", 1021, odd[0], odd[1022])
	}
	for i, x := range src[:1021] {
		if got, want := odd[i+1], uint16(rt.BF16FromFloat32(x)); got != want {
			t.Errorf("cvtN(%#08x) = %#04x, want %#04x", math.Float32bits(x), got, want)
		}
	}
	pairs := make([]uint32, 512)
	cvtPairs32(&pairs[0], &src[0], 32*4, 16) // rows of 32: pair p is rows 2p, 2p+1
	for i, x := range src {
		want := uint32(rt.BF16FromFloat32(x))
		if got := row[i/2] >> (16 * (i % 2)) & 0xffff; got != want {
			t.Errorf("cvtRow(%#08x) = %#04x, want %#04x", math.Float32bits(x), got, want)
		}
		p, half, c := i/64, i/32%2, i%32
		if got := pairs[p*32+c] >> (16 * half) & 0xffff; got != want {
			t.Errorf("cvtPairs32(%#08x) = %#04x, want %#04x", math.Float32bits(x), got, want)
		}
	}
}

func BenchmarkKernBF16(b *testing.B) {
	var a [mrZMM * kc]uint32
	var bb [kc * nrZMM]uint32
	var c [mrZMM * nrZMM]float32
	for b.Loop() {
		kernBF16r14(kc/2, &a[0], &bb[0], &c[0], nrZMM*4, true)
	}
	b.ReportMetric(float64(2*mrZMM*nrZMM*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkKernF32x512(b *testing.B) {
	var a [mrZMM * kc]float32
	var bb [kc * nrZMM]float32
	var c [mrZMM * nrZMM]float32
	for b.Loop() {
		kernF32x512r14(kc, &a[0], &bb[0], &c[0], nrZMM*4, true)
	}
	b.ReportMetric(float64(2*mrZMM*nrZMM*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestTranspose16: transpose16 moves every word of 16x16 blocks to its
// row and pair, for every number of rows (1 to 16), and stores nothing
// past the rows it is given or the blocks it is given.
func TestTranspose16(t *testing.T) {
	if !Available(AVX512BF16) {
		t.Skip("no AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(11, 12))
	const ldw = 53 // words between rows
	for blocks := 1; blocks <= 3; blocks++ {
		src := make([]uint32, blocks*256)
		for i := range src {
			src[i] = r.Uint32()
		}
		for rows := 1; rows <= 16; rows++ {
			dst := make([]uint32, 16*ldw+64)
			for i := range dst {
				dst[i] = 0xdeadbeef
			}
			transpose16(&dst[0], ldw*4, &src[0], blocks, rows)
			for i := range dst {
				row, p := i/ldw, i%ldw
				want := uint32(0xdeadbeef)
				if row < rows && p < 16*blocks {
					want = src[p*16+row]
				}
				if dst[i] != want {
					t.Fatalf("blocks %d, rows %d: word %d (row %d, pair %d) = %#x, want %#x", blocks, rows, i, row, p, dst[i], want)
				}
			}
		}
	}
}

// TestCvtColumns16: cvtColumns16 rounds every step of 16 columns as
// rt.BF16FromFloat32 does (specials included) into its pair word, the
// odd member past n zero, for reductions shorter than, equal to and
// longer than one chunk of 32 steps, odd and even, and stores nothing
// past the (n+1)/2 rows or the 16 columns.
func TestCvtColumns16(t *testing.T) {
	if !Available(AVX512BF16) {
		t.Skip("no AVX512_BF16")
	}
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001,
		0x7f800000, 0xff800000, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00001, 0x7fbfffff, 0x477fffff}
	r := rand.New(rand.NewPCG(13, 14))
	const lds, ldd = 101, 37 // elements between columns, words between rows
	src := make([]float32, 16*lds)
	for i := range src {
		u := r.Uint32()
		if i%7 == 0 {
			u = specials[i/7%len(specials)]
		}
		src[i] = math.Float32frombits(u)
	}
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 64, 77, 100} {
		pairs := (n + 1) / 2
		dst := make([]uint32, (pairs+2)*ldd)
		for i := range dst {
			dst[i] = 0xdeadbeef
		}
		cvtColumns16(&dst[0], ldd*4, &src[0], lds*4, n)
		for i, got := range dst {
			p, c := i/ldd, i%ldd
			want := uint32(0xdeadbeef)
			if p < pairs && c < 16 {
				want = uint32(rt.BF16FromFloat32(src[c*lds+2*p]))
				if 2*p+1 < n {
					want |= uint32(rt.BF16FromFloat32(src[c*lds+2*p+1])) << 16
				}
			}
			if got != want {
				t.Fatalf("n %d: word %d (pair %d, column %d) = %#08x, want %#08x", n, i, p, c, got, want)
			}
		}
	}
}

// TestCvtRows16: cvtRows16 rounds every step of 1 to 16 rows as
// rt.BF16FromFloat32 does (specials included) into its row's pair
// word, for pair counts that are and are not multiples of 16 (the last
// chunk overlapping), and stores nothing past the rows or the pairs.
func TestCvtRows16(t *testing.T) {
	if !Available(AVX512BF16) {
		t.Skip("no AVX512_BF16")
	}
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001,
		0x7f800000, 0xff800000, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00001, 0x7fbfffff, 0x477fffff}
	r := rand.New(rand.NewPCG(15, 16))
	const ld, ldd = 23, 150 // elements between steps, words between rows
	src := make([]float32, 2*100*ld)
	for i := range src {
		u := r.Uint32()
		if i%5 == 0 {
			u = specials[i/5%len(specials)]
		}
		src[i] = math.Float32frombits(u)
	}
	for _, pairs := range []int{16, 17, 31, 32, 45, 100} {
		for rows := 1; rows <= 16; rows++ {
			dst := make([]uint32, 17*ldd)
			for i := range dst {
				dst[i] = 0xdeadbeef
			}
			cvtRows16(&dst[0], ldd*4, &src[0], ld*4, pairs, rows)
			for i, got := range dst {
				row, p := i/ldd, i%ldd
				want := uint32(0xdeadbeef)
				if row < rows && p < pairs {
					want = uint32(rt.BF16FromFloat32(src[2*p*ld+row])) | uint32(rt.BF16FromFloat32(src[(2*p+1)*ld+row]))<<16
				}
				if got != want {
					t.Fatalf("pairs %d, rows %d: word %d (row %d, pair %d) = %#08x, want %#08x", pairs, rows, i, row, p, got, want)
				}
			}
		}
	}
}

// TestCvtRowsN: cvtRowsN rounds every value of 1 to 3 rows as
// rt.BF16FromFloat32 does (specials included), from any bf16 position,
// for lengths below, at and past one and two vectors of 32, and writes
// nothing past each row's n values; cvtPairs16 rounds and pairs as
// cvtPairs32 does.
func TestCvtRowsN(t *testing.T) {
	if !Available(AVX512BF16) {
		t.Skip("no AVX512_BF16")
	}
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001,
		0x7f800000, 0xff800000, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00001, 0x7fbfffff, 0x477fffff}
	r := rand.New(rand.NewPCG(17, 18))
	const lds, ldd = 131, 141 // elements between rows of src, bf16 between rows of dst
	src := make([]float32, 3*lds)
	for i := range src {
		u := r.Uint32()
		if i%3 == 0 {
			u = specials[i/3%len(specials)]
		}
		src[i] = math.Float32frombits(u)
	}
	for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 64, 65, 100, 128} {
		for rows := 1; rows <= 3; rows++ {
			dst := make([]uint16, 3*ldd+2)
			for i := range dst {
				dst[i] = 0xdead
			}
			cvtRowsN(&dst[1], ldd*2, &src[0], lds*4, rows, n)
			for i, got := range dst {
				row, c := (i-1)/ldd, (i-1)%ldd
				want := uint16(0xdead)
				if i >= 1 && row < rows && c < n {
					want = uint16(rt.BF16FromFloat32(src[row*lds+c]))
				}
				if got != want {
					t.Fatalf("n %d, rows %d: bf16 %d (row %d, value %d) = %#04x, want %#04x", n, rows, i, row, c, got, want)
				}
			}
		}
	}
	pairs := make([]uint32, 16*12)
	cvtPairs16(&pairs[0], &src[0], 16*4, 12) // rows of 16: pair p is rows 2p, 2p+1
	for p := range 12 {
		for c := range 16 {
			want := uint32(rt.BF16FromFloat32(src[2*p*16+c])) | uint32(rt.BF16FromFloat32(src[(2*p+1)*16+c]))<<16
			if got := pairs[p*16+c]; got != want {
				t.Fatalf("cvtPairs16: pair %d, column %d = %#08x, want %#08x", p, c, got, want)
			}
		}
	}
}

// TestCvtWindows: cvtWindows stores, for every window and pair, the
// words of cvtPairs16 (each against rt.BF16FromFloat32, specials
// included), at its window's stride, and nothing between the windows
// or past the last.
func TestCvtWindows(t *testing.T) {
	if !Available(AVX512BF16) {
		t.Skip("no AVX512_BF16")
	}
	specials := []uint32{0, 0x80000000, 1, 0x807fffff, 0x3f808000, 0x3f818000, 0x7f800000, 0xff800000, 0x7f7fffff, 0x7f800001, 0xffc00001}
	r := rand.New(rand.NewPCG(21, 22))
	const ld, pairs, nwin = 7*16 + 5, 9, 6 // values between a pair's rows
	const ldw = 16*pairs + 3               // words between windows
	src := make([]float32, 2*pairs*ld)
	for i := range src {
		u := r.Uint32()
		if i%7 == 0 {
			u = specials[i/7%len(specials)]
		}
		src[i] = math.Float32frombits(u)
	}
	const guard = 0xdeadbeef
	dst := make([]uint32, nwin*ldw+5)
	for i := range dst {
		dst[i] = guard
	}
	cvtWindows(&dst[0], 4*ldw, &src[0], 4*ld, pairs, nwin)
	for i, got := range dst {
		w, o := i/ldw, i%ldw
		if w >= nwin || o >= 16*pairs {
			if got != guard {
				t.Fatalf("cvtWindows stored word %d (window %d, offset %d): %#08x", i, w, o, got)
			}
			continue
		}
		p, c := o/16, o%16
		want := uint32(rt.BF16FromFloat32(src[2*p*ld+16*w+c])) | uint32(rt.BF16FromFloat32(src[(2*p+1)*ld+16*w+c]))<<16
		if got != want {
			t.Fatalf("cvtWindows: window %d, pair %d, column %d = %#08x, want %#08x", w, p, c, got, want)
		}
	}
}
