package bf16einsum

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/bf16"
)

// randBF16 fills x with normal values rounded to bf16.
func randBF16(rng *rand.Rand, x []rt.BF16) {
	for i := range x {
		x[i] = rt.BF16FromFloat32(float32(rng.NormFloat64()))
	}
}

// pairSum is rt/bf16's documented order over widened operands: from 0,
// the products added pair by pair, step 2p+1 before 2p, each addition
// rounded to float32.
func pairSum(k int, a, b func(int) rt.BF16) float32 {
	acc := float32(0)
	for p := 0; p < k; p += 2 {
		if p+1 < k {
			acc += a(p+1).Float32() * b(p+1).Float32()
		}
		acc += a(p).Float32() * b(p).Float32()
	}
	return acc
}

// loopSum is a plain loop's order: the products added in step order.
func loopSum(k int, a, b func(int) rt.BF16) float32 {
	acc := float32(0)
	for p := range k {
		acc += a(p).Float32() * b(p).Float32()
	}
	return acc
}

// flat is the n float32 cells of an array at p.
func flat[T any](p *T, n int) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(p)), n) }

func same(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s (tier %v): cell %d = %v, want %v", name, bf16.Best(), i, got[i], want[i])
		}
	}
}

// checkAll runs every kernel on random data and compares it with plain
// loops over the operands widened to float32: the contractions (on
// rt/bf16, both operands transposed and two reduction axes included) in
// its documented order bit for bit, the Go-loop nests (a pointwise
// product, a row sum) in the order of their loops.
func checkAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	{
		a, b, out := new([37][300]rt.BF16), new([300][45]rt.BF16), new([37][45]float32)
		for i := range a {
			randBF16(rng, a[i][:])
		}
		for i := range b {
			randBF16(rng, b[i][:])
		}
		MatMul(a, b, out)
		var want [37][45]float32
		for i := range want {
			for k := range want[i] {
				want[i][k] = pairSum(300, func(j int) rt.BF16 { return a[i][j] }, func(j int) rt.BF16 { return b[j][k] })
			}
		}
		same(t, "MatMul", flat(out, 37*45), flat(&want, 37*45))
	}
	{
		a, b, out := new([2][3]rt.BF16), new([3][2]rt.BF16), new([2][2]float32)
		for i := range a {
			randBF16(rng, a[i][:])
		}
		for i := range b {
			randBF16(rng, b[i][:])
		}
		Tiny(a, b, out)
		var want [2][2]float32
		for i := range want {
			for k := range want[i] {
				want[i][k] = pairSum(3, func(j int) rt.BF16 { return a[i][j] }, func(j int) rt.BF16 { return b[j][k] })
			}
		}
		same(t, "Tiny", flat(out, 4), flat(&want, 4))
	}
	{
		a, b, out := make([]rt.BF16, 4*16*24), make([]rt.BF16, 4*20*24), make([]float32, 4*16*20)
		randBF16(rng, a)
		randBF16(rng, b)
		BatchNT(a, b, out)
		want := make([]float32, len(out))
		for n := range 4 {
			for q := range 16 {
				for s := range 20 {
					want[(n*16+q)*20+s] = pairSum(24, func(d int) rt.BF16 { return a[(n*16+q)*24+d] }, func(d int) rt.BF16 { return b[(n*20+s)*24+d] })
				}
			}
		}
		same(t, "BatchNT", out, want)
	}
	{
		a, b, out := new([29][40]rt.BF16), new([33][29]rt.BF16), new([40][33]float32)
		for i := range a {
			randBF16(rng, a[i][:])
		}
		for i := range b {
			randBF16(rng, b[i][:])
		}
		MatMulTT(a, b, out)
		var want [40][33]float32
		for i := range want {
			for k := range want[i] {
				want[i][k] = pairSum(29, func(j int) rt.BF16 { return a[j][i] }, func(j int) rt.BF16 { return b[k][j] })
			}
		}
		same(t, "MatMulTT", flat(out, 40*33), flat(&want, 40*33))
	}
	{
		a, b, out := new([3][10][12]rt.BF16), new([3][12][9]rt.BF16), new([10][9]float32)
		for i := range a {
			for j := range a[i] {
				randBF16(rng, a[i][j][:])
			}
			for j := range b[i] {
				randBF16(rng, b[i][j][:])
			}
		}
		SumBatch(a, b, out)
		var want [10][9]float32
		for i := range want {
			for k := range want[i] {
				want[i][k] = pairSum(36, func(r int) rt.BF16 { return a[r/12][i][r%12] }, func(r int) rt.BF16 { return b[r/12][r%12][k] })
			}
		}
		same(t, "SumBatch", flat(out, 90), flat(&want, 90))
	}
	{
		x, w, out := new([4][16][8]rt.BF16), new([5][3][8]rt.BF16), new([4][16][5]float32)
		for i := range x {
			for j := range x[i] {
				randBF16(rng, x[i][j][:])
			}
		}
		for i := range w {
			for j := range w[i] {
				randBF16(rng, w[i][j][:])
			}
		}
		Conv(x, w, out)
		var want [4][16][5]float32
		for n := range want {
			for o := range want[n] {
				for d := range want[n][o] {
					xr := func(r int) rt.BF16 {
						if i := o + r/8 - 1; i >= 0 && i < 16 {
							return x[n][i][r%8]
						}
						return 0
					}
					want[n][o][d] = pairSum(24, xr, func(r int) rt.BF16 { return w[d][r/8][r%8] })
				}
			}
		}
		same(t, "Conv", flat(out, 4*16*5), flat(&want, 4*16*5))
	}
	{
		a, b, out := new([40]rt.BF16), new([50]rt.BF16), new([40][50]float32)
		randBF16(rng, a[:])
		randBF16(rng, b[:])
		Outer(a, b, out)
		var want [40][50]float32
		for i := range want {
			for j := range want[i] {
				want[i][j] = a[i].Float32() * b[j].Float32()
			}
		}
		same(t, "Outer", flat(out, 2000), flat(&want, 2000))
	}
	{
		a, b, out := new([100]rt.BF16), new([100]rt.BF16), new([100]float32)
		randBF16(rng, a[:])
		randBF16(rng, b[:])
		Mul(a, b, out)
		var want [100]float32
		for i := range want {
			want[i] = a[i].Float32() * b[i].Float32()
		}
		same(t, "Mul", out[:], want[:])
	}
	{
		a, out := new([8][50]rt.BF16), new([8]float32)
		for i := range a {
			randBF16(rng, a[i][:])
		}
		RowSum(a, out)
		var want [8]float32
		one := func(int) rt.BF16 { return rt.BF16FromFloat32(1) }
		for i := range want {
			want[i] = loopSum(50, func(j int) rt.BF16 { return a[i][j] }, one)
		}
		same(t, "RowSum", out[:], want[:])
	}
}

