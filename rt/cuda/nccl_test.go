//go:build cuda

package cuda

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// goComm is a dist.Comm of goroutines with only Broadcast64, what
// OpenNCCL uses (to pass rank 0's NCCL id).
type goComm struct {
	g    *goGroup
	rank int
}

type goGroup struct {
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	gen     int
	root    []float64
}

func goComms(n int) []dist.Comm {
	g := &goGroup{n: n}
	g.cond = sync.NewCond(&g.mu)
	cs := make([]dist.Comm, n)
	for r := range cs {
		cs[r] = &goComm{g, r}
	}
	return cs
}

var errUnused = errors.New("goComm: not used by OpenNCCL")

func (c *goComm) Rank() int                        { return c.rank }
func (c *goComm) Size() int                        { return c.g.n }
func (c *goComm) AllReduceSum32([]float32) error   { return errUnused }
func (c *goComm) AllReduceSum64([]float64) error   { return errUnused }
func (c *goComm) Broadcast32([]float32, int) error { return errUnused }
func (c *goComm) Barrier() error                   { return errUnused }
func (c *goComm) Fail(error) error                 { return nil }
func (c *goComm) Close() error                     { return nil }
func (c *goComm) Broadcast64(buf []float64, root int) error {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.rank == root {
		g.root = append([]float64(nil), buf...)
	}
	gen := g.gen
	if g.arrived++; g.arrived == g.n {
		g.arrived, g.gen = 0, g.gen+1
		g.cond.Broadcast()
	} else {
		for gen == g.gen {
			g.cond.Wait()
		}
	}
	copy(buf, g.root)
	return nil
}

// fakeLibs builds testdata/fakecuda.c and fakenccl.c and points the
// shim at them.
func fakeLibs(t *testing.T) (nccl string) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	cuda, nccl := filepath.Join(dir, "libfakecuda.so"), filepath.Join(dir, "libfakenccl.so")
	for _, b := range [][]string{{cuda, "fakecuda.c"}, {nccl, "fakenccl.c"}} {
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", b[0], filepath.Join("testdata", b[1]), "-lpthread").CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", b[1], err, out)
		}
	}
	t.Setenv("OCANNL_LIBCUDA", cuda)
	t.Setenv("OCANNL_NVRTC", cuda)
	return nccl
}

// onRanks runs f on n ranks (goroutines), each with its own device,
// session and NCCL communicator, and returns their errors.
func onRanks(t *testing.T, n int, timeout time.Duration, f func(r int, s *Session, nc *NCCL) error) []error {
	t.Helper()
	cs := goComms(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := OpenDevice(r)
			if err != nil {
				errs[r] = err
				return
			}
			defer d.Close()
			s, err := d.NewSession([]byte(src))
			if err != nil {
				errs[r] = err
				return
			}
			defer s.Close()
			nc, err := OpenNCCL(d, cs[r], timeout)
			if err != nil {
				errs[r] = err
				return
			}
			defer nc.Close()
			errs[r] = f(r, s, nc)
		}()
	}
	wg.Wait()
	return errs
}

// TestNCCLWithFake runs the NCCL shim against testdata/fakenccl.c (its
// ranks are goroutines) over the fake driver: a missing NCCL named by
// OpenNCCL; float32 and float64 buffers averaged on 2 and 3 ranks, the
// same on every rank; a rank that does not come reported to the others
// as NCCL's asynchronous error; an initialization and a stream that do
// not finish stopped at the deadline.
func TestNCCLWithFake(t *testing.T) {
	nccl := fakeLibs(t)
	t.Setenv("OCANNL_NCCL", filepath.Join(t.TempDir(), "missing.so"))
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenNCCL(d, goComms(1)[0], 0); err == nil || !strings.Contains(err.Error(), "loading NCCL") {
		t.Errorf("OpenNCCL without NCCL: %v", err)
	}
	d.Close()
	t.Setenv("OCANNL_NCCL", nccl)

	for _, n := range []int{2, 3} {
		got := make([][]float64, n)
		errs := onRanks(t, n, time.Minute, func(r int, s *Session, nc *NCCL) error {
			if err := s.Upload("g32", "float32", []float32{float32(r + 1), float32(2 * r), 0.5}); err != nil {
				return err
			}
			if err := s.Upload("g64", "float64", []float64{float64(3 * r), -1}); err != nil {
				return err
			}
			if err := s.MeanAcross(nc, "g32", "g64"); err != nil {
				return err
			}
			a, b := make([]float32, 3), make([]float64, 2)
			if err := s.Download("g32", a); err != nil {
				return err
			}
			if err := s.Download("g64", b); err != nil {
				return err
			}
			got[r] = []float64{float64(a[0]), float64(a[1]), float64(a[2]), b[0], b[1]}
			if err := s.MeanAcross(nc, "nothing"); err == nil {
				t.Errorf("rank %d: MeanAcross of a buffer that does not exist", r)
			}
			if m, err := s.Model("M"); err != nil {
				return err
			} else if err := m.SyncGrads(nc); err == nil || !strings.Contains(err.Error(), "no loss with an optimizer") {
				t.Errorf("rank %d: SyncGrads of a model without a loss: %v", r, err)
			}
			return nil
		})
		m := float64(n+1) / 2 // the mean of 1..n
		want := []float64{m, 2 * (m - 1), 0.5, 3 * (m - 1), -1}
		for r := range n {
			if errs[r] != nil || !slices.Equal(got[r], want) {
				t.Errorf("%d ranks: rank %d: %v, %v; want %v", n, r, errs[r], got[r], want)
			}
		}
	}

	// Rank 1 never comes: rank 0's collective ends with NCCL's
	// asynchronous error, and the communicator stays failed.
	start := time.Now()
	errs := onRanks(t, 2, time.Minute, func(r int, s *Session, nc *NCCL) error {
		if err := s.Upload("g", "float32", []float32{1}); err != nil || r == 1 {
			return err
		}
		err := s.MeanAcross(nc, "g")
		if again := s.MeanAcross(nc, "g"); again == nil || again.Error() != err.Error() {
			t.Errorf("MeanAcross after a failure: %v", again)
		}
		return err
	})
	if errs[1] != nil || errs[0] == nil || !strings.Contains(errs[0].Error(), "remote process exited") || time.Since(start) > 20*time.Second {
		t.Errorf("a rank that does not come: %v (after %v)", errs, time.Since(start))
	}

	// Rank 1's initialization hangs: OpenNCCL returns at the deadline on
	// that rank (the fake's other ranks do not wait for it).
	t.Setenv("OCANNL_FAKE_INIT_HANG", "1")
	start = time.Now()
	errs = onRanks(t, 2, 200*time.Millisecond, func(r int, s *Session, nc *NCCL) error { return nil })
	if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "ncclCommInitRank did not complete within 200ms") || time.Since(start) > 10*time.Second {
		t.Errorf("an initialization that hangs: %v (after %v)", errs, time.Since(start))
	}
	t.Setenv("OCANNL_FAKE_INIT_HANG", "")

	// The stream never finishes: the deadline stops MeanAcross.
	t.Setenv("OCANNL_FAKE_BUSY", "1")
	errs = onRanks(t, 2, 100*time.Millisecond, func(r int, s *Session, nc *NCCL) error {
		if err := s.Upload("g", "float64", []float64{1}); err != nil {
			return err
		}
		return s.MeanAcross(nc, "g")
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "did not complete within 100ms") {
			t.Errorf("rank %d, a stream that does not finish: %v", r, err)
		}
	}
}
