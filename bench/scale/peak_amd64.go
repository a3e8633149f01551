package main

import "github.com/ocannlgen/ocannlgen/rt/cpu"

// The peak loops of peak_amd64.s: n iterations of 12 (bf16: 24) independent
// multiply-accumulates (see there).

//go:noescape
func fmaZMM(n int, x float32)

//go:noescape
func fmaYMM(n int, x float32)

//go:noescape
func dpbf16ZMM(n int, x uint32)

// peakLoops lists the loops this CPU runs: name, FLOP per iteration, and
// the loop.
func peakLoops() []peakLoop {
	var ls []peakLoop
	if cpu.Supported("AVX512F") {
		ls = append(ls, peakLoop{"f32 FMA, ZMM (VFMADD231PS, AVX-512)", "f32-zmm", 12 * 16 * 2, func(n int) { fmaZMM(n, 1e-3) }})
	}
	if cpu.Supported("AVX2", "FMA3") {
		ls = append(ls, peakLoop{"f32 FMA, YMM (VFMADD231PS, AVX2)", "f32-ymm", 12 * 8 * 2, func(n int) { fmaYMM(n, 1e-3) }})
	}
	if cpu.Supported("AVX512F", "AVX512BF16") {
		// 0x3c00 is the bfloat16 2^-7; each lane adds 2 products.
		ls = append(ls, peakLoop{"bf16 dot, ZMM (VDPBF16PS, AVX512_BF16)", "bf16-zmm", 24 * 16 * 4, func(n int) { dpbf16ZMM(n, 0x3c003c00) }})
	}
	return ls
}
