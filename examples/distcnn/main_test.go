package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

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
	acc, err := run(&out, dist.Local(), testSteps, 42)
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
	if _, err := run(new(bytes.Buffer), dist.Local(), -1, 1); err == nil {
		t.Error("run with -1 steps succeeded")
	}
}
