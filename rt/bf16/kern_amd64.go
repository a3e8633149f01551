//go:build amd64 && gc && !purego

package bf16

import "github.com/ocannlgen/ocannlgen/rt/cpu"

//go:generate go run ../../internal/bf16asm -o kern_amd64.s

// supported reports whether the CPU has what tier t needs.
func supported(t Tier) bool {
	switch t {
	case AVX512BF16:
		return cpu.Supported("AVX512F", "AVX512BW", "AVX512BF16")
	case AVX512:
		return cpu.Supported("AVX512F")
	case AVX2:
		return cpu.Supported("AVX2", "FMA3")
	}
	return t == Go
}

// allowed reports whether OCANNLGEN_CPU allows tier t.
func allowed(t Tier) bool { return t == Go || cpu.Enabled(t) }

//go:noescape
func cvtRow(dst *uint32, src *float32, n16 int)

//go:noescape
func cvtPairs16(dst *uint32, src *float32, ld int, pairs int)

//go:noescape
func cvtPairs32(dst *uint32, src *float32, ld int, pairs int)

//go:noescape
func cvtWindows(dst *uint32, ldw int, src *float32, ld int, pairs int, nwin int)

// hasAsmPack: the AVX512_BF16 packing routines exist in this build.
const hasAsmPack = true

//go:noescape
func cvtPairs16m(dst *uint32, ldd int, src *float32, ld int, pairs int, mask int)

//go:noescape
func pairsH16(dst *uint32, src *uint16, ld int, pairs int)

//go:noescape
func pairsH32(dst *uint32, src *uint16, ld int, pairs int)

//go:noescape
func cvtN(dst *uint16, src *float32, n int)

//go:noescape
func transpose16(dst *uint32, ldd int, src *uint32, blocks int, rows int)

//go:noescape
func copyRuns(dst *uint32, ldd int, src *uint16, lds int, rows int, d *[4]int, nd int)

//go:noescape
func cvtColumns16(dst *uint32, ldd int, src *float32, lds int, n int)

//go:noescape
func cvtRows16(dst *uint32, ldd int, src *float32, ld int, pairs int, rows int)

//go:noescape
func cvtRowsN(dst *uint16, ldd int, src *float32, lds int, rows int, n int)
