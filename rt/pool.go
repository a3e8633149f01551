package rt

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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

// Share is part i's share [lo, hi) of n units cut into parts parts:
// consecutive, as equal as possible, the first n%parts parts one unit
// longer (the packings in parts of rt/bf16; rt/dist.Shard cuts its ranks'
// examples the same way but keeps its own copy, since rt/dist depends on
// the standard library only). It requires 0 <= i < parts and n >= 0.
func Share(n, i, parts int) (lo, hi int) {
	q, r := n/parts, n%parts
	lo = i*q + min(i, r)
	hi = lo + q
	if i < r {
		hi++
	}
	return lo, hi
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
// The workers are used either by one [Pool.Run] or by one [Region] at a
// time: a generated kernel with several parallel loop nests enters a
// region at its start ([Pool.Enter]), runs every nest through it
// ([Region.Run]) and leaves it at its end, so the workers are woken once
// per kernel call and stay awake (spinning for a bounded time, see
// [Pool.SetRegionSpin]) between its nests.
//
// A Pool is safe for concurrent use. A call or region started while
// another goroutine holds the workers runs its parts on the calling
// goroutine (so several models sharing a Pool never wait for each other,
// they only share the workers, first come first served); so does a Run
// or Enter on a goroutine that already holds a region of the same pool
// (it never deadlocks). A nil *Pool stands for the process-default pool
// ([DefaultPool]).
//
// A part that panics crashes the program when it runs on a worker (as a
// panic in any goroutine does); generated kernels check their arguments
// before handing out parts.
type Pool struct {
	n int // threads, >= 1

	mu      sync.Mutex // held by the one call or region using the workers
	once    sync.Once
	workers []*poolWorker
	closed  bool // set under mu

	// cur is the job being run (nil between jobs): a worker takes a
	// reference on it, then checks it is still published, so the caller
	// waits only for workers actually running its parts, never for one
	// the operating system has not scheduled yet.
	cur    atomic.Pointer[job]
	epoch  atomic.Uint64 // counts the jobs published
	spin   atomic.Int32  // see SetSpin
	region atomic.Bool   // a region holds the workers (under mu)
	// regionSpin is how long (ns) an idle worker inside a region polls
	// for the next nest before it sleeps; see SetRegionSpin.
	regionSpin atomic.Int64
	job        job
	seq        seq // RunSeq's tasks (under mu)

	// The straggler back-off (see SetStraggleBackoff), in nanoseconds
	// since t0: calls run serially before serialUntil; backoff is the
	// last back-off's length, lastStraggle when it began.
	t0           time.Time
	maxBackoff   atomic.Int64
	serialUntil  atomic.Int64
	backoff      atomic.Int64
	lastStraggle atomic.Int64
	absent       int // nests in a row the worker took no part of (under mu)
	// events are the times (since t0; 0: none) of the last two
	// stragglers or absent-worker runs, under mu: see straggleEvents.
	events [straggleEvents - 1]int64

	stats poolCounters // see Stats
}

// PoolStats counts what a pool's calls did since it was made (or since
// the last ResetStats): the figures behind a thread count's speed-up.
// Every count is of parallel nests (a Run, or a Region's Run or RunSeq,
// of more than one part); a nest the caller runs alone because the pool
// is backing off or is held by another goroutine is not counted in
// Nests. Reading them costs nothing to the calls.
type PoolStats struct {
	// Nests is how many nests ran on the workers; SerialRegions how many
	// regions (and Runs) ran on the caller alone because the pool was
	// backing off after a straggler (SetStraggleBackoff), SerialNests how
	// many nests of a held region did, Stalls how many stalls were seen
	// (a straggler's barrier wait, or nests in a row whose every part
	// the caller ran), Backoffs how many back-offs they began.
	Nests, SerialRegions, SerialNests, Stalls, Backoffs int64
	// CallerParts and WorkerParts are the parts the caller and the
	// workers ran; CallerNests the nests whose every part the caller ran
	// (no worker came in time).
	CallerParts, WorkerParts, CallerNests int64
	// Wakes is how many times a caller woke a sleeping worker (a futex
	// wake-up); WaitNanos the caller's time at the barriers after its own
	// parts, waiting for the workers' last parts.
	Wakes, WaitNanos int64
}

// poolCounters are PoolStats' counts, updated atomically.
type poolCounters struct {
	nests, serialRegions, backoffs      atomic.Int64
	serialNests, stalls                 atomic.Int64
	callerParts, workerParts, callerAll atomic.Int64
	wakes, waitNanos                    atomic.Int64
}

// Stats returns the pool's counts (see PoolStats); for a nil pool, the
// default pool's.
func (p *Pool) Stats() PoolStats {
	if p == nil {
		p = DefaultPool()
	}
	c := &p.stats
	return PoolStats{
		Nests: c.nests.Load(), SerialRegions: c.serialRegions.Load(), SerialNests: c.serialNests.Load(), Stalls: c.stalls.Load(), Backoffs: c.backoffs.Load(),
		CallerParts: c.callerParts.Load(), WorkerParts: c.workerParts.Load(), CallerNests: c.callerAll.Load(),
		Wakes: c.wakes.Load(), WaitNanos: c.waitNanos.Load(),
	}
}

// ResetStats sets the pool's counts to zero.
func (p *Pool) ResetStats() {
	if p == nil {
		p = DefaultPool()
	}
	c := &p.stats
	for _, v := range []*atomic.Int64{&c.nests, &c.serialRegions, &c.serialNests, &c.stalls, &c.backoffs, &c.callerParts, &c.workerParts, &c.callerAll, &c.wakes, &c.waitNanos} {
		v.Store(0)
	}
}

// poolWorker is one worker goroutine's wake-up channel, whether it
// sleeps on it (so a job only signals workers that sleep) and its thread
// number (the caller is thread 0, the workers 1..n-1).
type poolWorker struct {
	wake     chan struct{}
	sleeping atomic.Bool
	thread   int
}

// claim counts the parts claimed from one thread's block of a job, on a
// cache line of its own.
type claim struct {
	next atomic.Int64
	_    [56]byte
}

// job is one parallel nest's work. task, parts and blocks are written
// by the caller holding mu before it publishes the job (Pool.cur).
//
// The parts are dealt in blocks, one per thread of the region: thread t
// first runs the parts of block t in order (parts [t*parts/blocks,
// (t+1)*parts/blocks)), then takes what is left of the other blocks. So
// when nothing straggles, a thread runs the same parts of every nest of
// a kernel call, the rows of the batch it wrote in one nest are in its
// own core's cache when it reads them in the next, and a straggling
// thread's parts are still taken by the others. Which thread runs a part
// never changes its result.
type job struct {
	task   Task
	parts  int64
	blocks int64
	claims []claim      // per block (len: the pool's threads)
	refs   atomic.Int32 // workers inside work on this job
	// waiting: the caller sleeps on done until refs is 0.
	waiting atomic.Bool
	done    chan struct{}
}

// DefaultRegionSpin is how long an idle worker polls for the next
// parallel nest of a [Region], or for the next call after one ends,
// before it sleeps, unless [Pool.SetRegionSpin] says otherwise: longer
// than the serial code between the nests of a training step, or between
// two training steps, usually runs (so the next nest finds the worker
// awake), short enough that a program that stops calling wastes little
// CPU time (at most this much per worker after its last call; OpenBLAS's
// and OpenMP's threads also poll after a call before they sleep).
const DefaultRegionSpin = 200 * time.Microsecond

// preemptedGap is the time between two looks at the clock of a polling
// worker (128 polls apart, well under a microsecond) beyond which it
// takes the thread to have been preempted.
const preemptedGap = 20 * time.Microsecond

// MaxThreads bounds the threads of a pool: [NewPool] reduces a larger n
// to it, and [ParseThreads] rejects a larger OCANNLGEN_THREADS. A call
// never uses more threads than GOMAXPROCS anyway; the bound keeps a
// mistyped value (1000000) from starting a million idle workers.
const MaxThreads = 1024

// NewPool returns a pool of n threads (the calling goroutine counts as
// one); n <= 0 means runtime.GOMAXPROCS(0) at the time of the call, and
// n above MaxThreads means MaxThreads.
// NewPool(1) runs everything on the calling goroutine. Workers are
// started lazily; call Close to stop them when the pool is no longer
// needed.
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{n: min(max(n, 1), MaxThreads), t0: time.Now()}
	p.regionSpin.Store(int64(DefaultRegionSpin))
	p.maxBackoff.Store(int64(DefaultMaxBackoff))
	return p
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
// goroutine. Close waits for a call or region in progress to finish (so
// it must not be called by a goroutine inside a region of p). Closing
// twice is harmless; closing a nil pool does nothing (the default pool
// is never closed through it).
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
		close(w.wake)
	}
	p.workers = nil
}

