//go:build amd64 && gc && !purego

package wino

import "github.com/ocannlgen/ocannlgen/rt/cpu"

//go:generate go run ../../internal/winoasm -o kern_amd64.s

// maxRows is the tallest tile of the product kernels for each number of
// 16-lane column vectors (internal/winoasm).
var maxRows = [5]int{0, 8, 8, 8, 6}

// hasAsm: the CPU has AVX-512 and OCANNLGEN_CPU allows that tier.
var hasAsm = cpu.Supported("AVX512F") && cpu.Enabled(cpu.AVX512)

// useAsm reports whether Conv runs the assembly kernels.
func useAsm() bool { return hasAsm }
