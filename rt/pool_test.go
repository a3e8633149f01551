package rt

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sumTask writes, into out[i], a fixed-order sum depending on i only.
type sumTask struct {
	in  []float32
	out []float32
}

func (t *sumTask) Part(i int) {
	n := len(t.in) / len(t.out)
	s := float32(0)
	for _, v := range t.in[i*n : (i+1)*n] {
		s += v * 1.0001
	}
	t.out[i] = s
}

func newSumTask(parts int) *sumTask {
	t := &sumTask{in: make([]float32, parts*1000), out: make([]float32, parts)}
	for i := range t.in {
		t.in[i] = float32(i%97) * 0.37
	}
	return t
}

// serial is the reference: every part in order on one goroutine.
func serial(parts int) []float32 {
	t := newSumTask(parts)
	for i := range parts {
		t.Part(i)
	}
	return t.out
}

func TestPoolRunsEveryPartOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 4, 7} {
		p := NewPool(threads)
		for _, parts := range []int{0, 1, 2, 3, 16, 33} {
			task := newSumTask(parts)
			for i := range task.out {
				task.out[i] = -1
			}
			p.Run(task, parts)
			want := serial(parts)
			for i := range want {
				if task.out[i] != want[i] {
					t.Fatalf("threads %d parts %d: out[%d] = %v, want %v", threads, parts, i, task.out[i], want[i])
				}
			}
		}
		p.Close()
		p.Close()
	}
}

type countTask struct{ hits []int32 }

func (t *countTask) Part(i int) { t.hits[i]++ }

func TestPoolCountsAndNil(t *testing.T) {
	var nilPool *Pool
	if nilPool.Threads() != DefaultPool().Threads() {
		t.Fatalf("nil pool threads = %d, want the default's", nilPool.Threads())
	}
	for _, p := range []*Pool{nilPool, NewPool(4)} {
		task := &countTask{hits: make([]int32, 50)}
		for range 20 {
			p.Run(task, 50)
		}
		for i, h := range task.hits {
			if h != 20 {
				t.Fatalf("part %d ran %d times, want 20", i, h)
			}
		}
		p.Close()
		// After Close the parts still run, on the caller.
		p.Run(task, 50)
		if task.hits[49] != 21 {
			t.Fatalf("after Close: part ran %d times, want 21", task.hits[49])
		}
	}
	if n := NewPool(0).Threads(); n != runtime.GOMAXPROCS(0) {
		t.Fatalf("NewPool(0).Threads() = %d, want GOMAXPROCS %d", n, runtime.GOMAXPROCS(0))
	}
}

