package rt

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Task is work split into a fixed number of independent parts, run by a
// [Pool]. Generated code implements it with one preallocated record per
// parallel loop nest (held in the kernel's scratch), so handing it to the
// pool allocates nothing. Part(i) must write only what no other part
// writes or reads; which goroutine runs a part must not matter.
type Task interface {
	// Part runs part i (0 <= i < parts).
	Part(i int)
}

// Pool runs the parts of a [Task] on persistent worker goroutines.
//
// A Pool of n threads uses the calling goroutine plus up to n-1 workers,
// and never more threads than runtime.GOMAXPROCS allows at the time of
// the call. The workers are started once, on the first call that can use
// them; a call starts no goroutine and allocates nothing. Results never
// depend on the number of threads: the parts are fixed by the caller
// (the generator), each part is run exactly once, and parts write
// disjoint memory, so the same inputs give the same bits on 1, 2 or 64
// threads.
//
// A Pool is safe for concurrent use. One call at a time uses the
// workers; a call made while another is using them runs its parts on the
// calling goroutine (so several models sharing a Pool never wait for
// each other, they only share the workers). A nil *Pool stands for the
// process-default pool ([DefaultPool]).
//
// A part that panics crashes the program when it runs on a worker (as a
// panic in any goroutine does); generated kernels check their arguments
// before handing out parts.
type Pool struct {
	n int // threads, >= 1

	mu      sync.Mutex // held by the one call using the workers
	once    sync.Once
	workers []chan struct{}
	closed  bool // set under mu

	// cur is the job being run (nil between calls): a worker takes a
	// reference on it, then checks it is still published, so the caller
	// waits only for workers actually running its parts, never for one
	// the operating system has not scheduled yet.
	cur   atomic.Pointer[job]
	epoch atomic.Uint64 // counts the jobs published
	spin  atomic.Int32  // see SetSpin
	job   job
}

// job is one call's work. task and parts are written by the caller
// holding mu before it publishes the job (Pool.cur).
type job struct {
	task  Task
	parts int64
	next  atomic.Int64 // the next part to claim
	refs  atomic.Int32 // workers inside work on this job
	// waiting: the caller sleeps on done until refs is 0.
	waiting atomic.Bool
	done    chan struct{}
}

// NewPool returns a pool of n threads (the calling goroutine counts as
// one); n <= 0 means runtime.GOMAXPROCS(0) at the time of the call.
// NewPool(1) runs everything on the calling goroutine. Workers are
// started lazily; call Close to stop them when the pool is no longer
// needed.
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Pool{n: max(n, 1)}
}

// Threads is the number of threads the pool was created with (a call
// uses at most min(Threads, GOMAXPROCS, parts)); for a nil pool, the
// default pool's.
func (p *Pool) Threads() int {
	if p == nil {
		return DefaultPool().n
	}
	return p.n
}

// Close stops the workers; later calls run every part on the calling
// goroutine. Close waits for a call in progress to finish. Closing twice
// is harmless; closing a nil pool does nothing (the default pool is never
// closed through it).
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, w := range p.workers {
		close(w)
	}
	p.workers = nil
}

// start launches the n-1 workers.
func (p *Pool) start() {
	p.job.done = make(chan struct{}, 1)
	p.workers = make([]chan struct{}, p.n-1)
	for i := range p.workers {
		w := make(chan struct{}, 1)
		p.workers[i] = w
		go p.worker(w)
	}
}

// worker runs parts of the published job each time it is woken, until
// its channel closes. A wake-up that comes late finds no job (or a later
// one, which it may help with: it holds a reference before it looks).
// After a job it looks for the next one up to spin times (yielding in
// between) before it sleeps again.
func (p *Pool) worker(wake chan struct{}) {
	var last uint64 // the epoch of the last job worked on
	for range wake {
		for idle := 0; idle <= int(p.spin.Load()); {
			e := p.epoch.Load()
			if j := p.cur.Load(); j != nil && e != last {
				j.refs.Add(1)
				if p.cur.Load() == j && p.epoch.Load() == e {
					j.work()
					last, idle = e, 0
				}
				j.release()
				continue
			}
			idle++
			if idle <= int(p.spin.Load()) {
				runtime.Gosched()
			}
		}
	}
}

// SetSpin sets how many times an idle worker looks for the next call's
// parts, yielding its thread in between, before it sleeps (0, the
// default: it sleeps at once). Spinning saves the wake-up of a sleeping
// worker (microseconds) when parallel nests follow each other closely, as
// in a training step, at the cost of CPU time while the pool is idle. It
// may be called at any time.
func (p *Pool) SetSpin(n int) {
	if p == nil {
		p = DefaultPool()
	}
	p.spin.Store(int32(max(n, 0)))
}

