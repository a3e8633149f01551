//go:build mpi

package mpi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// childEnv marks a test process that mpirun started as a rank.
const childEnv = "OCANNLGEN_MPI_CHILD"

// RunRanks runs the tests of this test binary matching run as n ranks
// under mpirun, and returns their combined output; it fails t when a
// rank fails. Tests call it from the parent process (childEnv unset).
func runRanks(t *testing.T, n int, run string, env ...string) string {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (Debian: openmpi-bin): %v", err)
	}
	cmd := exec.Command(mpirun, "--oversubscribe", "--timeout", "120", "-np", fmt.Sprint(n), os.Args[0], "-test.run", run, "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childEnv+"=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun -np %d %s: %v\n%s", n, run, err, out)
	}
	return string(out)
}

// TestCollectives runs TestRankCollectives on 1, 2 and 3 ranks.
func TestCollectives(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("a rank")
	}
	for _, n := range []int{1, 2, 3} {
		out := runRanks(t, n, "^TestRankCollectives$")
		if got := strings.Count(out, "--- PASS: TestRankCollectives"); got != n {
			t.Errorf("%d ranks: %d passed:\n%s", n, got, out)
		}
	}
}

// TestRankCollectives is one rank of TestCollectives: sums of known
// values (every rank gets the same bits), broadcasts from each root, a
// barrier, CheckSame on equal and on different fingerprints.
func TestRankCollectives(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestCollectives under mpirun")
	}
	c, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, n := c.Rank(), c.Size()
	f32 := []float32{float32(r + 1), 0.1 * float32(r), 1e-7}
	if err := c.AllReduceSum32(f32); err != nil {
		t.Fatal(err)
	}
	want := float32(n * (n + 1) / 2)
	if f32[0] != want {
		t.Errorf("rank %d: sum %v, want %v", r, f32[0], want)
	}
	f64 := []float64{math.Pi * float64(r+1), 1 / float64(r+3)}
	if err := c.AllReduceSum64(f64); err != nil {
		t.Fatal(err)
	}
	// Every rank holds rank 0's bits: broadcast them and compare.
	same := []float64{float64(math.Float32bits(f32[1])), f64[0], f64[1]}
	ref := append([]float64(nil), same...)
	if err := c.Broadcast64(ref, 0); err != nil {
		t.Fatal(err)
	}
	for i := range same {
		if math.Float64bits(same[i]) != math.Float64bits(ref[i]) {
			t.Errorf("rank %d: sum %d differs from rank 0's: %v vs %v", r, i, same[i], ref[i])
		}
	}
	for root := range n {
		b := []float32{float32(10*r + 1), float32(r)}
		if err := c.Broadcast32(b, root); err != nil {
			t.Fatal(err)
		}
		if b[0] != float32(10*root+1) || b[1] != float32(root) {
			t.Errorf("rank %d: broadcast from %d gave %v", r, root, b)
		}
	}
	if err := c.Broadcast32(nil, n); err == nil {
		t.Errorf("a broadcast from rank %d of %d succeeded", n, n)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := dist.CheckSame(c, 0x1234, nil); err != nil {
		t.Errorf("rank %d: equal fingerprints: %v", r, err)
	}
	fp := uint32(0x1234)
	if r == n-1 && n > 1 {
		fp = 0x4321
	}
	err = dist.CheckSame(c, fp, nil)
	if n > 1 && !errors.Is(err, dist.ErrMismatch) || n == 1 && err != nil {
		t.Errorf("rank %d of %d: different fingerprints: %v", r, n, err)
	}
	t.Logf("rank %d of %d: %v", r, n, err)
	// Closed, the communicator refuses collectives, and MPI cannot start
	// again in the process.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Barrier(); err == nil {
		t.Error("a barrier on a closed communicator succeeded")
	}
	if c2, err := Open(); err == nil || !strings.Contains(err.Error(), "finalized") {
		t.Errorf("Open after Close: %v, %v", c2, err)
	}
}
