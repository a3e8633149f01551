package dist

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// group is an in-process communicator of n ranks for testing the
// helpers: each collective meets at a barrier and rank 0's goroutine
// combines the buffers in rank order.
type group struct {
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	gen     int
	bufs32  [][]float32
	bufs64  [][]float64
}

type member struct {
	g    *group
	rank int
}

func newGroup(n int) []Comm {
	g := &group{n: n, bufs32: make([][]float32, n), bufs64: make([][]float64, n)}
	g.cond = sync.NewCond(&g.mu)
	cs := make([]Comm, n)
	for r := range cs {
		cs[r] = &member{g, r}
	}
	return cs
}

// meet runs combine once all ranks arrived, then releases them.
func (m *member) meet(combine func()) {
	g := m.g
	g.mu.Lock()
	gen := g.gen
	g.arrived++
	if g.arrived == g.n {
		combine()
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
	} else {
		for gen == g.gen {
			g.cond.Wait()
		}
	}
	g.mu.Unlock()
}

func (m *member) Rank() int { return m.rank }
func (m *member) Size() int { return m.g.n }
func (m *member) AllReduceSum32(buf []float32) error {
	m.g.mu.Lock()
	m.g.bufs32[m.rank] = buf
	m.g.mu.Unlock()
	m.meet(func() {
		for i := range buf {
			s := float32(0)
			for _, b := range m.g.bufs32 {
				s += b[i]
			}
			for _, b := range m.g.bufs32 {
				b[i] = s
			}
		}
	})
	return nil
}
func (m *member) AllReduceSum64(buf []float64) error {
	m.g.mu.Lock()
	m.g.bufs64[m.rank] = buf
	m.g.mu.Unlock()
	m.meet(func() {
		for i := range buf {
			s := 0.0
			for _, b := range m.g.bufs64 {
				s += b[i]
			}
			for _, b := range m.g.bufs64 {
				b[i] = s
			}
		}
	})
	return nil
}
func (m *member) Broadcast32(buf []float32, root int) error {
	m.g.mu.Lock()
	m.g.bufs32[m.rank] = buf
	m.g.mu.Unlock()
	m.meet(func() {
		for _, b := range m.g.bufs32 {
			copy(b, m.g.bufs32[root])
		}
	})
	return nil
}
func (m *member) Broadcast64(buf []float64, root int) error {
	m.g.mu.Lock()
	m.g.bufs64[m.rank] = buf
	m.g.mu.Unlock()
	m.meet(func() {
		for _, b := range m.g.bufs64 {
			copy(b, m.g.bufs64[root])
		}
	})
	return nil
}
func (m *member) Barrier() error   { m.meet(func() {}); return nil }
func (m *member) Close() error     { return nil }
func (m *member) Fail(error) error { return nil }

// onRanks runs f on every rank of an in-process group of n.
func onRanks(n int, f func(c Comm) error) []error {
	cs := newGroup(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = f(c) }()
	}
	wg.Wait()
	return errs
}

// TestShard: the shards cover [0, n) once, in order, as equal as possible.
func TestShard(t *testing.T) {
	for _, c := range []struct{ n, size int }{{10, 3}, {8, 4}, {2, 5}, {0, 2}, {7, 1}} {
		next := 0
		for r := range c.size {
			lo, hi := Shard(c.n, r, c.size)
			if lo != next || hi < lo || hi-lo > c.n/c.size+1 || hi-lo < c.n/c.size {
				t.Errorf("Shard(%d, %d, %d) = [%d, %d)", c.n, r, c.size, lo, hi)
			}
			next = hi
		}
		if next != c.n {
			t.Errorf("%+v: shards end at %d", c, next)
		}
	}
	if lo, hi := Shard(5, 3, 3); lo != 0 || hi != 0 {
		t.Errorf("a rank out of range gets [%d, %d)", lo, hi)
	}
}

// TestCheckSame: equal fingerprints pass; one different makes every rank
// fail, the different one saying so.
func TestCheckSame(t *testing.T) {
	for _, errs := range [][]error{onRanks(3, func(c Comm) error { return CheckSame(c, 77, nil) }), {CheckSame(Local(), 5, nil)}} {
		for r, err := range errs {
			if err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		}
	}
	errs := onRanks(3, func(c Comm) error {
		fp := uint32(77)
		if c.Rank() == 2 {
			fp = 78
		}
		return CheckSame(c, fp, nil)
	})
	for r, err := range errs {
		if !errors.Is(err, ErrMismatch) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	a, b, c := Fingerprint("float32", []int{3, 2}, []int{2}), Fingerprint("float32", []int{3}, []int{2, 2}), Fingerprint("float64", []int{3, 2}, []int{2})
	if a == b || a == c || a != Fingerprint("float32", []int{3, 2}, []int{2}) {
		t.Errorf("fingerprints %#x %#x %#x", a, b, c)
	}
}

// TestMeanGrads: every rank gets the mean of the ranks' buffers.
func TestMeanGrads(t *testing.T) {
	got := make([][]float64, 4)
	onRanks(4, func(c Comm) error {
		a, b := []float32{float32(c.Rank()), 1}, []float64{float64(c.Rank() * 2)}
		if err := MeanGrads32(c, a); err != nil {
			return err
		}
		if err := MeanGrads64(c, b); err != nil {
			return err
		}
		got[c.Rank()] = []float64{float64(a[0]), float64(a[1]), b[0]}
		return nil
	})
	for r, g := range got {
		if g[0] != 1.5 || g[1] != 1 || g[2] != 3 {
			t.Errorf("rank %d: %v", r, g)
		}
	}
}

// TestRankError: the message names the collective and the ranks, and the
// error wraps ErrRankFailed and the transport's error.
func TestRankError(t *testing.T) {
	cause := errors.New("MPI_Test failed")
	for _, c := range []struct {
		e    *RankError
		want string
	}{
		{&RankError{Call: "AllReduceSum32", Seq: 7, Ranks: []int{2}, Reason: "failed: bad data"}, "dist: AllReduceSum32 (collective 7): rank 2 failed: bad data"},
		{&RankError{Call: "Barrier", Seq: 1, Ranks: []int{0, 3}, Reason: "did not reach it within 1s"}, "dist: Barrier (collective 1): ranks 0, 3 did not reach it within 1s"},
		{&RankError{Call: "Broadcast64", Seq: 2, Reason: "did not complete", Err: cause}, "dist: Broadcast64 (collective 2): did not complete: MPI_Test failed"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		var err error = c.e
		if !errors.Is(err, ErrRankFailed) || errors.Is(err, cause) != (c.e.Err != nil) {
			t.Errorf("%v: does not wrap ErrRankFailed (%v) or its cause", err, errors.Is(err, ErrRankFailed))
		}
		var e *RankError
		if !errors.As(fmt.Errorf("SyncGrads: %w", err), &e) || e != c.e {
			t.Errorf("errors.As(%v) failed", err)
		}
	}
	if err := Local().Fail(errors.New("x")); err != nil {
		t.Errorf("Local().Fail: %v", err)
	}
}
