package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/cuda"
	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// testSteps is the shortened training budget of the tests: half the
// default of main, still at 100% on the held-out glyphs.
const testSteps = 300

// TestOneProcess trains in one process (dist.Local), as `go run
// ./examples/distcnn` does without the mpi tag (mpi_test.go runs it on
// 2 and 3 ranks under mpirun).
func TestOneProcess(t *testing.T) {
	var out bytes.Buffer
	acc, err := run(&out, dist.Local(), testSteps, 42, false)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out.String(), acc, 1)
}

// checkReport checks rank 0's report of a run on n ranks.
func checkReport(t *testing.T, out string, acc float64, n int) {
	t.Helper()
	if acc < 0.90 {
		t.Errorf("held-out accuracy %.3f after %d steps, want >= 0.90\n%s", acc, testSteps, out)
	}
	for _, want := range []string{"held-out accuracy", fmt.Sprintf("parameters bit-identical on the %d ranks", n)} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	t.Logf("%d ranks: accuracy %.1f%% after %d steps", n, 100*acc, testSteps)
}

// TestNegativeSteps: a bad step count is an error, not a panic.
func TestNegativeSteps(t *testing.T) {
	if _, err := run(new(bytes.Buffer), dist.Local(), -1, 1, false); err == nil {
		t.Error("run with -1 steps succeeded")
	}
}

// TestGPUWithoutCUDA: without the cuda tag -gpu is an error naming the
// missing GPU path (every rank gets it: none falls back alone).
func TestGPUWithoutCUDA(t *testing.T) {
	if cuda.Available {
		t.Skip("built with the cuda tag")
	}
	if _, err := run(new(bytes.Buffer), dist.Local(), 10, 1, true); !errors.Is(err, cuda.ErrNotBuilt) {
		t.Errorf("run -gpu without the cuda tag: %v", err)
	}
}