// start launches the n-1 workers.
func (p *Pool) start() {
	p.job.done = make(chan struct{}, 1)
	p.job.claims = make([]claim, p.n)
	p.workers = make([]*poolWorker, p.n-1)
	for i := range p.workers {
		w := &poolWorker{wake: make(chan struct{}, 1), thread: i + 1}
		w.sleeping.Store(true)
		p.workers[i] = w
		go p.worker(w)
	}
}

// worker serves jobs each time it is woken, until its channel closes.
// Before it sleeps it says so (sleeping), then looks once more for a
// job: a caller publishes its job before it looks at sleeping, so one of
// the two sees the other (a wake-up token left over only makes the
// worker look once more). A missed job costs only time: the caller runs
// every part no worker claimed.
func (p *Pool) worker(w *poolWorker) {
	var last uint64 // the epoch of the last job worked on
	for range w.wake {
		for {
			w.sleeping.Store(false)
			last = p.serve(w.thread, last)
			w.sleeping.Store(true)
			if !p.pending(last) {
				break
			}
		}
	}
}

// pending reports whether a job other than the one of epoch last is
// published.
func (p *Pool) pending(last uint64) bool {
	return p.epoch.Load() != last && p.cur.Load() != nil
}

// serve runs parts of the published jobs until the worker has nothing
// to do: it polls for the next job (a region's next nest, or the next
// call) until none came for the pool's region spin time (SetRegionSpin)
// or its thread was preempted; then, outside a region, it looks spin
// more times (SetSpin), yielding in between. It returns the epoch of the
// last job served.
func (p *Pool) serve(thread int, last uint64) uint64 {
	yields, polls := 0, 0
	polling := true
	var since, prev time.Time
	for {
		e := p.epoch.Load()
		if j := p.cur.Load(); j != nil && e != last {
			j.refs.Add(1)
			if p.cur.Load() == j && p.epoch.Load() == e {
				j.work(thread)
				last = e
			}
			j.release()
			yields, polls, polling, since, prev = 0, 0, true, time.Time{}, time.Time{}
			continue
		}
		if polling {
			// Poll without yielding (the next nest is picked up within
			// a few hundred nanoseconds); look at the clock every 128
			// polls and let other goroutines of this P run every 2048.
			// A gap between two looks far longer than 128 polls take
			// means the OS ran something else on this core: the machine
			// has no idle core, where a polling worker only takes CPU
			// time from others (and from the caller), so it sleeps.
			// Polling goes on after a region or a Run ends (a kernel
			// called in a loop, a training step's next Backward, finds
			// the worker awake: waking a sleeping one takes a futex
			// wake-up, 5-50 us in a VM).
			if polls++; polls%128 == 0 {
				now := time.Now()
				switch {
				case since.IsZero():
					since = now
				case now.Sub(prev) > preemptedGap:
					return last
				case now.Sub(since) > time.Duration(p.regionSpin.Load()):
					if p.region.Load() {
						return last
					}
					polling = false
				}
				prev = now
				if polls%2048 == 0 {
					runtime.Gosched()
				}
			}
			continue
		}
		if yields++; yields > int(p.spin.Load()) {
			return last
		}
		runtime.Gosched()
	}
}

