//go:build unix

package bf16

import (
	"syscall"
	"testing"
)

// cpuNanos is the process's user and system CPU time in nanoseconds.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkPackCPU times Pack and PackA alone on the decoder's
// operands in each layout the AVX512_BF16 tier converts in assembly,
// in process CPU time per element (cpu-ns/elem: on a shared host the
// wall time of ns/op counts the time other processes run; run with
// GOMAXPROCS=1).
func BenchmarkPackCPU(b *testing.B) {
	for _, l := range []struct {
		name string
		a    bool
		s    Shape
	}{
		{"A-m", true, Shape{M: 384, N: 192, K: 1024, CM: 192, CN: 1, AM: 1, AK: 384, BK: 1536, BN: 1}},
		{"A-k", true, Shape{M: 1024, N: 48, K: 1536, CM: 48, CN: 1, AM: 1536, AK: 1, BK: 1, BN: 1536}},
		{"B-k", false, Shape{M: 128, N: 384, K: 384, CM: 384, CN: 1, AM: 384, AK: 1, BK: 1, BN: 384}},
		{"B-n", false, Shape{M: 64, N: 384, K: 1024, CM: 384, CN: 1, AM: 1, AK: 384, BK: 384, BN: 1}},
	} {
		_, an, bn := l.s.spans()
		x := make([]float32, max(an, bn))
		for i := range x {
			x[i] = float32(i%9) * 0.1
		}
		n := l.s.N * l.s.K
		if l.a {
			n = l.s.M * l.s.K
		}
		var p Packed
		b.Run(l.name, func(b *testing.B) {
			c0 := cpuNanos()
			for b.Loop() {
				if l.a {
					PackA(&p, &x[0], l.s)
				} else {
					Pack(&p, &x[0], l.s)
				}
			}
			b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N)/float64(n), "cpu-ns/elem")
		})
	}
}