// release drops a worker's reference, waking the caller when it waits
// for the last one. (A token left over from an earlier wait only makes
// the caller look at refs once more.)
func (j *job) release() {
	if j.refs.Add(-1) == 0 && j.waiting.Load() {
		select {
		case j.done <- struct{}{}:
		default:
		}
	}
}

// work runs parts of the job until none is left.
func (j *job) work() {
	t, parts := j.task, j.parts
	for {
		i := j.next.Add(1) - 1
		if i >= parts {
			return
		}
		t.Part(int(i))
	}
}

// Run runs t.Part(i) for every i in 0..parts-1 and returns when all
// have returned. It allocates nothing and starts no goroutine (except
// the workers, on the first call that uses them).
func (p *Pool) Run(t Task, parts int) {
	if p == nil {
		p = DefaultPool()
	}
	threads := min(p.n, runtime.GOMAXPROCS(0), parts)
	if threads <= 1 || !p.mu.TryLock() {
		for i := range parts {
			t.Part(i)
		}
		return
	}
	defer p.mu.Unlock()
	if p.closed {
		for i := range parts {
			t.Part(i)
		}
		return
	}
	p.once.Do(p.start)
	j := &p.job
	j.task, j.parts = t, int64(parts)
	j.next.Store(0)
	p.epoch.Add(1)
	p.cur.Store(j)
	for _, w := range p.workers[:threads-1] {
		select {
		case w <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	j.work()
	// Every part is claimed; wait for the workers running the last ones:
	// a few yields, then asleep until the last one leaves (a busy wait
	// would take the CPU from the worker on a loaded machine).
	p.cur.Store(nil)
	for i := 0; i < 16 && j.refs.Load() != 0; i++ {
		runtime.Gosched()
	}
	if j.refs.Load() != 0 {
		j.waiting.Store(true)
		for j.refs.Load() != 0 {
			<-j.done
		}
		j.waiting.Store(false)
	}
	j.task = nil
}

// ThreadsEnvVar is the environment variable that sets the number of
// threads of the process-default pool ([DefaultPool]): a positive
// integer; unset, empty or invalid means runtime.GOMAXPROCS(0) when the
// default pool is first used.
const ThreadsEnvVar = "OCANNLGEN_THREADS"

// ParseThreads parses a value of OCANNLGEN_THREADS: 0 (meaning
// GOMAXPROCS) for an empty string, an error for anything but a
// non-negative integer.
func ParseThreads(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer", ThreadsEnvVar, s)
	}
	return n, nil
}

// defaultPool is the process-default pool: the one unavoidable piece of
// process-wide state (generated standalone kernels have no other place
// to find a pool). It is created once, on first use, and replaced only
// through SetDefaultPool (atomically).
var defaultPool atomic.Pointer[Pool]

var defaultOnce sync.Once

// DefaultPool returns the process-default pool, used by generated
// standalone kernels and by models whose Pool field is nil. It is
// created on first use with OCANNLGEN_THREADS threads (GOMAXPROCS when
// unset or invalid) unless SetDefaultPool was called first.
func DefaultPool() *Pool {
	if p := defaultPool.Load(); p != nil {
		return p
	}
	defaultOnce.Do(func() {
		n, _ := ParseThreads(os.Getenv(ThreadsEnvVar))
		defaultPool.CompareAndSwap(nil, NewPool(n))
	})
	return defaultPool.Load()
}

// SetDefaultPool makes p the process-default pool (NewPool(1) makes the
// whole process single-threaded) and returns the previous one, which it
// does not close. It is safe to call at any time: a kernel call already
// running keeps the pool it started with.
func SetDefaultPool(p *Pool) *Pool {
	if p == nil {
		p = NewPool(1)
	}
	DefaultPool() // settle the lazy default first
	return defaultPool.Swap(p)
}

// Records is a free list of task records of type T: generated kernels
// take one for each parallel loop nest they run and give it back after,
// so concurrent calls of one kernel get distinct records and a call
// allocates nothing once the list holds as many records as calls have
// run at the same time. The zero value is empty and ready; it is safe
// for concurrent use.
type Records[T any] struct {
	mu   sync.Mutex
	free []*T
}

// Get takes a record from the list, or allocates one when it is empty.
// The record holds what its last user left (generated code overwrites
// every field before use and clears them after).
func (r *Records[T]) Get() *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		t := r.free[n-1]
		r.free = r.free[:n-1]
		return t
	}
	return new(T)
}

// Put gives a record back.
func (r *Records[T]) Put(t *T) {
	r.mu.Lock()
	r.free = append(r.free, t)
	r.mu.Unlock()
}
