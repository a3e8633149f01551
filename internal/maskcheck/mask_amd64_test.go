//go:build amd64 && gc && !purego

package maskcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/rt"
)

// batch is random inputs, one-hot labels and a causal mask (query s
// keeps the keys up to s); open adds one kept key above the diagonal
// (the mask is then not causal).
func batch(open bool) (x *[Batch][Context][Width]float32, labels *[Batch][Context][8]float32, mask *[Context][Context]float32) {
	r := rand.New(rand.NewPCG(5, 6))
	x, labels, mask = new([Batch][Context][Width]float32), new([Batch][Context][8]float32), new([Context][Context]float32)
	for b := range x {
		for s := range x[b] {
			labels[b][s][r.IntN(8)] = 1
			for i := range x[b][s] {
				x[b][s][i] = float32(r.NormFloat64())
			}
		}
	}
	for s := range mask {
		for t := 0; t <= s; t++ {
			mask[s][t] = 1
		}
	}
	if open {
		mask[40][70] = 1
	}
	return x, labels, mask
}

// grads runs one Backward on threads threads in the tiers the flags
// leave on (of those the CPU and OCANNLGEN_CPU allow) and returns the
// loss and the gradients.
func grads(threads int, avx512, avx2, open bool) (float32, []float32) {
	saved512, saved2 := ocannlAVX512, ocannlAVX2
	ocannlAVX512, ocannlAVX2 = avx512 && saved512, avx2 && saved2
	defer func() { ocannlAVX512, ocannlAVX2 = saved512, saved2 }()
	x, labels, mask := batch(open)
	m := new(Net)
	m.Init(1)
	m.Pool = rt.NewPool(threads)
	defer m.Pool.Close()
	loss := m.Backward(x, labels, mask)
	g := unsafe.Slice((*float32)(unsafe.Pointer(&m.Grads)), unsafe.Sizeof(m.Grads)/4)
	return loss, append([]float32(nil), g...)
}

// sameBits fails t unless a and b hold the same bits.
func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: gradient %d: %v and %v", what, i, a[i], b[i])
		}
	}
}

// checkDiffs fails t when a field of got differs from want by more than
// tol of the field's largest reference value, and logs each field's.
func checkDiffs(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	for _, d := range testutil.FieldDiffs(reflect.TypeOf(Net{}.Grads), got, want) {
		if d.Big == 0 {
			t.Fatalf("%s: %s: all gradients zero in the reference (the test checks nothing)", what, d.Name)
		}
		if d.Worst > tol {
			t.Errorf("%s: %s: off by %.2g of the largest gradient", what, d.Name, d.Worst)
		}
		t.Logf("%s: %s: largest difference %.2g of the largest gradient", what, d.Name, d.Worst)
	}
}

