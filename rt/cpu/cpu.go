// Package cpu selects the instruction-set tier of the assembly kernels
// that ocannlgen generates (emit/asm), with github.com/klauspost/cpuid/v2.
//
// Generated code asks Enabled(tier, features...) once, at package
// initialization, with the instruction sets its kernels need (as avo
// reports them); when it says no, the generated code runs its portable
// Go loops instead.
//
// The environment variable OCANNLGEN_CPU forces a lower tier:
//
//	OCANNLGEN_CPU=purego   no assembly: the Go loops everywhere
//	OCANNLGEN_CPU=avx2     at most the AVX2+FMA kernels
//	OCANNLGEN_CPU=avx512   at most the AVX-512 kernels, without the AVX512_BF16
//	                       instructions (the bf16 kernels of rt/bf16 widen
//	                       to float32 and use FMA instead of VDPBF16PS)
//	OCANNLGEN_CPU=avx512bf16  every kernel, VDPBF16PS included (the default)
//
// An empty or unset variable means no limit. An unknown value selects
// purego (the safe choice) and Limit reports it. The variable is read
// once, when the program starts.
package cpu

import (
	"fmt"
	"os"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// Tier is an instruction-set tier, lowest first.
type Tier int

// Tiers.
const (
	// Purego runs the generated Go loops.
	Purego Tier = iota
	// AVX2 runs the AVX2+FMA kernels.
	AVX2
	// AVX512 runs the AVX-512 kernels.
	AVX512
	// AVX512BF16 also lets the bf16 kernels (package rt/bf16) use the
	// AVX512_BF16 instructions; the other kernels run as under AVX512.
	AVX512BF16
)

// String names the tier as OCANNLGEN_CPU spells it.
func (t Tier) String() string {
	switch t {
	case Purego:
		return "purego"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	case AVX512BF16:
		return "avx512bf16"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// EnvVar is the environment variable that limits the tier.
const EnvVar = "OCANNLGEN_CPU"

// ParseTier parses a value of OCANNLGEN_CPU ("" means no limit:
// AVX512BF16).
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "avx512bf16":
		return AVX512BF16, nil
	case "avx512":
		return AVX512, nil
	case "avx2":
		return AVX2, nil
	case "purego", "go", "generic":
		return Purego, nil
	}
	return Purego, fmt.Errorf("%s=%q: want purego, avx2, avx512 or avx512bf16; using purego", EnvVar, s)
}

// limit is the tier OCANNLGEN_CPU allows, fixed at initialization.
var limit, limitErr = ParseTier(os.Getenv(EnvVar))

// Limit is the highest tier OCANNLGEN_CPU allows, and the error when its
// value was not understood (the limit is then Purego).
func Limit() (Tier, error) { return limit, limitErr }

// aliases maps avo's ISA names to cpuid's where they differ.
var aliases = map[string]string{
	"FMA":       "FMA3",
	"AES":       "AESNI",
	"BMI":       "BMI1",
	"PCLMULQDQ": "CLMUL",
	"SSE4.1":    "SSE4",
	"SSE4.2":    "SSE42",
}

// Supported reports whether the CPU (and the operating system) supports
// every named instruction set (avo's names: "AVX2", "FMA3", "AVX512F",
// ...). An unknown name is unsupported.
func Supported(features ...string) bool {
	for _, f := range features {
		if a, ok := aliases[f]; ok {
			f = a
		}
		id := cpuid.ParseFeature(f)
		if id == cpuid.UNKNOWN || !cpuid.CPU.Supports(id) {
			return false
		}
	}
	return true
}

// Enabled reports whether kernels of tier t needing the named instruction
// sets may run: OCANNLGEN_CPU allows t and the CPU supports them all.
func Enabled(t Tier, features ...string) bool {
	return t <= limit && Supported(features...)
}