// SetSpin sets how many times an idle worker outside a region looks for
// the next call's parts, yielding its thread in between, before it
// sleeps (0, the default: it sleeps at once). Spinning saves the wake-up
// of a sleeping worker (microseconds) when parallel calls follow each
// other closely, at the cost of CPU time while the pool is idle. It may
// be called at any time.
func (p *Pool) SetSpin(n int) {
	if p == nil {
		p = DefaultPool()
	}
	p.spin.Store(int32(max(n, 0)))
}

// SetRegionSpin sets how long an idle worker polls for the next
// parallel nest of a [Region], or the next call after a region or a
// [Pool.Run] ended, before it sleeps (DefaultRegionSpin unless set; 0: it
// sleeps at once, and every nest wakes it). It may be called at any
// time.
func (p *Pool) SetRegionSpin(d time.Duration) {
	if p == nil {
		p = DefaultPool()
	}
	p.regionSpin.Store(int64(max(d, 0)))
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

// work runs parts of the job until none is left, those of its own
// block (thread's) first; it returns how many it ran.
func (j *job) work(thread int) int {
	t, parts, blocks := j.task, j.parts, j.blocks
	n := 0
	for i := range blocks {
		b := (int64(thread) + i) % blocks
		lo, hi := b*parts/blocks, (b+1)*parts/blocks
		c := &j.claims[b].next
		for {
			x := lo + c.Add(1) - 1
			if x >= hi {
				break
			}
			t.Part(int(x))
			n++
		}
	}
	return n
}

// Region is a pool's workers held by one goroutine for the time of one
// kernel call: [Pool.Enter] returns it, [Region.Run] runs the parts of
// each parallel nest on the workers (kept awake between nests), and
// [Region.Leave] gives the workers back. The zero Region, and a region
// that could not get the workers (another goroutine holds them, one
// thread, a closed pool), runs every part on the calling goroutine.
//
// The rule: a Region is used by the goroutine that entered it, and left
// (once) by it before the kernel call returns (generated code defers
// Leave right after Enter); while it is held, other callers of the same
// pool run serially, never wait.
type Region struct {
	p       *Pool // nil: serial
	threads int
}

// Enter takes the pool's workers for a region and wakes them (they
// start polling for the region's first nest), or returns a serial
// Region when it cannot have them. It allocates nothing.
func (p *Pool) Enter() Region {
	if p == nil {
		p = DefaultPool()
	}
	r := p.enter(p.n)
	if r.p != nil {
		p.region.Store(true)
	}
	return r
}

// enter takes the workers for at most want threads and wakes them.
func (p *Pool) enter(want int) Region {
	threads := min(want, runtime.GOMAXPROCS(0))
	if threads <= 1 {
		return Region{}
	}
	if p.backingOff() {
		p.stats.serialRegions.Add(1)
		return Region{}
	}
	if !p.mu.TryLock() {
		return Region{}
	}
	if p.closed {
		p.mu.Unlock()
		return Region{}
	}
	p.once.Do(p.start)
	p.absent = 0 // the workers are just being woken
	return Region{p: p, threads: threads}
}

// wake signals the sleeping workers among the region's.
func (r Region) wake() {
	for _, w := range r.p.workers[:r.threads-1] {
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
				r.p.stats.wakes.Add(1)
			default: // a wake-up is already pending
			}
		}
	}
}

