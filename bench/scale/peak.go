package main

import (
	"fmt"
	"github.com/ocannlgen/ocannlgen/bench/internal/host"
	"runtime"
	"slices"
	"sync"
	"time"
)

// peakLoop is one hand-written peak loop (peak_amd64.s): run(n) makes n
// iterations of flops floating-point operations each (a fused
// multiply-add counts 2; a VDPBF16PS lane, two products and two sums, 4).
type peakLoop struct {
	name, key string
	flops     float64
	run       func(n int)
}

// peakResult is a loop's measured rate on a number of threads: the
// median over reps of the aggregate GFLOP/s by wall time, and by the
// process's CPU time (FLOP per CPU-second: what one busy core delivers,
// whatever else the host runs).
type peakResult struct {
	wall, cpu float64
}

// measurePeak runs the loop on threads goroutines at once, each locked
// to its own OS thread, reps times about 0.2 s each.
func measurePeak(l peakLoop, threads, reps int) peakResult {
	prev := runtime.GOMAXPROCS(threads)
	defer runtime.GOMAXPROCS(prev)
	// Calibrate: iterations for about 0.2 s on one thread.
	n := 1 << 16
	for {
		t := time.Now()
		l.run(n)
		if d := time.Since(t); d > 20*time.Millisecond {
			n = int(float64(n) * 0.2 / d.Seconds())
			break
		}
		n *= 2
	}
	var walls, cpus []float64
	for range reps {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				<-start
				l.run(n)
			}()
		}
		time.Sleep(5 * time.Millisecond) // let every goroutine reach its thread
		t0, c0 := time.Now(), host.ProcCPU()
		close(start)
		wg.Wait()
		w, c := time.Since(t0).Seconds(), (host.ProcCPU() - c0).Seconds()
		total := float64(threads) * float64(n) * l.flops
		walls = append(walls, total/w/1e9)
		cpus = append(cpus, total/c/1e9)
	}
	return peakResult{median(walls), median(cpus)}
}

// peaks measures every peak loop at 1 and 2 threads and prints one
// "peak" line each (read by bench/scale.sh).
func peaks(reps int) {
	ls := peakLoops()
	if len(ls) == 0 {
		fmt.Println("# no peak loop for this CPU/architecture")
		return
	}
	for _, th := range []int{1, 2} {
		for _, l := range ls {
			r := measurePeak(l, th, reps)
			fmt.Printf("peak kind=%s threads=%d gflops=%.1f gflops_per_cpu_s=%.1f # %s, %d thread(s), median of %d, wall and per CPU-second\n",
				l.key, th, r.wall, r.cpu, l.name, th, reps)
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
