//go:build amd64 && gc && !purego

package models

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestResNet20GradsAgainstGoLoops: one Backward of the ResNet-20 in the
// CPU's best tier (its convolutions' kernel gradients in broadcast
// kernels with the pixel loops folded in, emit/asm/fold.go) gives the
// gradients of the Go loops (the generated code with the tiers turned
// off) within 5% of the largest magnitude of each parameter's gradient,
// and the same bits on 1 and 2 threads. The two differ by up to 1% (the
// first convolution's kernel; rounding flips ReLUs of pre-activations
// near zero, before this change too); a folded kernel with a wrong
// stride along the pixels is off by more than the gradients themselves.
func TestResNet20GradsAgainstGoLoops(t *testing.T) {
	if !ocannlAVX2 {
		t.Skip("no assembly tier on this CPU")
	}
	images, labels := resnetBatch(rand.New(rand.NewPCG(5, 6)))
	grads := func(threads int) []float32 {
		m := new(ResNet20)
		m.Init(1)
		m.Pool = rt.NewPool(threads)
		defer m.Pool.Close()
		m.Backward(images, labels)
		g := unsafe.Slice((*float32)(unsafe.Pointer(&m.Grads)), unsafe.Sizeof(m.Grads)/4)
		return append([]float32(nil), g...)
	}
	kern, kern2 := grads(1), grads(2)
	for i := range kern {
		if math.Float32bits(kern[i]) != math.Float32bits(kern2[i]) {
			t.Fatalf("gradient %d: %v on 1 thread, %v on 2", i, kern[i], kern2[i])
		}
	}
	saved512, saved2 := ocannlAVX512, ocannlAVX2
	ocannlAVX512, ocannlAVX2 = false, false
	loops := func() []float32 {
		defer func() { ocannlAVX512, ocannlAVX2 = saved512, saved2 }()
		return grads(1)
	}()
	// Each parameter array of the Grads struct, in field order.
	const tol = 5e-2
	off := 0
	gt := reflect.TypeOf(ResNet20{}.Grads)
	for i := range gt.NumField() {
		n := int(gt.Field(i).Type.Size() / 4)
		big := 0.0
		for _, v := range loops[off : off+n] {
			big = max(big, math.Abs(float64(v)))
		}
		bad, worst := 0, 0.0
		for j := off; j < off+n; j++ {
			d := math.Abs(float64(kern[j] - loops[j]))
			worst = max(worst, d/big)
			if d > tol*big || math.IsNaN(float64(kern[j])) {
				if bad < 3 {
					t.Errorf("%s[%d]: %v in the kernels, %v in the Go loops (largest %v)", gt.Field(i).Name, j-off, kern[j], loops[j], big)
				}
				bad++
			}
		}
		t.Logf("%s: largest difference %.2g of the largest gradient", gt.Field(i).Name, worst)
		off += n
	}
	if off != len(kern) {
		t.Fatalf("the arrays hold %d elements, Grads %d", off, len(kern))
	}
}