// Leave gives the workers back (they poll for the next call for the
// region spin time, then sleep; see SetRegionSpin and SetSpin). Leaving
// a serial Region does nothing.
func (r Region) Leave() {
	if r.p == nil {
		return
	}
	r.p.region.Store(false)
	r.p.mu.Unlock()
}

// Run runs t.Part(i) for every i in 0..parts-1 on the region's threads
// and returns when all have returned (a barrier). It allocates nothing.
func (r Region) Run(t Task, parts int) {
	if r.p == nil || parts <= 1 || r.serial() {
		for i := range parts {
			t.Part(i)
		}
		return
	}
	r.run(t, parts, true)
}

// serial reports whether a held region's nest runs on the caller alone
// (the pool began backing off during the region), and counts it.
func (r Region) serial() bool {
	if !r.p.backingOff() {
		return false
	}
	r.p.stats.serialNests.Add(1)
	return true
}

// MaxSeq is the most tasks one [Region.RunSeq] call takes.
const MaxSeq = 32

// RunSeq is [Region.Run] for several tasks split the same way, run as
// one: part i runs tasks[0].Part(i), then tasks[1].Part(i), and so on,
// so part i of a later task may read what part i of an earlier one
// wrote, and the tasks share one barrier instead of one each. Parts of
// a later task must not touch what other parts of an earlier task write
// (the generator chains only nests that index every shared array by the
// split rows: docs/design.md). It allocates nothing; it panics with
// more than MaxSeq tasks.
func (r Region) RunSeq(parts int, tasks ...Task) {
	if len(tasks) > MaxSeq {
		panic("rt: RunSeq of more than MaxSeq tasks")
	}
	if r.p == nil || parts <= 1 || r.serial() {
		for i := range parts {
			for _, t := range tasks {
				t.Part(i)
			}
		}
		return
	}
	s := &r.p.seq
	s.n = copy(s.tasks[:], tasks)
	r.run(s, parts, true)
	clear(s.tasks[:s.n])
	s.n = 0
}

// seq is the task RunSeq publishes: its tasks' parts i, in order.
type seq struct {
	tasks [MaxSeq]Task
	n     int
}

