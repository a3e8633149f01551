//go:build mpi

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/dist/mpi"
)

const childEnv = "OCANNLGEN_MPI_CHILD"

// TestRanks trains on 2 and 3 ranks under mpirun (TestRank), as `mpirun
// -np 2 go run -tags mpi ./examples/distcnn` does with fewer steps.
func TestRanks(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("a rank")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (Debian: openmpi-bin): %v", err)
	}
	for _, n := range []int{2, 3} {
		cmd := exec.Command(mpirun, "--oversubscribe", "--timeout", "120", "-np", strconv.Itoa(n), os.Args[0], "-test.run", "^TestRank$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%d ranks: %v\n%s", n, err, out)
		}
		if got := strings.Count(string(out), "--- PASS: TestRank"); got != n {
			t.Errorf("%d ranks: %d passed:\n%s", n, got, out)
		}
		t.Logf("%d ranks:\n%s", n, out)
	}
}

// TestRank is one rank of TestRanks.
func TestRank(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestRanks under mpirun")
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	acc, err := run(&out, c, testSteps, 42, false)
	if err != nil {
		t.Fatal(fmt.Errorf("rank %d: %w", c.Rank(), err))
	}
	if c.Rank() == 0 {
		checkReport(t, out.String(), acc, c.Size())
	}
}