// TestKernels: every kernel matches the plain loops in the tier this
// process runs (bf16.Best).
func TestKernels(t *testing.T) { checkAll(t) }

// TestKernelsEveryTier reruns TestKernels under each OCANNLGEN_CPU value
// (rt/bf16 fixes its tier at start-up): every tier gives the same bits.
func TestKernelsEveryTier(t *testing.T) {
	if os.Getenv("OCANNLGEN_BF16EINSUM_CHILD") != "" {
		t.Skip("in a child")
	}
	for _, env := range []string{"purego", "avx2", "avx512", "avx512bf16"} {
		cmd := exec.Command(os.Args[0], "-test.run=^(TestKernels|TestTier)$", "-test.v")
		cmd.Env = append(os.Environ(), "OCANNLGEN_CPU="+env, "OCANNLGEN_BF16EINSUM_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestKernels") {
			t.Fatalf("OCANNLGEN_CPU=%s: %v\n%s", env, err, out)
		}
		tier := ""
		if i := strings.Index(string(out), "tier="); i >= 0 {
			tier = strings.Fields(string(out)[i:])[0]
		}
		t.Logf("OCANNLGEN_CPU=%s: %s", env, tier)
	}
}

// TestTier logs the tier (for TestKernelsEveryTier).
func TestTier(t *testing.T) { fmt.Printf("tier=%v\n", bf16.Best()) }

// TestAllocs: a call allocates nothing.
func TestAllocs(t *testing.T) {
	a, b, out := new([37][300]rt.BF16), new([300][45]rt.BF16), new([37][45]float32)
	s1, s2, o2 := make([]rt.BF16, 4*16*24), make([]rt.BF16, 4*20*24), make([]float32, 4*16*20)
	t1, t2, to := new([29][40]rt.BF16), new([33][29]rt.BF16), new([40][33]float32)
	cx, cw, co := new([4][16][8]rt.BF16), new([5][3][8]rt.BF16), new([4][16][5]float32)
	for name, f := range map[string]func(){
		"MatMul":   func() { MatMul(a, b, out) },
		"BatchNT":  func() { BatchNT(s1, s2, o2) },
		"MatMulTT": func() { MatMulTT(t1, t2, to) },
		"Conv":     func() { Conv(cx, cw, co) },
	} {
		f()
		if n := testing.AllocsPerRun(5, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}