// Several goroutines share one pool (several models in a process): every
// call still runs each of its parts once, with the same results.
func TestPoolConcurrentCallers(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	want := serial(24)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task := newSumTask(24)
			for range 50 {
				p.Run(task, 24)
				for i := range want {
					if task.out[i] != want[i] {
						errs <- "mismatch"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// Spinning workers run every part once too, also across back-to-back
// calls and concurrent callers.
func TestPoolSpin(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	p.SetSpin(1000)
	task := &countTask{hits: make([]int32, 16)}
	for range 200 {
		p.Run(task, 16)
	}
	for i, h := range task.hits {
		if h != 200 {
			t.Fatalf("part %d ran %d times, want 200", i, h)
		}
	}
	want := serial(24)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newSumTask(24)
			for range 20 {
				p.Run(st, 24)
				for i := range want {
					if st.out[i] != want[i] {
						t.Error("mismatch")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestPoolAllocs(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	task := newSumTask(8)
	p.Run(task, 8) // start the workers
	if a := testing.AllocsPerRun(100, func() { p.Run(task, 8) }); a != 0 {
		t.Fatalf("Run allocates %v per call", a)
	}
}

func TestParseThreads(t *testing.T) {
	for s, want := range map[string]int{"": 0, " 3 ": 3, "1": 1, "0": 0} {
		if n, err := ParseThreads(s); err != nil || n != want {
			t.Errorf("ParseThreads(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
	for s, want := range map[string]int{"1024": 1024, "+7": 7} {
		if n, err := ParseThreads(s); err != nil || n != want {
			t.Errorf("ParseThreads(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"-1", "two", "1.5", "1025", "1000000", "99999999999999999999999", strings.Repeat("9", 1<<16)} {
		_, err := ParseThreads(s)
		if err == nil {
			t.Errorf("ParseThreads(%q): no error", s)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, ThreadsEnvVar+"=") || len(msg) > 200 {
			t.Errorf("ParseThreads(%.40q): the error does not name the variable, or quotes too much: %.300s", s, msg)
		}
	}
}

// TestThreadsCapped: a mistyped OCANNLGEN_THREADS (a million) neither
// starts a million workers nor passes silently.
func TestThreadsCapped(t *testing.T) {
	p := NewPool(1_000_000)
	defer p.Close()
	if p.Threads() != MaxThreads {
		t.Fatalf("NewPool(1e6).Threads() = %d, want %d", p.Threads(), MaxThreads)
	}
	before := runtime.NumGoroutine()
	p.Run(newSumTask(8), 8)
	if started := runtime.NumGoroutine() - before; started > MaxThreads {
		t.Errorf("a call started %d goroutines, want at most %d", started, MaxThreads)
	}
	var warn strings.Builder
	if n := defaultThreads("1000000", &warn); n != 0 || !strings.Contains(warn.String(), "OCANNLGEN_THREADS=\"1000000\": at most 1024 threads") || !strings.Contains(warn.String(), "using GOMAXPROCS") {
		t.Errorf("defaultThreads(1000000) = %d, warning %q", n, warn.String())
	}
	warn.Reset()
	if n := defaultThreads("3", &warn); n != 3 || warn.Len() != 0 {
		t.Errorf("defaultThreads(3) = %d, warning %q", n, warn.String())
	}
}

func TestDefaultPool(t *testing.T) {
	d := DefaultPool()
	if d == nil || DefaultPool() != d {
		t.Fatal("DefaultPool not stable")
	}
	one := NewPool(1)
	if prev := SetDefaultPool(one); prev != d {
		t.Fatal("SetDefaultPool did not return the previous pool")
	}
	if DefaultPool() != one {
		t.Fatal("SetDefaultPool had no effect")
	}
	SetDefaultPool(d)
}

func BenchmarkPoolRun(b *testing.B) {
	p := NewPool(2)
	defer p.Close()
	task := newSumTask(8)
	b.ReportAllocs()
	for b.Loop() {
		p.Run(task, 8)
	}
}

func TestRecords(t *testing.T) {
	var r Records[sumTask]
	a := r.Get()
	b := r.Get()
	if a == b {
		t.Fatal("two Gets returned one record")
	}
	r.Put(a)
	if r.Get() != a {
		t.Fatal("Get did not reuse the record given back")
	}
	r.Put(a)
	if n := testing.AllocsPerRun(100, func() { r.Put(r.Get()) }); n != 0 {
		t.Fatalf("Get/Put allocate %v", n)
	}
}

// A region runs many nests back to back (a kernel call): every part of
// every nest runs once, with the serial results, on 1 to 7 threads,
// with and without region spinning.
func TestPoolRegion(t *testing.T) {
	for _, threads := range []int{1, 2, 4, 7} {
		for _, spin := range []time.Duration{0, DefaultRegionSpin} {
			p := NewPool(threads)
			p.SetRegionSpin(spin)
			for range 30 {
				r := p.Enter()
				for _, parts := range []int{0, 1, 2, 3, 16, 33} {
					task := newSumTask(parts)
					for i := range task.out {
						task.out[i] = -1
					}
					r.Run(task, parts)
					want := serial(parts)
					for i := range want {
						if task.out[i] != want[i] {
							t.Fatalf("threads %d parts %d: out[%d] = %v, want %v", threads, parts, i, task.out[i], want[i])
						}
					}
				}
				r.Leave()
			}
			p.Close()
		}
	}
	var zero Region
	task := &countTask{hits: make([]int32, 5)}
	zero.Run(task, 5)
	zero.Leave()
	if task.hits[4] != 1 {
		t.Fatalf("zero Region ran part 4 %d times, want 1", task.hits[4])
	}
}

// Several goroutines enter regions of one pool at once (several models
// sharing a pool), and a region's holder calls Run and Enter on the same
// pool again (serial, never a deadlock): every part runs once.
func TestPoolRegionConcurrent(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	want := serial(24)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newSumTask(24)
			for it := range 40 {
				r := p.Enter()
				for range 3 {
					r.Run(st, 24)
					if g == 0 && it%2 == 0 {
						p.Run(st, 24) // inside our own region: serial
						inner := p.Enter()
						inner.Run(st, 24)
						inner.Leave()
					}
					for i := range want {
						if st.out[i] != want[i] {
							t.Error("mismatch")
							r.Leave()
							return
						}
					}
				}
				r.Leave()
			}
		}()
	}
	wg.Wait()
	// After the regions the workers serve plain calls again.
	task := &countTask{hits: make([]int32, 16)}
	for range 50 {
		p.Run(task, 16)
	}
	for i, h := range task.hits {
		if h != 50 {
			t.Fatalf("part %d ran %d times, want 50", i, h)
		}
	}
}

func TestPoolRegionAllocs(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	task := newSumTask(8)
	p.Run(task, 8) // start the workers
	if a := testing.AllocsPerRun(100, func() {
		r := p.Enter()
		r.Run(task, 8)
		r.Run(task, 8)
		r.Leave()
	}); a != 0 {
		t.Fatalf("a region allocates %v per call", a)
	}
}

// A straggler (a barrier wait over straggleWait and over two of the
// caller's parts) makes the pool run serially for minBackoff, doubling
// while stragglers follow within a second, up to the limit; short waits
// and a limit of 0 do nothing; the parts still all run once.
func TestPoolStraggleBackoff(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	p.noteWait(straggleWait/2, time.Microsecond)
	p.noteWait(2*straggleWait, 3*straggleWait/2)
	if p.backingOff() {
		t.Fatal("backing off after waits that are no stragglers")
	}
	for i := range straggleEvents - 1 {
		p.noteWait(2*straggleWait, time.Microsecond)
		if p.backingOff() {
			t.Fatalf("backing off after %d stragglers", i+1)
		}
	}
	for i := range p.events {
		p.events[i] -= int64(straggleWindow) // they came long ago
	}
	p.noteWait(2*straggleWait, time.Microsecond)
	if p.backingOff() {
		t.Fatal("backing off after stragglers spread over more than straggleWindow")
	}
	p.noteWait(2*straggleWait, time.Microsecond)
	if p.backingOff() {
		t.Fatal("backing off after one straggler of the window too few")
	}
	p.noteWait(2*straggleWait, time.Microsecond) // straggleEvents in the window
	if !p.backingOff() || p.backoff.Load() != int64(minBackoff) {
		t.Fatalf("after a straggler: backing off %v for %v, want %v", p.backingOff(), time.Duration(p.backoff.Load()), minBackoff)
	}
	if r := p.Enter(); r.p != nil {
		r.Leave()
		t.Fatal("Enter got the workers while backing off")
	}
	task := &countTask{hits: make([]int32, 8)}
	p.Run(task, 8)
	r := Region{p: p, threads: 2} // a region entered before the straggler
	r.Run(task, 8)
	for i, h := range task.hits {
		if h != 2 {
			t.Fatalf("part %d ran %d times, want 2", i, h)
		}
	}
	if st := p.Stats(); st.Stalls != 5 || st.Backoffs != 1 || st.SerialRegions != 2 || st.SerialNests != 1 || st.Nests != 0 {
		t.Fatalf("stats while backing off: %+v, want 5 stalls, 1 back-off, 2 serial regions (Enter, Run), 1 serial nest, no nest on the workers", st)
	}
	p.noteWait(2*straggleWait, time.Microsecond)
	if got := time.Duration(p.backoff.Load()); got != 2*minBackoff {
		t.Fatalf("second straggler: back-off %v, want %v", got, 2*minBackoff)
	}
	p.SetStraggleBackoff(3 * minBackoff)
	p.noteWait(2*straggleWait, time.Microsecond)
	if got := time.Duration(p.backoff.Load()); got != 3*minBackoff {
		t.Fatalf("third straggler: back-off %v, want the limit %v", got, 3*minBackoff)
	}
	p.serialUntil.Store(p.now() - 1) // the back-off is over
	if r := p.Enter(); r.p == nil {
		t.Fatal("Enter still serial after the back-off")
	} else {
		r.Leave()
	}
	p.SetStraggleBackoff(0)
	p.noteWait(time.Second, time.Microsecond)
	if p.backingOff() {
		t.Fatal("backing off with the back-off turned off")
	}
}

// Stats counts every nest run on the workers and every part once,
// whoever ran it; ResetStats clears the counts.
func TestPoolStats(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("GOMAXPROCS 1: no call uses the workers")
	}
	p := NewPool(2)
	defer p.Close()
	p.SetStraggleBackoff(0) // a shared test machine must not make the calls serial
	task := &countTask{hits: make([]int32, 16)}
	for range 3 {
		p.Run(task, 16)
	}
	r := p.Enter()
	r.Run(task, 16)
	r.RunSeq(16, task, task)
	r.Leave()
	st := p.Stats()
	if st.Nests != 5 || st.CallerParts+st.WorkerParts != 5*16 || st.SerialRegions != 0 || st.Backoffs != 0 {
		t.Fatalf("stats %+v: want 5 nests of 16 parts on the workers, nothing serial", st)
	}
	if st.CallerNests > st.Nests || st.WaitNanos < 0 || st.Wakes < 0 {
		t.Fatalf("stats %+v out of range", st)
	}
	t.Logf("%+v", st)
	p.ResetStats()
	if st := p.Stats(); st != (PoolStats{}) {
		t.Fatalf("after ResetStats: %+v", st)
	}
}

// absentNests nests in a row whose parts the caller ran all of (the
// worker never got a core) back off too; a nest the worker helped with
// restarts the count.
func TestPoolAbsentWorkerBackoff(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for range absentNests - 1 {
		p.noteParts(8, 8)
	}
	p.noteParts(5, 8)
	for range absentNests - 1 {
		p.noteParts(8, 8)
	}
	if p.backingOff() {
		t.Fatal("backing off before absentNests nests in a row")
	}
	p.noteParts(8, 8)
	if p.backingOff() {
		t.Fatal("backing off after one run of absentNests nests (a lone stall)")
	}
	for range (straggleEvents - 1) * absentNests {
		p.noteParts(8, 8)
	}
	if !p.backingOff() {
		t.Fatalf("not backing off after %d runs of absentNests nests in a row", straggleEvents)
	}
}

// stepTask is one step of a chain over rows: part i sets row i of out to
// f(row i of in) and panics when row i of in is not ready (its ready
// flag, set by the previous step's part i, is missing).
type stepTask struct {
	in, out     []float32
	ready, done []bool
	rows, step  int
}

func (t *stepTask) Part(i int) {
	for r := i * t.rows; r < (i+1)*t.rows; r++ {
		if t.ready != nil && !t.ready[r] {
			panic("row read before the earlier task wrote it")
		}
		t.out[r] = t.in[r]*1.5 + float32(t.step)
		t.done[r] = true
	}
}

// RunSeq runs part i of each task in order (a later task's part reads
// what the earlier task's same part wrote), every part once, on the
// workers and in a serial region, and allocates nothing.
func TestRegionRunSeq(t *testing.T) {
	const parts, rows, steps = 12, 50, 4
	build := func() []*stepTask {
		bufs := make([][]float32, steps+1)
		flags := make([][]bool, steps+1)
		for s := range bufs {
			bufs[s] = make([]float32, parts*rows)
			flags[s] = make([]bool, parts*rows)
		}
		for r := range bufs[0] {
			bufs[0][r] = float32(r % 7)
		}
		var ts []*stepTask
		for s := range steps {
			st := &stepTask{in: bufs[s], out: bufs[s+1], done: flags[s+1], rows: rows, step: s}
			if s > 0 {
				st.ready = flags[s]
			}
			ts = append(ts, st)
		}
		return ts
	}
	check := func(ts []*stepTask, what string) {
		for r, v := range ts[steps-1].out {
			want := float32(r % 7)
			for s := range steps {
				want = want*1.5 + float32(s)
			}
			if v != want {
				t.Fatalf("%s: row %d = %v, want %v", what, r, v, want)
			}
		}
	}
	for _, threads := range []int{1, 2, 4} {
		p := NewPool(threads)
		for range 20 {
			ts := build()
			r := p.Enter()
			r.RunSeq(parts, ts[0], ts[1], ts[2], ts[3])
			r.Leave()
			check(ts, "pool")
		}
		p.Close()
	}
	ts := build()
	var zero Region
	zero.RunSeq(parts, ts[0], ts[1], ts[2], ts[3])
	check(ts, "serial region")

	p := NewPool(2)
	defer p.Close()
	ts = build()
	p.Run(ts[0], parts) // start the workers
	if a := testing.AllocsPerRun(100, func() {
		r := p.Enter()
		r.RunSeq(parts, ts[0], ts[1])
		r.RunSeq(parts, ts[2], ts[3])
		r.Leave()
	}); a != 0 {
		t.Fatalf("RunSeq allocates %v per call", a)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("RunSeq of MaxSeq+1 tasks did not panic")
		}
	}()
	many := make([]Task, MaxSeq+1)
	for i := range many {
		many[i] = ts[0]
	}
	r := p.Enter()
	defer r.Leave()
	r.RunSeq(parts, many...)
}

// orderTask records the order its parts ran in and counts each part.
type orderTask struct {
	mu    sync.Mutex
	order []int
	runs  []int
}

func (t *orderTask) Part(i int) {
	t.mu.Lock()
	t.order = append(t.order, i)
	t.runs[i]++
	t.mu.Unlock()
}

// TestPoolJobBlocks: a thread runs its own block of parts first, in order,
// then the rest of the others' blocks; every part runs once whatever the
// threads and parts.
func TestPoolJobBlocks(t *testing.T) {
	j := &job{claims: make([]claim, 3)}
	task := &orderTask{runs: make([]int, 8)}
	j.task, j.parts, j.blocks = task, 8, 3
	if n := j.work(1); n != 8 {
		t.Fatalf("work ran %d parts, want 8", n)
	}
	want := []int{2, 3, 4, 5, 6, 7, 0, 1} // blocks [0,2) [2,5) [5,8); thread 1 starts with [2,5)
	for i := range want {
		if task.order[i] != want[i] {
			t.Fatalf("order %v, want %v", task.order, want)
		}
	}
	for _, threads := range []int{2, 3, 4, 7} {
		p := NewPool(threads)
		for _, parts := range []int{1, 2, 3, 5, 8, 13, 64} {
			for _, region := range []bool{false, true} {
				task := &orderTask{runs: make([]int, parts)}
				if region {
					r := p.Enter()
					r.Run(task, parts)
					r.Run(task, parts)
					r.Leave()
				} else {
					p.Run(task, parts)
					p.Run(task, parts)
				}
				for i, n := range task.runs {
					if n != 2 {
						t.Fatalf("threads %d parts %d region %v: part %d ran %d times in two calls", threads, parts, region, i, n)
					}
				}
			}
		}
		p.Close()
	}
}

// scaleTask is a memory-light Go loop split into parts: each iteration
// of part j updates one cell of its slice, like a generated Go loop.
type scaleTask struct{ x, y []float32 }

func (t *scaleTask) Part(j int) {
	n := len(t.y) / 8
	y, x := t.y[j*n:(j+1)*n], t.x[j*n:(j+1)*n]
	for i := range y {
		y[i] = y[i]*0.999 + x[i]
	}
}

// BenchmarkPoolBreakEven measures the rule that decides whether a loop
// nest runs in parts (docs/design.md, Parallel loop nests; the table in
// docs/benchmarks.md): a nest of n Go loop iterations in 8 parts, run
// serially on the caller, as one pool call per nest (the worker polling
// from the previous call, or asleep), and as a nest of a region (a model
// kernel's nests share one). Run it with GOMAXPROCS=2 and compare the
// ns/op of the four forms at each size.
func BenchmarkPoolBreakEven(b *testing.B) {
	for _, lg := range []int{10, 11, 12, 13, 14, 15, 16} {
		n := 1 << lg
		// y starts 100 cells into its array so that x[i] and y[i] are not
		// 4 KiB apart (a load after a store to an address 4 KiB away
		// stalls on x86), whatever n.
		task := &scaleTask{x: make([]float32, n), y: make([]float32, n+100)[100:]}
		for i := range task.x {
			task.x[i] = float32(i%13) * 0.25
		}
		size := "iters=2^" + strconv.Itoa(lg)
		b.Run(size+"/serial", func(b *testing.B) {
			for b.Loop() {
				for j := range 8 {
					task.Part(j)
				}
			}
		})
		for _, asleep := range []bool{false, true} {
			name := "/pool"
			if asleep {
				name = "/pool-asleep"
			}
			b.Run(size+name, func(b *testing.B) {
				p := NewPool(2)
				defer p.Close()
				if asleep {
					p.SetRegionSpin(0)
				}
				b.ReportAllocs()
				for b.Loop() {
					p.Run(task, 8)
				}
			})
		}
		b.Run(size+"/region", func(b *testing.B) {
			p := NewPool(2)
			defer p.Close()
			r := p.Enter()
			defer r.Leave()
			b.ReportAllocs()
			for b.Loop() {
				r.Run(task, 8)
			}
		})
	}
}

// TestShare: the shares of every part count cover 0..n in order, each
// one unit longer than the next at most, the longer ones first.
func TestShare(t *testing.T) {
	for n := range 40 {
		for parts := 1; parts <= 9; parts++ {
			next, prev := 0, n+1
			for i := range parts {
				lo, hi := Share(n, i, parts)
				if lo != next || hi < lo || hi-lo > prev || prev-(hi-lo) > 1 && i > 0 {
					t.Fatalf("Share(%d, %d, %d) = [%d, %d) after %d (previous length %d)", n, i, parts, lo, hi, next, prev)
				}
				next, prev = hi, hi-lo
			}
			if next != n {
				t.Fatalf("the %d shares of %d end at %d", parts, n, next)
			}
		}
	}
}