// TestGeneratedUsesMaskBlocks: the forward pass's two attention products
// and the backward pass's six run in diagonal blocks when the mask is
// causal, in the assembly tiers.
func TestGeneratedUsesMaskBlocks(t *testing.T) {
	src, err := os.ReadFile("ocannl_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	// Net's 8 (float32 kernels) and NetBF16's 8 (rt/bf16 calls).
	if n := strings.Count(s, "when the mask is causal, in blocks of 32"); n != 16 {
		t.Errorf("%d contractions in diagonal blocks, want 16", n)
	}
	if n := strings.Count(s, "bf16 operands, float32 accumulation (rt/bf16.Gemm): 96x"); n < 8 {
		t.Errorf("%d attention products on rt/bf16, want at least NetBF16's 8", n)
	}
	if n := strings.Count(s, "Causal = rt.UpperZero(&mask[0][0], 96)"); n != 4 {
		t.Errorf("the mask's flag is computed %d times, want 4 (on entry to each kernel)", n)
	}
}

// TestMaskBlocksAgainstLoops: with a causal mask, the gradients of one
// Backward with the attention products in diagonal blocks (the best
// tier, and the AVX2 branch) are those of the Go loops (which compute
// every product) within 1e-5 of each parameter's largest gradient, and
// the same bits on 1 and 2 threads. With a mask that keeps one key above
// the diagonal, the kernels run whole and agree as well (a block form
// run on that mask would drop the key's term, off by its size).
func TestMaskBlocksAgainstLoops(t *testing.T) {
	if !ocannlAVX2 {
		t.Skip("no assembly tier on this CPU (or OCANNLGEN_CPU=purego)")
	}
	for _, open := range []bool{false, true} {
		loss, g := grads(1, true, true, open)
		loss2, g2 := grads(2, true, true, open)
		if loss != loss2 {
			t.Fatalf("open=%v: loss %v on 1 thread, %v on 2", open, loss, loss2)
		}
		sameBits(t, fmt.Sprintf("open=%v, 1 and 2 threads", open), g, g2)
		for _, ref := range []struct {
			name         string
			avx512, avx2 bool
		}{{"the AVX2 branch", false, true}, {"the Go loops", false, false}} {
			rloss, rg := grads(1, ref.avx512, ref.avx2, open)
			if d := math.Abs(float64(loss - rloss)); d > 1e-5*math.Abs(float64(rloss)) {
				t.Errorf("open=%v: loss %v in the best tier, %v in %s", open, loss, rloss, ref.name)
			}
			checkDiffs(t, fmt.Sprintf("open=%v, the best tier against %s", open, ref.name), g, rg, 1e-5)
		}
	}
}

// gradsBF16 is grads for NetBF16 (rt/bf16 picks its own tier).
func gradsBF16(threads int, open bool) (float32, []float32) {
	x, labels, mask := batch(open)
	m := new(NetBF16)
	m.Init(1)
	m.Pool = rt.NewPool(threads)
	defer m.Pool.Close()
	loss := m.Backward(x, labels, mask)
	g := unsafe.Slice((*float32)(unsafe.Pointer(&m.Grads)), unsafe.Sizeof(m.Grads)/4)
	return loss, append([]float32(nil), g...)
}

// TestBF16MaskBlocks: NetBF16's gradients, its attention products in
// diagonal blocks on rt/bf16 (a causal mask) or whole (a mask keeping
// one key above the diagonal), are the same bits on 1 and 2 threads and
// within bf16's rounding of Net's Go loops (the same parameters, every
// product computed): 2e-2 of each gradient's largest (measured below
// 6e-3). TestBlocksAgainstWhole checks the blocks themselves.
func TestBF16MaskBlocks(t *testing.T) {
	for _, open := range []bool{false, true} {
		loss, g := gradsBF16(1, open)
		loss2, g2 := gradsBF16(2, open)
		if loss != loss2 {
			t.Fatalf("open=%v: loss %v on 1 thread, %v on 2", open, loss, loss2)
		}
		sameBits(t, fmt.Sprintf("open=%v, bf16 on 1 and 2 threads", open), g, g2)
		rloss, rg := grads(1, false, false, open)
		if d := math.Abs(float64(loss - rloss)); d > 1e-2*math.Abs(float64(rloss)) {
			t.Errorf("open=%v: loss %v in bf16, %v in float32", open, loss, rloss)
		}
		checkDiffs(t, fmt.Sprintf("open=%v, bf16 against the float32 Go loops", open), g, rg, 2e-2)
	}
}

// wholeGrads runs one Backward of m (NetWhole or NetBF16Whole: the
// network with a mask per sequence, which the generator takes for no
// mask, so that every product is computed) on the causal mask, 1
// thread, and returns the gradients.
func wholeGrads(m interface {
	Init(uint64)
}, backward func(x *[Batch][Context][Width]float32, labels *[Batch][Context][8]float32, mask *[Batch][Context][Context]float32), grads unsafe.Pointer, size uintptr) []float32 {
	x, labels, mask := batch(false)
	wmask := new([Batch][Context][Context]float32)
	for b := range wmask {
		wmask[b] = *mask
	}
	m.Init(1)
	backward(x, labels, wmask)
	return append([]float32(nil), unsafe.Slice((*float32)(grads), size/4)...)
}

// TestBlocksAgainstWhole: with a causal mask, the gradients of Net and
// NetBF16 (the attention products in diagonal blocks: float32 kernels,
// rt/bf16) are those of NetWhole and NetBF16Whole (the same networks
// and parameters, every product computed): the same bits in bf16 (the
// skipped terms are exact zeros and rt/bf16 adds in order), within 1e-6
// of each gradient's largest in float32 (a block's smaller kernel may be
// a dot kernel, which adds in another order). A block one key short is
// off by about 1e-2 of the largest gradient.
func TestBlocksAgainstWhole(t *testing.T) {
	if !ocannlAVX2 {
		t.Skip("no assembly tier on this CPU (or OCANNLGEN_CPU=purego)")
	}
	pool := rt.NewPool(1)
	defer pool.Close()
	w32 := &NetWhole{}
	w32.Pool = pool
	w16 := &NetBF16Whole{}
	w16.Pool = pool
	_, g32 := grads(1, true, true, false)
	_, g16 := gradsBF16(1, false)
	for _, c := range []struct {
		name       string
		got, whole []float32
	}{
		{"float32", g32, wholeGrads(w32, func(x *[Batch][Context][Width]float32, l *[Batch][Context][8]float32, m *[Batch][Context][Context]float32) {
			w32.Backward(x, l, m)
		}, unsafe.Pointer(&w32.Grads), unsafe.Sizeof(w32.Grads))},
		{"bf16", g16, wholeGrads(w16, func(x *[Batch][Context][Width]float32, l *[Batch][Context][8]float32, m *[Batch][Context][Context]float32) {
			w16.Backward(x, l, m)
		}, unsafe.Pointer(&w16.Grads), unsafe.Sizeof(w16.Grads))},
	} {
		if len(c.got) != len(c.whole) {
			t.Fatalf("%s: %d gradients, %d in the whole network", c.name, len(c.got), len(c.whole))
		}
		if c.name == "bf16" {
			sameBits(t, "bf16, blocks and whole", c.got, c.whole)
			continue
		}
		checkDiffs(t, c.name+", blocks against whole", c.got, c.whole, 1e-6)
	}
}

// TestStepAllocs: a training step with the blocks allocates nothing.
func TestStepAllocs(t *testing.T) {
	x, labels, mask := batch(false)
	m := new(Net)
	m.Init(1)
	m.Pool = rt.NewPool(2)
	defer m.Pool.Close()
	for range 3 {
		m.TrainStep(x, labels, mask)
	}
	if n := testing.AllocsPerRun(5, func() { m.TrainStep(x, labels, mask) }); n > 1 {
		t.Errorf("a training step allocates %v times", n)
	}
}
