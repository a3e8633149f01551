package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/ocannlgen/ocannlgen/bench/internal/host"
	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/dist"
	"github.com/ocannlgen/ocannlgen/rt/dist/mpi"
)

// runDist is scale -dist: this process is one rank of a data-parallel
// run that mpirun started (a binary built with -tags mpi), and returns
// the exit code.
//
// Weak scaling: every rank trains on a batch of the model's full size
// (its own random data; rank 0's is the single-process run's), so N
// ranks process N times the examples of one process per step. A step
// is the generated models' data-parallel step: Backward on the rank's
// batch, SyncGrads (the gradients averaged across the ranks, rt/dist on
// Open MPI), Update. The ranks start from rank 0's parameters
// (BroadcastParams). The warmup steps are checked as in one process,
// on the mean of the ranks' losses; then the ranks meet at a barrier
// and time -steps steps one by one (wall time and process CPU time on
// every rank, and within the step the wall time of SyncGrads). At the
// end the ranks check that their parameters are bit-identical, and rank
// 0 prints one line:
//
//	result impl=ocannlgen mode=dist ranks=2 model=gpt threads=1 steps=5 wall_ms=... cpu_ms=... sync_ms=... samples=16 samples_per_s=... rank_walls=... rank_cpus=... params_identical=true walls=... cpus=... syncs=...
//
// wall_ms, cpu_ms and sync_ms are rank 0's medians, samples the global
// examples per step (ranks x the model's batch), samples_per_s samples
// over wall_ms, rank_walls and rank_cpus every rank's median wall and
// CPU ms a step.
func runDist(name string, mk func(rank int) model, threads, warmup, steps int) int {
	if !mpi.Available {
		fmt.Fprintln(os.Stderr, "scale: -dist needs a binary built with -tags mpi (cd bench && go build -tags mpi ./scale), started by mpirun")
		return 2
	}
	c, err := mpi.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		return 1
	}
	code, err := distRun(c, name, mk, threads, warmup, steps)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scale: rank %d: %v\n", c.Rank(), err)
		if code == 0 {
			code = 1
		}
		c.Fail(err)
	}
	if err := c.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "scale: rank %d: %v\n", c.Rank(), err)
		return 1
	}
	return code
}

func distRun(c dist.Comm, name string, mk func(rank int) model, threads, warmup, steps int) (int, error) {
	rank, size := c.Rank(), c.Size()
	m := mk(rank)
	pool := rt.NewPool(threads)
	defer pool.Close()
	m.setPool(pool)
	if err := m.bcast(c); err != nil {
		return 1, err
	}
	step := func() (loss float32, sync time.Duration, err error) {
		loss = m.backward()
		t := time.Now()
		err = m.sync(c)
		sync = time.Since(t)
		m.update()
		return loss, sync, err
	}

	// The check, untimed: the mean of the ranks' losses is finite and
	// decreases.
	losses := make([]float64, warmup)
	for i := range losses {
		l, _, err := step()
		if err != nil {
			return 1, err
		}
		losses[i] = float64(l)
	}
	if err := c.AllReduceSum64(losses); err != nil {
		return 1, err
	}
	for i := range losses {
		losses[i] /= float64(size)
	}
	for _, l := range losses {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return 1, fmt.Errorf("%s: a warmup step's mean loss is not finite: %v", name, losses)
		}
	}
	if !(losses[len(losses)-1] < losses[0]) {
		return 1, fmt.Errorf("%s: the ranks' mean loss did not decrease over %d steps on fixed batches: %v", name, warmup, losses)
	}

	wall := make([]float64, steps)
	cpuT := make([]float64, steps)
	syncT := make([]float64, steps)
	runtime.GC()
	if err := c.Barrier(); err != nil {
		return 1, err
	}
	for i := range steps {
		t0, c0 := time.Now(), host.ProcCPU()
		_, s, err := step()
		if err != nil {
			return 1, err
		}
		wall[i] = time.Since(t0).Seconds() * 1e3
		cpuT[i] = (host.ProcCPU() - c0).Seconds() * 1e3
		syncT[i] = s.Seconds() * 1e3
	}

	// Every rank's medians to rank 0, and the parameters' check: rank 0's
	// hash to every rank, and the count of ranks that differ.
	med := make([]float64, 2*size)
	med[2*rank], med[2*rank+1] = median(wall), median(cpuT)
	if err := c.AllReduceSum64(med); err != nil {
		return 1, err
	}
	h := paramHash(m.params())
	buf := []float64{float64(h)}
	if err := c.Broadcast64(buf, 0); err != nil {
		return 1, err
	}
	differ := []float64{0}
	if buf[0] != float64(h) {
		differ[0] = 1
	}
	if err := c.AllReduceSum64(differ); err != nil {
		return 1, err
	}
	if rank != 0 {
		return 0, nil
	}
	w := median(wall)
	var rw, rc []string
	for r := range size {
		rw = append(rw, fmt.Sprintf("%.1f", med[2*r]))
		rc = append(rc, fmt.Sprintf("%.1f", med[2*r+1]))
	}
	ls := make([]string, len(losses))
	for i, l := range losses {
		ls[i] = fmt.Sprintf("%.4f", l)
	}
	samples := size * m.samples
	fmt.Printf("result impl=ocannlgen mode=dist ranks=%d model=%s dtype=f32 threads=%d steps=%d wall_ms=%.2f cpu_ms=%.2f sync_ms=%.2f samples=%d samples_per_s=%.1f gflops=%.2f rank_walls=%s rank_cpus=%s params_identical=%t tier=%s losses=%s walls=%s cpus=%s syncs=%s\n",
		size, name, threads, steps, w, median(cpuT), median(syncT), samples, float64(samples)/w*1e3, float64(size)*m.flop/w/1e6,
		strings.Join(rw, ","), strings.Join(rc, ","), differ[0] == 0, tier(), strings.Join(ls, ","), join(wall), join(cpuT), join(syncT))
	if differ[0] != 0 {
		fmt.Fprintf(os.Stderr, "scale: %s: %g of %d ranks hold parameters that differ from rank 0's\n", name, differ[0], size)
		return 1, nil
	}
	return 0, nil
}

// paramHash is a 32-bit FNV-1a hash of the parameters' bits (exact as a
// float64, to send with Broadcast64).
func paramHash(ts []rt.Tensor) uint32 {
	h := fnv.New32a()
	var b [8]byte
	for _, t := range ts {
		for _, x := range t.Data32 {
			u := math.Float32bits(x)
			b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
			h.Write(b[:4])
		}
		for _, x := range t.Data64 {
			u := math.Float64bits(x)
			for i := range b {
				b[i] = byte(u >> (8 * i))
			}
			h.Write(b[:])
		}
	}
	return h.Sum32()
}
