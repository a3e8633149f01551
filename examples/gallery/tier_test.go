package main

import (
	"os"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// TestTier: the generated flags follow OCANNLGEN_CPU and the CPU (on
// builds with the assembly: amd64, gc, no purego tag), so that the tests
// of this package check the tier they are meant to (run them with
// OCANNLGEN_CPU=avx2, OCANNLGEN_CPU=purego or -tags purego for the lower
// tiers).
func TestTier(t *testing.T) {
	limit, _ := cpu.Limit()
	want512 := hasAsm && limit >= cpu.AVX512 && cpu.Supported("AVX512F", "AVX512VL")
	want2 := hasAsm && limit >= cpu.AVX2 && cpu.Supported("AVX", "FMA3")
	if ocannlAVX512 != want512 || ocannlAVX2 != want2 {
		t.Fatalf("ocannlAVX512, ocannlAVX2 = %v, %v, want %v, %v (%s=%q)", ocannlAVX512, ocannlAVX2, want512, want2, cpu.EnvVar, os.Getenv(cpu.EnvVar))
	}
	t.Logf("assembly kernels: AVX512 %v, AVX2 %v", ocannlAVX512, ocannlAVX2)
}
