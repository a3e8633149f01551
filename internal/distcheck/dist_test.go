//go:build mpi

package distcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/dist"
	"github.com/ocannlgen/ocannlgen/rt/dist/mpi"
)

// childEnv marks a test process that mpirun started as a rank; modeEnv
// says what it runs.
const (
	childEnv = "OCANNLGEN_MPI_CHILD"
	modeEnv  = "OCANNLGEN_DIST_MODE"
	ckptEnv  = "OCANNLGEN_DIST_CHECKPOINT"
	steps    = 20
)

// trainer is what the test needs of a generated model.
type trainer interface {
	Init(seed uint64)
	SaveCheckpoint(w io.Writer) error
	LoadCheckpoint(r io.Reader) error
	Update()
	BroadcastParams(c dist.Comm, root int) error
	SyncGrads(c dist.Comm) error
	ParamTensors() []rt.Tensor
}

// run is a model with its Backward on rows of the dataset.
type run[T float32 | float64] struct {
	m        trainer
	backward func(x [][3]T, y [][4]T) T
}

func s2() run[float32] {
	m := new(S2)
	return run[float32]{m, func(x [][3]float32, y [][4]float32) float32 {
		return m.Backward((*[2][3]float32)(x), (*[2][4]float32)(y))
	}}
}
func s4() run[float32] {
	m := new(S4)
	return run[float32]{m, func(x [][3]float32, y [][4]float32) float32 {
		return m.Backward((*[4][3]float32)(x), (*[4][4]float32)(y))
	}}
}
func s6() run[float32] {
	m := new(S6)
	return run[float32]{m, func(x [][3]float32, y [][4]float32) float32 {
		return m.Backward((*[6][3]float32)(x), (*[6][4]float32)(y))
	}}
}
func s8() run[float32] {
	m := new(S8)
	return run[float32]{m, func(x [][3]float32, y [][4]float32) float32 {
		return m.Backward((*[8][3]float32)(x), (*[8][4]float32)(y))
	}}
}
func a2() run[float64] {
	m := new(A2)
	return run[float64]{m, func(x [][3]float64, y [][4]float64) float64 {
		return m.Backward((*[2][3]float64)(x), (*[2][4]float64)(y))
	}}
}
func a4() run[float64] {
	m := new(A4)
	return run[float64]{m, func(x [][3]float64, y [][4]float64) float64 {
		return m.Backward((*[4][3]float64)(x), (*[4][4]float64)(y))
	}}
}
func a6() run[float64] {
	m := new(A6)
	return run[float64]{m, func(x [][3]float64, y [][4]float64) float64 {
		return m.Backward((*[6][3]float64)(x), (*[6][4]float64)(y))
	}}
}
func a8() run[float64] {
	m := new(A8)
	return run[float64]{m, func(x [][3]float64, y [][4]float64) float64 {
		return m.Backward((*[8][3]float64)(x), (*[8][4]float64)(y))
	}}
}

// data is a dataset of 64 rows: inputs, and one-hot classes of a rule
// the network can learn.
func data[T float32 | float64]() ([][3]T, [][4]T) {
	r := rand.New(rand.NewPCG(3, 5))
	xs, ys := make([][3]T, 64), make([][4]T, 64)
	for i := range xs {
		for j := range 3 {
			xs[i][j] = T(2*r.Float64() - 1)
		}
		c := 0
		if xs[i][0] > 0 {
			c++
		}
		if xs[i][1]+xs[i][2] > 0 {
			c += 2
		}
		ys[i][c] = 1
	}
	return xs, ys
}

// batch is the global batch of step s, n rows (the dataset's first
// len(rows)/n*n rows, in turn).
func batch[T any](rows []T, s, n int) []T {
	lo := s * n % (len(rows) / n * n)
	return rows[lo : lo+n]
}

// params flattens a model's parameters to float64.
func params(m trainer) []float64 {
	var out []float64
	for _, t := range m.ParamTensors() {
		for _, v := range t.Data32 {
			out = append(out, float64(v))
		}
		out = append(out, t.Data64...)
	}
	return out
}

// checksum hashes the parameters' bits.
func checksum(m trainer) float64 {
	h := uint64(14695981039346656037)
	for _, v := range params(m) {
		h ^= math.Float64bits(v)
		h *= 1099511628211
	}
	return float64(h >> 12) // exact in a float64
}

// trainRanks trains rank model rk on its shard of each global batch of
// size*b rows for steps steps, starting from rank 0's Init(7) (the other
// ranks Init with another seed: BroadcastParams must replace it), and
// checks at every step that every rank holds rank 0's parameters, bit
// for bit. It returns the final parameters.
func trainRanks[T float32 | float64](t *testing.T, c dist.Comm, rk run[T], b int) []float64 {
	rk.m.Init(uint64(7 + 100*c.Rank()))
	return stepRanks(t, c, rk, b, 0, steps)
}

// stepRanks broadcasts rank 0's state and trains steps [from, to) on the
// ranks as trainRanks does.
func stepRanks[T float32 | float64](t *testing.T, c dist.Comm, rk run[T], b, from, to int) []float64 {
	xs, ys := data[T]()
	if err := rk.m.BroadcastParams(c, 0); err != nil {
		t.Fatal(err)
	}
	n := c.Size() * b
	for s := from; s < to; s++ {
		lo, hi := dist.Shard(n, c.Rank(), c.Size())
		rk.backward(batch(xs, s, n)[lo:hi], batch(ys, s, n)[lo:hi])
		if err := rk.m.SyncGrads(c); err != nil {
			t.Fatal(err)
		}
		rk.m.Update()
		sum := [1]float64{checksum(rk.m)}
		root := sum
		if err := c.Broadcast64(root[:], 0); err != nil {
			t.Fatal(err)
		}
		if sum != root {
			t.Fatalf("rank %d: step %d: parameters differ from rank 0's", c.Rank(), s+1)
		}
	}
	return params(rk.m)
}

