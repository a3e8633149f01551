//go:build amd64 && gc && !purego

package wino

import "github.com/ocannlgen/ocannlgen/rt/cpu"

//go:generate go run ../../internal/winoasm -o kern_amd64.s

// maxRows and maxRows2 are the tallest tiles of the AVX-512 and AVX2
// product kernels for each number of column vectors (16 and 8 lanes;
// internal/winoasm).
var (
	maxRows  = [5]int{0, 8, 8, 8, 6}
	maxRows2 = [3]int{0, 8, 6}
)

// tier is the best kernel set the CPU has and OCANNLGEN_CPU allows:
// tierAVX512, tierAVX2 or tierGo.
var tier = func() int {
	switch {
	case cpu.Supported("AVX512F") && cpu.Enabled(cpu.AVX512):
		return tierAVX512
	case cpu.Supported("AVX2", "FMA3") && cpu.Enabled(cpu.AVX2):
		return tierAVX2
	}
	return tierGo
}()

// bestTier is the kernel set Conv and KernelGrad run.
func bestTier() int { return tier }
