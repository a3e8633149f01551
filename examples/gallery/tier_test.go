package main

import (
	"os"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// TestTier: the generated flag follows OCANNLGEN_CPU and the CPU (on
// builds with the assembly: amd64, gc, no purego tag), so that the tests
// of this package check the tier they are meant to (run them with
// OCANNLGEN_CPU=purego or -tags purego for the Go loops).
func TestTier(t *testing.T) {
	limit, _ := cpu.Limit()
	want := hasAsm && limit >= cpu.AVX2 && cpu.Supported("AVX", "FMA3")
	if ocannlAVX2 != want {
		t.Fatalf("ocannlAVX2 = %v, want %v (%s=%q)", ocannlAVX2, want, cpu.EnvVar, os.Getenv(cpu.EnvVar))
	}
	t.Logf("assembly kernels: %v", ocannlAVX2)
}
