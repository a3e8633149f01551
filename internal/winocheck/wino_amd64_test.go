//go:build amd64 && gc && !purego

package winocheck

import (
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

func batch() (images *[Batch][10][10][16]float32, labels *[Batch][10]float32) {
	r := rand.New(rand.NewPCG(3, 4))
	images, labels = new([Batch][10][10][16]float32), new([Batch][10]float32)
	for i := range images {
		labels[i][r.IntN(10)] = 1
		for y := range images[i] {
			for x := range images[i][y] {
				for c := range images[i][y][x] {
					images[i][y][x][c] = float32(r.NormFloat64())
				}
			}
		}
	}
	return images, labels
}

// grads runs one Backward on threads threads in the tiers the flags
// leave on (of those the CPU and OCANNLGEN_CPU allow) and returns the
// loss and the gradients.
func grads(threads int, avx512, avx2 bool) (float32, []float32) {
	saved512, saved2 := ocannlAVX512, ocannlAVX2
	ocannlAVX512, ocannlAVX2 = avx512 && saved512, avx2 && saved2
	defer func() { ocannlAVX512, ocannlAVX2 = saved512, saved2 }()
	images, labels := batch()
	m := new(Net)
	m.Init(1)
	m.Pool = rt.NewPool(threads)
	defer m.Pool.Close()
	loss := m.Backward(images, labels)
	g := unsafe.Slice((*float32)(unsafe.Pointer(&m.Grads)), unsafe.Sizeof(m.Grads)/4)
	return loss, append([]float32(nil), g...)
}

// TestGeneratedUsesWino: the two forward convolutions, the second one's
// input gradient and both kernel gradients run in rt/wino in the AVX-512
// and AVX2 tiers (so that the comparisons below compare rt/wino with the
// Go loops).
func TestGeneratedUsesWino(t *testing.T) {
	src, err := os.ReadFile("ocannl_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, want := range []string{
		"10x10 convolution, 16 -> 16 channels: AVX512 and AVX2 in rt/wino",
		"10x10 convolution, 16 -> 32 channels: AVX512 and AVX2 in rt/wino",
		"10x10 input gradient of a 3x3 convolution, 32 -> 16 channels: AVX512 and AVX2 in rt/wino (Winograd F(2x2,3x3), the gather, the edge tiles' margins zeros)",
		"the kernel gradient of a 10x10 3x3 convolution, 16 -> 16 channels: AVX512 and AVX2 in rt/wino",
		"the kernel gradient of a 10x10 3x3 convolution, 16 -> 32 channels: AVX512 and AVX2 in rt/wino",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("ocannl_gen.go has no %q", want)
		}
	}
}

// TestWinoAgainstDirect: the gradients of one Backward with the
// convolutions in rt/wino (the generated code's best tier, and its AVX2
// branch) are those of the Go loops (the direct sums) within 1e-4 of each
// parameter's largest gradient (Winograd's sums round differently; a
// wrong transform, stride or margin is off by the gradients' size), and
// the same bits on 1 and 2 threads. rt/wino runs the best kernels the CPU
// has either way; .ci/run runs this test again with OCANNLGEN_CPU=avx2
// for its AVX2 kernels.
func TestWinoAgainstDirect(t *testing.T) {
	if !ocannlAVX2 {
		t.Skip("no assembly tier on this CPU (or OCANNLGEN_CPU=purego)")
	}
	loss, wino := grads(1, true, true)
	loss2, wino2 := grads(2, true, true)
	if loss != loss2 {
		t.Fatalf("loss %v on 1 thread, %v on 2", loss, loss2)
	}
	for i := range wino {
		if math.Float32bits(wino[i]) != math.Float32bits(wino2[i]) {
			t.Fatalf("gradient %d: %v on 1 thread, %v on 2", i, wino[i], wino2[i])
		}
	}
	gt := reflect.TypeOf(Net{}.Grads)
	for _, ref := range []struct {
		name         string
		avx512, avx2 bool
	}{{"the AVX2 branch", false, true}, {"the Go loops", false, false}} {
		rloss, rg := grads(1, ref.avx512, ref.avx2)
		if d := math.Abs(float64(loss - rloss)); d > 1e-5*math.Abs(float64(rloss)) {
			t.Errorf("loss %v in rt/wino, %v in %s", loss, rloss, ref.name)
		}
		for _, d := range testutil.FieldDiffs(gt, wino, rg) {
			if d.Big == 0 {
				t.Fatalf("%s: all gradients zero in %s (the test checks nothing)", d.Name, ref.name)
			}
			if d.Worst > 1e-4 {
				t.Errorf("%s: rt/wino differs from %s by %.2g of the largest gradient", d.Name, ref.name, d.Worst)
			}
			t.Logf("%s against %s: largest difference %.2g of the largest gradient", d.Name, ref.name, d.Worst)
		}
	}
}

// TestStepAllocs: a training step with the convolutions in rt/wino
// allocates nothing.
func TestStepAllocs(t *testing.T) {
	images, labels := batch()
	m := new(Net)
	m.Init(1)
	m.Pool = rt.NewPool(2)
	defer m.Pool.Close()
	for range 3 {
		m.TrainStep(images, labels)
	}
	if n := testing.AllocsPerRun(5, func() { m.TrainStep(images, labels) }); n != 0 {
		t.Fatalf("TrainStep allocates %v times", n)
	}
}
