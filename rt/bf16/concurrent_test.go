package bf16

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestGemmConcurrent: calls on several goroutines at once (each taking
// and returning packing buffers through scratchFree) give the bits of
// the same calls made one after the other: two calls sharing a buffer
// would overwrite each other's panels.
func TestGemmConcurrent(t *testing.T) {
	const workers, calls = 8, 40
	rng := rand.New(rand.NewPCG(11, 12))
	s := Shape{M: 37, N: 70, K: 300, CM: 70, CN: 1, AM: 300, AK: 1, BK: 70, BN: 1, Overwrite: true}
	cn, an, bn := s.spans()
	type job struct{ a, b, c, want []float32 }
	jobs := make([][]job, workers)
	for w := range jobs {
		for range calls {
			j := job{a: randSlice(rng, an), b: randSlice(rng, bn), c: make([]float32, cn), want: make([]float32, cn)}
			Gemm(&j.want[0], &j.a[0], &j.b[0], s)
			jobs[w] = append(jobs[w], j)
		}
	}
	var wg sync.WaitGroup
	for w := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, j := range jobs[w] {
				Gemm(&j.c[0], &j.a[0], &j.b[0], s)
			}
		}()
	}
	wg.Wait()
	for w := range jobs {
		for i, j := range jobs[w] {
			for x := range j.c {
				if math.Float32bits(j.c[x]) != math.Float32bits(j.want[x]) {
					t.Fatalf("worker %d, call %d: cell %d = %v, alone %v", w, i, x, j.c[x], j.want[x])
				}
			}
		}
	}
}