// Part runs part i of each task in order.
func (s *seq) Part(i int) {
	for _, t := range s.tasks[:s.n] {
		t.Part(i)
	}
}

// run publishes the job, wakes the sleeping workers, runs parts until
// none is left and waits for the workers running the last ones: polling
// briefly (inRegion: for about as long as a part imbalance lasts), then
// asleep until the last one leaves (a long busy wait would take the CPU
// from the worker on a loaded machine).
func (r Region) run(t Task, parts int, inRegion bool) {
	p := r.p
	j := &p.job
	j.task, j.parts, j.blocks = t, int64(parts), int64(r.threads)
	for b := range r.threads {
		j.claims[b].next.Store(0)
	}
	p.epoch.Add(1)
	p.cur.Store(j)
	r.wake()
	start := time.Now()
	mine := j.work(0)
	done := time.Now()
	p.cur.Store(nil)
	p.noteParts(mine, parts)
	st := &p.stats
	st.nests.Add(1)
	st.callerParts.Add(int64(mine))
	st.workerParts.Add(int64(parts - mine))
	if mine == parts {
		st.callerAll.Add(1)
	}
	if inRegion {
		var since time.Time
		for i := 1; j.refs.Load() != 0; i++ {
			if i%64 == 0 {
				now := time.Now()
				if since.IsZero() {
					since = now
				} else if now.Sub(since) > 20*time.Microsecond {
					break
				}
			}
		}
	} else {
		for i := 0; i < 16 && j.refs.Load() != 0; i++ {
			runtime.Gosched()
		}
	}
	if j.refs.Load() != 0 {
		j.waiting.Store(true)
		for j.refs.Load() != 0 {
			<-j.done
		}
		j.waiting.Store(false)
		if mine > 0 {
			p.noteWait(time.Since(done), done.Sub(start)/time.Duration(mine))
		}
	}
	if w := time.Since(done); w > 0 {
		st.waitNanos.Add(int64(w))
	}
	j.task = nil
}

// Straggler back-off: on an oversubscribed machine (more runnable
// threads than cores) the OS may stop a worker in the middle of a part
// for milliseconds, and the caller waits for it at the barrier, or not
// run it at all while it polls: two threads then run slower than one. A
// pool that sees either backs off: its calls run serially for a while,
// then try the workers again.
const (
	// straggleWait is the least barrier wait taken for a straggler
	// (also more than two of the caller's parts took).
	straggleWait = time.Millisecond
	// straggleEvents stragglers or absent-worker runs within
	// straggleWindow start a back-off. A lone stall (the hypervisor
	// took the vCPU for a few milliseconds: on an idle 2-vCPU host, one
	// every 300-500 ms, seen as a barrier wait of 2-9 ms and often then
	// as absentNests nests the worker missed) has cost its wait already;
	// a 20 ms serial back-off after it cost about 10 ms more of a 2-thread
	// step (the bf16 decoder: 0.2-0.6 back-offs per step, 194-200 against
	// 166-191 ms per step without them). On an oversubscribed machine
	// the stalls come every few nests and back off at once.
	straggleEvents = 3
	straggleWindow = 100 * time.Millisecond
	// minBackoff is the first back-off; each straggler within a second
	// of the last doubles it, up to SetStraggleBackoff's limit.
	minBackoff = 20 * time.Millisecond
	// DefaultMaxBackoff is the longest back-off unless
	// Pool.SetStraggleBackoff says otherwise.
	DefaultMaxBackoff = time.Second
	// absentNests is how many nests in a row the caller runs every part
	// of before the pool backs off.
	absentNests = 8
)

// SetStraggleBackoff sets the longest time the pool runs calls serially
// after a worker straggled (kept the caller waiting at a barrier over a
// millisecond, and over twice as long as the caller's own parts took:
// the OS had taken its core); 0 turns the back-off off. It may be called
// at any time. Results never depend on it.
func (p *Pool) SetStraggleBackoff(limit time.Duration) {
	if p == nil {
		p = DefaultPool()
	}
	p.maxBackoff.Store(int64(max(limit, 0)))
	if limit <= 0 {
		p.serialUntil.Store(0)
	}
}

// now is the time since the pool was made, in nanoseconds.
func (p *Pool) now() int64 { return int64(time.Since(p.t0)) }

// backingOff reports whether calls run serially after a straggler.
func (p *Pool) backingOff() bool {
	u := p.serialUntil.Load()
	return u != 0 && p.now() < u
}

