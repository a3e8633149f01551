// Package host measures the machine the benchmarks run on: the CPU
// model, the process's CPU time, and how many CPUs it gets now. Linux
// only (the benchmark machines).
package host

import (
	"bufio"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// ProcCPU is the CPU time of the whole process, all threads (Linux
// CLOCK_PROCESS_CPUTIME_ID): the pool's workers count, and a goroutine
// moving between threads does not skew it (a thread clock did, giving
// negative times).
func ProcCPU() time.Duration {
	const clockProcessCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// CPUsAvailable is the CPU time two busy goroutines get per unit of wall
// time over 200 ms: about 2 on an idle 2-core machine, less when other
// processes (or other guests of the host) take the cores. Under 1.9 a
// 2-thread measurement cannot show the kernels' scaling.
func CPUsAvailable() float64 {
	c0, t0 := ProcCPU(), time.Now()
	done := make(chan int)
	for range 2 {
		go func() {
			x := 0
			for time.Since(t0) < 200*time.Millisecond {
				for i := range 10000 {
					x += i
				}
			}
			done <- x
		}()
	}
	<-done
	<-done
	return float64(ProcCPU()-c0) / float64(time.Since(t0))
}

// CPUModel is /proc/cpuinfo's model name ("unknown" without one).
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
