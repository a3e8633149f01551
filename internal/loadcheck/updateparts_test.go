package loadcheck

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

// flat is a parameter set (float32 arrays only) as one slice, its
// parameters end to end.
func flat(p *ocannlWideNetParams) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), unsafe.Sizeof(*p)/4)
}

// TestUpdatePartsMatchRT: WideNet's Update, which runs AdamW in parts
// on its Pool (each a share of the parameters laid end to end), leaves
// the bits of rt.Adam over every element once, on 1 and 3 threads and
// with no Pool, and allocates nothing.
func TestUpdatePartsMatchRT(t *testing.T) {
	for _, pool := range []*rt.Pool{nil, rt.NewPool(1), rt.NewPool(3)} {
		r := rand.New(rand.NewPCG(3, 4))
		var m WideNet
		m.Init(1)
		m.Pool = pool
		m.Step = 6
		for _, x := range [][]float32{flat(&m.Grads), flat(&m.adamM), flat(&m.adamV)} {
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
		}
		for i, x := range flat(&m.adamV) {
			flat(&m.adamV)[i] = float32(math.Abs(float64(x)))
		}
		cp := func(x []float32) []float32 { return append([]float32(nil), x...) }
		p, g, am, av := cp(flat(&m.Params)), cp(flat(&m.Grads)), cp(flat(&m.adamM)), cp(flat(&m.adamV))
		lr := float32(m.LearningRate())
		rt.Adam(p, g, am, av, rt.NextStep(m.Step), lr, 0.9, 0.999, 1e-8, 0.01, true)
		m.Update()
		for _, c := range []struct {
			name      string
			got, want []float32
		}{{"param", flat(&m.Params), p}, {"m", flat(&m.adamM), am}, {"v", flat(&m.adamV), av}} {
			for i := range c.got {
				if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
					t.Fatalf("pool %p: %s element %d = %v, rt.Adam gives %v", pool, c.name, i, c.got[i], c.want[i])
				}
			}
		}
		if n := testing.AllocsPerRun(3, m.Update); n != 0 {
			t.Errorf("pool %p: %v allocations per Update", pool, n)
		}
		if pool != nil {
			pool.Close()
		}
	}
}