// trainOne trains model full on the whole global batches in one process.
func trainOne[T float32 | float64](full run[T], n int) []float64 {
	full.m.Init(7)
	return stepOne(full, n, 0, steps)
}

// stepOne trains steps [from, to) of full in one process.
func stepOne[T float32 | float64](full run[T], n, from, to int) []float64 {
	xs, ys := data[T]()
	for s := from; s < to; s++ {
		full.backward(batch(xs, s, n), batch(ys, s, n))
		full.m.Update()
	}
	return params(full.m)
}

// compare checks the ranks' parameters against one process's: the
// largest difference relative to the largest parameter (the differences
// are rounding: the ranks sum each gradient in two halves, then halve
// it), and logs the largest elementwise relative difference too.
func compare(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	diff, scale, elem := 0.0, 0.0, 0.0
	for i := range want {
		d := math.Abs(got[i] - want[i])
		diff, scale = max(diff, d), max(scale, math.Abs(want[i]))
		elem = max(elem, d/max(math.Abs(want[i]), 1e-3))
	}
	if len(got) != len(want) || diff > tol*scale {
		t.Errorf("%s: %d parameters, largest difference from one process %.3g of the largest parameter (want at most %g)", what, len(got), diff/scale, tol)
	}
	t.Logf("%s: largest difference %.3g of the largest parameter (elementwise at most %.3g)", what, diff/scale, elem)
}

// TestDataParallel trains on 2, 3 and 4 ranks under mpirun (TestRank); runs
// 2 ranks of which one holds another model (it must be refused before
// any update); and saves a checkpoint from rank 0 halfway through a run
// on 2 ranks, then resumes it on 4 ranks and on 1, each matching one
// process resuming on the whole batches.
func TestDataParallel(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("a rank")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (Debian: openmpi-bin): %v", err)
	}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	for _, c := range []struct {
		n    int
		mode string
	}{{2, "train"}, {3, "train"}, {4, "train"}, {2, "mismatch"}, {2, "save"}, {4, "resume"}, {1, "resume"}} {
		cmd := exec.Command(mpirun, "--oversubscribe", "--timeout", "120", "-np", strconv.Itoa(c.n), os.Args[0], "-test.run", "^TestRank$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", modeEnv+"="+c.mode, ckptEnv+"="+ckpt, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%d ranks, %s: %v\n%s", c.n, c.mode, err, out)
		}
		if got := strings.Count(string(out), "--- PASS: TestRank"); got != c.n {
			t.Errorf("%d ranks, %s: %d passed:\n%s", c.n, c.mode, got, out)
		}
		t.Logf("%d ranks, %s:\n%s", c.n, c.mode, out)
	}
}

// TestRank is one rank of TestDataParallel.
func TestRank(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestDataParallel under mpirun")
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const b = 2
	switch mode := os.Getenv(modeEnv); mode {
	case "train":
		gotS := trainRanks(t, c, s2(), b)
		gotA := trainRanks(t, c, a2(), b)
		if c.Rank() != 0 {
			return
		}
		fullS := map[int]func() run[float32]{2: s4, 3: s6, 4: s8}[c.Size()]()
		fullA := map[int]func() run[float64]{2: a4, 3: a6, 4: a8}[c.Size()]()
		compare(t, fmt.Sprintf("float32 SGD, %d ranks", c.Size()), gotS, trainOne(fullS, c.Size()*b), 1e-6)
		compare(t, fmt.Sprintf("float64 AdamW, %d ranks", c.Size()), gotA, trainOne(fullA, c.Size()*b), 1e-12)
	case "mismatch":
		// The last rank runs the network in float64, the others in
		// float32: the same parameter shapes, another model.
		var m trainer = new(S2)
		if c.Rank() == c.Size()-1 {
			m = new(A2)
		}
		m.Init(1)
		err := m.BroadcastParams(c, 0)
		if !errors.Is(err, dist.ErrMismatch) {
			t.Fatalf("rank %d: BroadcastParams with different models: %v", c.Rank(), err)
		}
		t.Logf("rank %d: %v", c.Rank(), err)
	case "save":
		// Half the run on these ranks; rank 0 writes the checkpoint.
		rk := s2()
		rk.m.Init(uint64(7 + 100*c.Rank()))
		stepRanks(t, c, rk, b, 0, steps/2)
		if c.Rank() == 0 {
			var buf bytes.Buffer
			if err := rk.m.SaveCheckpoint(&buf); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(os.Getenv(ckptEnv), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	case "resume":
		// The other half on another number of ranks: rank 0 loads the
		// checkpoint, BroadcastParams gives it to the others; one process
		// resuming from it on the whole batches must agree.
		b2, err := os.ReadFile(os.Getenv(ckptEnv))
		if err != nil {
			t.Fatal(err)
		}
		rk := s2()
		rk.m.Init(uint64(100 + c.Rank()))
		if c.Rank() == 0 {
			if err := rk.m.LoadCheckpoint(bytes.NewReader(b2)); err != nil {
				t.Fatal(err)
			}
		}
		got := stepRanks(t, c, rk, b, steps/2, steps)
		if c.Rank() != 0 {
			return
		}
		full := map[int]func() run[float32]{1: s2, 2: s4, 3: s6, 4: s8}[c.Size()]()
		if err := full.m.LoadCheckpoint(bytes.NewReader(b2)); err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("resumed on %d ranks", c.Size()), got, stepOne(full, c.Size()*b, steps/2, steps), 1e-6)
	default:
		t.Fatalf("unknown mode %q", mode)
	}
}