// noteWait judges a barrier wait (the caller's parts took part each):
// a straggler is a stall (see stalled). Only the goroutine holding the
// workers calls it.
func (p *Pool) noteWait(wait, part time.Duration) {
	if wait >= straggleWait && wait >= 2*part {
		p.stalled()
	}
}

// stalled records a straggler or an absent-worker run and backs off
// when it is the straggleEvents-th within straggleWindow. Only the
// goroutine holding the workers calls it.
func (p *Pool) stalled() {
	p.stats.stalls.Add(1)
	now := p.now()
	first := p.events[0]
	copy(p.events[:], p.events[1:])
	p.events[len(p.events)-1] = now
	if first != 0 && now-first < int64(straggleWindow) {
		p.backOff()
	}
}

// noteParts counts the nests whose parts the caller ran all of (the
// worker, polling or woken, took none: the OS is not running it);
// absentNests in a row are a stall (see stalled). Only the goroutine
// holding the workers calls it.
func (p *Pool) noteParts(mine, parts int) {
	if mine < parts {
		p.absent = 0
		return
	}
	if p.absent++; p.absent >= absentNests {
		p.absent = 0
		p.stalled()
	}
}

// backOff starts a back-off, or doubles it when the last one began less
// than a second ago (up to the limit).
func (p *Pool) backOff() {
	limit := p.maxBackoff.Load()
	if limit <= 0 {
		return
	}
	now := p.now()
	b := int64(minBackoff)
	if last := p.lastStraggle.Load(); last != 0 && now-last < int64(time.Second) {
		b = 2 * p.backoff.Load()
	}
	b = min(b, limit)
	p.stats.backoffs.Add(1)
	p.backoff.Store(b)
	p.lastStraggle.Store(now)
	p.serialUntil.Store(now + b)
}

// Run runs t.Part(i) for every i in 0..parts-1 and returns when all
// have returned: a region of one nest. It allocates nothing and starts
// no goroutine (except the workers, on the first call that uses them).
func (p *Pool) Run(t Task, parts int) {
	if p == nil {
		p = DefaultPool()
	}
	r := p.enter(min(p.n, parts))
	if r.p == nil {
		for i := range parts {
			t.Part(i)
		}
		return
	}
	defer r.Leave()
	r.run(t, parts, false)
}

// ThreadsEnvVar is the environment variable that sets the number of
// threads of the process-default pool ([DefaultPool]): an integer from 1
// to MaxThreads, or 0 for runtime.GOMAXPROCS(0); unset or empty means
// GOMAXPROCS too. Any other value is reported on standard error when the
// default pool is created, which then uses GOMAXPROCS.
const ThreadsEnvVar = "OCANNLGEN_THREADS"

// ParseThreads parses a value of OCANNLGEN_THREADS: 0 (meaning
// GOMAXPROCS) for an empty string or "0", n for an integer 1 <= n <=
// MaxThreads, and an error naming the variable for anything else.
func ParseThreads(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("%s=%s: want a non-negative integer (0 for GOMAXPROCS)", ThreadsEnvVar, quoteShort(s))
	case n > MaxThreads:
		return 0, fmt.Errorf("%s=%s: at most %d threads (a call never uses more than GOMAXPROCS, %d here)", ThreadsEnvVar, quoteShort(s), MaxThreads, runtime.GOMAXPROCS(0))
	}
	return n, nil
}

// quoteShort quotes s, shortened to its first 32 bytes (an environment
// variable's value is echoed in a message, not copied whole).
func quoteShort(s string) string {
	if len(s) <= 32 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:32]), len(s))
}

// defaultThreads is the default pool's thread count for the value of
// OCANNLGEN_THREADS: ParseThreads's, or 0 (GOMAXPROCS) after reporting an
// invalid value on warn.
func defaultThreads(value string, warn io.Writer) int {
	n, err := ParseThreads(value)
	if err != nil {
		fmt.Fprintf(warn, "ocannlgen: %v; using GOMAXPROCS (%d threads)\n", err, runtime.GOMAXPROCS(0))
		return 0
	}
	return n
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
// unset, or invalid: then a line on standard error says why) unless
// SetDefaultPool was called first.
func DefaultPool() *Pool {
	if p := defaultPool.Load(); p != nil {
		return p
	}
	defaultOnce.Do(func() {
		defaultPool.CompareAndSwap(nil, NewPool(defaultThreads(os.Getenv(ThreadsEnvVar), os.Stderr)))
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
