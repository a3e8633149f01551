package asm

import (
	"bytes"
	"fmt"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// transFunc is one unary primitive of transcend.go in the sweep: the
// math-package reference (Go over float64 x), and the largest error
// allowed in ulps of the element type (docs/design.md's table).
// Exact ones must match the Go path bit for bit (the sign of zero
// included). Dense ones are also swept over 200000 inputs in [-10, 10).
type transFunc struct {
	prim  ops.PrimName
	ref   string
	ulp32 int
	ulp64 int
	exact bool
	dense bool
	// ref32, when set, is the float32 reference (the Go path's function
	// when it is not the float64 one rounded); only32 leaves float64 out.
	ref32  string
	only32 bool
}

// transFuncs are the swept primitives. The bounds are the documented
// maximum errors against package math (the Go path's value: for float32,
// float32(math.F(float64(x)))). erf, gelu and gelu_tanh compute Go's
// math.Erf, math.Tanh and amd64 math.Exp operation for operation, so
// they are exact: any difference in erf or tanh would be amplified in
// the gelus where 1 + erf (1 + tanh) cancels, up to thousands of ulps.
// float32 gelu and gelu_grad compute rt.Gelu32 and rt.GeluGrad32
// (float32 operations) and must match them bit for bit; float64
// gelu_grad is the former derivative expression (its exp within exp's
// bound), checked in the composite maps.
var transFuncs = []transFunc{
	{prim: "exp", ref: "expRef", ulp32: 1, ulp64: 2},
	{prim: "exp2", ref: "math.Exp2", ulp32: 1, ulp64: 2},
	{prim: "log", ref: "logRef", ulp32: 1, ulp64: 2},
	{prim: "log2", ref: "log2Ref", ulp32: 1, ulp64: 2},
	{prim: "tanh", ref: "math.Tanh", ulp32: 1, ulp64: 2},
	{prim: "erf", ref: "math.Erf", exact: true, dense: true},
	{prim: "gelu", ref: "geluRef", exact: true, dense: true, ref32: "gelu32Ref"},
	{prim: "gelu_grad", exact: true, dense: true, ref32: "geluGrad32Ref", only32: true},
	{prim: "gelu_tanh", ref: "geluTanhRef", exact: true, dense: true},
	{prim: "sqrt", ref: "math.Sqrt", exact: true},
	{prim: "recip", ref: "func(x float64) float64 { return 1 / x }", exact: true},
	{prim: "recip_sqrt", ref: "func(x float64) float64 { return 1 / math.Sqrt(x) }", exact: true},
	{prim: "neg", ref: "func(x float64) float64 { return -x }", exact: true},
	{prim: "not", ref: "func(x float64) float64 { if x == 0 { return 1 }; return 0 }", exact: true},
	{prim: "sat01", ref: "func(x float64) float64 { return min(1, max(0, x)) }", exact: true},
}

// transMapCases are composite maps over the new primitives: stride-0
// operands, accumulation, rows, tails (checked against Go loops with
// writeMapCase, relative tolerance 1e-6).
func transMapCases() []MapSpec {
	x := func(i int) loopir.Expr { return &loopir.Load{Tensor: i} }
	ap := func(p ops.PrimName, args ...loopir.Expr) loopir.Expr { return &loopir.Apply{Prim: p, Args: args} }
	k := func(v float64) loopir.Expr { return &loopir.Const{Value: v} }
	var out []MapSpec
	for _, elem := range []string{"float32", "float64"} {
		out = append(out,
			// softmax's exp(x - max) with the row maximum at stride 0, rows with gaps.
			MapSpec{Elem: elem, N: 37, Rows: 9, RowStride: []int{40, 41, 1}, Expr: ap("exp", ap("sub", x(0), x(1))), Stride0: []bool{false, true}, Accumulate: true},
			MapSpec{Elem: elem, N: 301, Expr: ap("add", ap("mul", ap("tanh", x(0)), ap("sat01", x(1))), ap("log", ap("add", ap("mul", x(0), x(0)), k(1)))), Stride0: []bool{false, false}},
			MapSpec{Elem: elem, N: 19, Expr: ap("fma", x(0), x(1), ap("recip_sqrt", ap("add", ap("mul", x(2), x(2)), k(0.5)))), Stride0: []bool{false, false, true}},
			MapSpec{Elem: elem, N: 263, Expr: ap("add", ap("neg", ap("not", x(0))), ap("add", ap("exp2", x(1)), ap("mul", ap("log2", ap("add", ap("mul", x(1), x(1)), k(2))), ap("recip", ap("add", x(1), k(3)))))), Stride0: []bool{false, false}, Accumulate: true},
			MapSpec{Elem: elem, N: 16, Expr: ap("sqrt", ap("mul", x(0), x(0))), Stride0: []bool{false}},
			// gelu of a bias add (the bias at stride 0 in a row, moving by row), plus erf.
			MapSpec{Elem: elem, N: 150, Rows: 3, RowStride: []int{151, 150, 1}, Expr: ap("add", ap("gelu", ap("add", x(0), x(1))), ap("erf", x(0))), Stride0: []bool{false, true}},
			MapSpec{Elem: elem, N: 45, Expr: ap("mul", ap("gelu_tanh", ap("sub", x(0), x(1))), x(1)), Stride0: []bool{false, true}, Accumulate: true},
			// gelu's backward map: the gradient times gelu_grad of the input.
			MapSpec{Elem: elem, N: 77, Rows: 2, RowStride: []int{80, 77, 80}, Expr: ap("mul", x(0), ap("gelu_grad", x(1))), Stride0: []bool{false, false}},
		)
	}
	return out
}

// TestTranscendentalSweep builds the AVX2 kernels of every unary
// primitive of transcend.go and runs them over about 1.7 million float32
// inputs (every 4093rd bit pattern: all binades, denormals, ±Inf, NaNs;
// dense samples where the functions vary; the overflow and underflow
// thresholds) and about a million float64 ones, reporting each
// function's largest error in ulps against package math and failing
// above the documented bound; then the composite maps against Go loops.
// An end-to-end check (OCANNLGEN_E2E=1, or OCANNLGEN_KERNEL_BIN_DIR set):
// building the module is slow.
func TestTranscendentalSweep(t *testing.T) {
	if runtime.GOARCH != "amd64" || !cpu.Supported("AVX", "AVX2", "FMA3") {
		t.Skip("needs amd64 with AVX2 and FMA")
	}
	if testing.Short() {
		t.Skip("builds a module (slow)")
	}
	// In the default run, internal/tiers runs every transcendental kernel
	// in every tier on special values (TestTiersAgreeAsDocumented).
	// bench/offline/kit.sh builds the sweep program for the AVX-512
	// machine (OCANNLGEN_KERNEL_BIN_DIR) without OCANNLGEN_E2E.
	if os.Getenv("OCANNLGEN_KERNEL_BIN_DIR") == "" {
		testutil.EndToEnd(t)
	}
	set := NewSet(Tiers()...)
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"math/rand/v2\"\n\t\"os\"\n\n\t\"github.com/ocannlgen/ocannlgen/rt\"\n)\n\nfunc main() {\n\tbad := 0\n")
	avx2 := AVX2()
	var swept []int // the maps of the unary sweep and of fma, in order
	for _, elem := range []string{"float32", "float64"} {
		for _, f := range transFuncs {
			if f.only32 && elem == "float64" {
				continue
			}
			ref := f.ref
			if f.ref32 != "" && elem == "float32" {
				ref = f.ref32
			}
			i := set.AddMap(MapSpec{Elem: elem, N: sweepChunk, Expr: &loopir.Apply{Prim: f.prim, Args: []loopir.Expr{&loopir.Load{Tensor: 0}}}, Stride0: []bool{false}})
			bound := f.ulp32
			if elem == "float64" {
				bound = f.ulp64
			}
			swept = append(swept, i)
			fmt.Fprintf(&b, "\tbad += sweep%s(%q, %s, %s, %d, %v, %v)\n", elem[5:], f.prim, set.MapName(i, avx2), ref, bound, f.exact, f.dense)
		}
		i := set.AddMap(MapSpec{Elem: elem, N: sweepChunk, Expr: &loopir.Apply{Prim: "fma", Args: []loopir.Expr{&loopir.Load{Tensor: 0}, &loopir.Load{Tensor: 1}, &loopir.Load{Tensor: 2}}}, Stride0: []bool{false, false, false}})
		swept = append(swept, i)
		fmt.Fprintf(&b, "\tbad += fma%s(%s)\n", elem[5:], set.MapName(i, avx2))
	}
	maps := transMapCases()
	for i, m := range maps {
		set.AddMap(m)
		fmt.Fprintf(&b, "\tbad += mcase%d%s()\n", i, avx2.Tier)
	}
	b.WriteString("\tif bad > 0 {\n\t\tos.Exit(1)\n\t}\n\tfmt.Println(\"ok\")\n}\n")
	for i, m := range maps {
		writeMapCase(&b, i, avx2.Tier, &m, set.MapName(set.AddMap(m), avx2))
	}
	b.WriteString(mapHelpers)
	b.WriteString(transHelpers)
	fmt.Fprintf(&b, "\nconst chunk = %d\n", sweepChunk)
	b.WriteString(sweepProgram)
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	// The sweep measures the AVX2 kernels; a map has an AVX-512 twin
	// exactly when EmitsIn says so (exp, exp2 and the exact primitives
	// in float32: TestWideMapsMatchAVX2 checks those twins' bits
	// against the AVX2 kernels).
	avx512 := AVX512()
	for _, k := range swept {
		name := set.MapName(k, avx512) + "(SB)"
		spec := set.maps[k]
		if got := bytes.Contains(files[AsmFile], []byte(name)); got != spec.EmitsIn(avx512) {
			t.Errorf("%s map %d (%s): AVX-512 twin emitted %v, EmitsIn %v", spec.Elem, k, mapDesc(&spec), got, spec.EmitsIn(avx512))
		}
	}
	out, err := runKernelModule(t, files, b.Bytes())
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("transcendental kernels out of bounds: %v\n%s", err, out)
	}
	t.Log(out)
}

// sweepChunk is the sweep kernels' length (a float32 and a float64 tail).
const sweepChunk = 1027

// transHelpers are the Go path's primitives for writeMapCase.
const transHelpers = `
func exp_[T float32 | float64](x T) T        { return T(math.Exp(float64(x))) }
func exp2_[T float32 | float64](x T) T       { return T(math.Exp2(float64(x))) }
func log_[T float32 | float64](x T) T        { return T(math.Log(float64(x))) }
func log2_[T float32 | float64](x T) T       { return T(math.Log2(float64(x))) }
func tanh_[T float32 | float64](x T) T       { return T(math.Tanh(float64(x))) }
func erf_[T float32 | float64](x T) T        { return T(math.Erf(float64(x))) }
func gelu_[T float32 | float64](x T) T {
	if f, ok := any(x).(float32); ok {
		return T(rt.Gelu32(f))
	}
	return T(geluRef(float64(x)))
}
func gelu_grad_[T float32 | float64](x T) T {
	if f, ok := any(x).(float32); ok {
		return T(rt.GeluGrad32(f))
	}
	return T(geluGradRef(float64(x)))
}
func gelu_tanh_[T float32 | float64](x T) T  { return T(geluTanhRef(float64(x))) }
func sqrt_[T float32 | float64](x T) T       { return T(math.Sqrt(float64(x))) }
func recip_[T float32 | float64](x T) T      { return 1 / x }
func recip_sqrt_[T float32 | float64](x T) T { return T(1 / math.Sqrt(float64(x))) }
func neg_[T float32 | float64](x T) T        { return -x }
func sat01_[T float32 | float64](x T) T      { return min(1, max(0, x)) }
func not_[T float32 | float64](x T) T {
	if x == 0 {
		return 1
	}
	return 0
}
func fma_[T float32 | float64](a, b, c T) T {
	return T(float64(float64(a)*float64(b)) + float64(c))
}
`

// sweepProgram is the sweep: inputs, ulp distances, the report. The
// references are package math's functions except where amd64's math is
// off itself: its assembly Exp returns +Inf from x > 1023.5*ln2 (about
// 709.44) although e^x is finite up to 709.78 (there the reference is
// math.Exp(x-1)*e); its assembly Log ignores denormal inputs (there it
// is Log(x*2^54) - 54*ln2); and math.Log2 = Log(frac)/ln2 + exp cancels
// digits near 1 (the reference is Log(x)*log2(e) with log2(e) in two
// parts).
const sweepProgram = `
func expRef(x float64) float64 {
	if x > 709.4 && x < 709.8 {
		return math.Exp(x-1) * math.E
	}
	return math.Exp(x)
}

func logRef(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.FMA(-54, math.Ln2, math.Log(x*0x1p54))
	}
	return math.Log(x)
}

func log2Ref(x float64) float64 {
	if frac, e := math.Frexp(x); frac == 0.5 {
		return float64(e - 1)
	}
	l := logRef(x)
	return math.FMA(l, math.Log2E, l*2.0355273740931033e-17)
}

// geluRef and geluTanhRef are ops' Go recipes of gelu and gelu_tanh.
func geluRef(x float64) float64 { return 0.5 * x * (1 + math.Erf(x*0.7071067811865476)) }

// gelu32Ref and geluGrad32Ref are the float32 Go path (package rt).
func gelu32Ref(x float64) float64     { return float64(rt.Gelu32(float32(x))) }
func geluGrad32Ref(x float64) float64 { return float64(rt.GeluGrad32(float32(x))) }

// geluGradRef is ops' float64 Go recipe of gelu_grad.
func geluGradRef(x float64) float64 {
	return 0.5*(1+math.Erf(x*0.7071067811865476)) + x*(0.3989422804014327*math.Exp(-0.5*(x*x)))
}

func geluTanhRef(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(0.7978845608028654*(x+0.044715*x*x*x)))
}

func key32(f float32) int64 {
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return -int64(b &^ (1 << 31))
	}
	return int64(b)
}

func key64(f float64) int64 {
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return -int64(b &^ (1 << 63))
	}
	return int64(b)
}

// dist is got's distance from want in ulps (±0 are one point); -1 when
// one is NaN or infinite and the other is not the same, or, when exact,
// when any bit differs.
func dist(got, want float64, kg, kw int64, exact bool, same bool) int64 {
	gn, wn := math.IsNaN(got), math.IsNaN(want)
	if gn || wn {
		if gn == wn {
			return 0
		}
		return -1
	}
	if math.IsInf(got, 0) || math.IsInf(want, 0) {
		if got == want {
			return 0
		}
		return -1
	}
	if exact && !same {
		return -1
	}
	d := kg - kw
	if d < 0 {
		d = -d
	}
	return d
}

func specials() []float64 {
	return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 0.5, 2,
		math.MaxFloat32, math.SmallestNonzeroFloat32, 0x1p-126, -0x1p-126, math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022,
		88.72283, 88.72284, 88.7228391, -87.33654, -87.33655, -103.97207, -103.97208, -103.97209, -104, 128, 127.99999, -149, -150, -126,
		709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411, -745.1332191019412, -746, 1024, 1023.9999999, -1074, -1075, -1022,
		0.625, -0.625, 0.6249999, 44, -44, 22, 1e-8, -1e-8, 1e-300, math.Sqrt2, math.Sqrt2 / 2, 1.0000001, 0.9999999}
}

// edges are erf's interval boundaries (|x| = 0.84375, 1.25, 1/0.35, 6,
// 2^-28 and VeryTiny, and the x whose x/sqrt2 are those, for gelu),
// tanh's, and large values, each with its float64 and float32 neighbours,
// both signs.
func edges() []float64 {
	var out []float64
	for _, b := range []float64{0.84375, 1.25, 1 / 0.35, 6, 0x1p-28, 2.848094538889218e-306, 0.625, 0.5 * 88.029691931113054295988,
		0.84375 / 0.7071067811865476, 1.25 / 0.7071067811865476, 1 / 0.35 / 0.7071067811865476, 6 / 0.7071067811865476, 0x1p-28 / 0.7071067811865476,
		1e10, 1e20, 1.5e34, 1e102, 1.6e103, 1e154, 1e200, 1e307} {
		f := float32(b)
		for _, v := range []float64{b, math.Nextafter(b, 0), math.Nextafter(b, math.Inf(1)), float64(f), float64(math.Nextafter32(f, 0)), float64(math.Nextafter32(f, float32(math.Inf(1))))} {
			out = append(out, v, -v)
		}
	}
	return out
}

// dense are extra inputs of the primitives marked dense: 200000 uniform
// in [-10, 10), where erf and the gelus vary (and gelu's 1 + erf cancels).
func dense(seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 9))
	xs := make([]float64, 200000)
	for i := range xs {
		xs[i] = r.Float64()*20 - 10
	}
	return xs
}

func inputs32(withDense bool) []float32 {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 4093 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 400000 {
		xs = append(xs, float32(r.Float64()*200-100))
	}
	for range 200000 {
		xs = append(xs, float32(r.Float64()*4))
	}
	for _, v := range specials() {
		xs = append(xs, float32(v))
	}
	for _, v := range edges() {
		xs = append(xs, float32(v))
	}
	if withDense {
		for _, v := range dense(11) {
			xs = append(xs, float32(v))
		}
	}
	for len(xs)%chunk != 0 {
		xs = append(xs, 1)
	}
	return xs
}

func inputs64(withDense bool) []float64 {
	r := rand.New(rand.NewPCG(3, 4))
	var xs []float64
	for range 300000 {
		xs = append(xs, math.Float64frombits(r.Uint64()))
	}
	for range 20000 {
		xs = append(xs, math.Float64frombits(r.Uint64()&(1<<52-1)))
	}
	for range 300000 {
		xs = append(xs, r.Float64()*1600-800)
	}
	for range 300000 {
		xs = append(xs, r.Float64()*80-40)
	}
	for range 200000 {
		xs = append(xs, r.Float64()*4)
	}
	xs = append(xs, specials()...)
	xs = append(xs, edges()...)
	if withDense {
		xs = append(xs, dense(12)...)
	}
	for len(xs)%chunk != 0 {
		xs = append(xs, 1)
	}
	return xs
}

func sweep32(name string, k func(c, x *float32), ref func(float64) float64, bound int64, exact, withDense bool) int {
	xs := inputs32(withDense)
	out := make([]float32, len(xs))
	for i := 0; i < len(xs); i += chunk {
		k(&out[i], &xs[i])
	}
	var worst int64
	var at, got, want float32
	bad, differ := 0, 0
	for i, x := range xs {
		w := float32(ref(float64(x)))
		// Exact: the same bits (any NaN for a NaN, the sign of a zero); d,
		// the distance in ulps, is reported for exact ones too.
		same := math.Float32bits(out[i]) == math.Float32bits(w) || math.IsNaN(float64(out[i])) && math.IsNaN(float64(w))
		d := dist(float64(out[i]), float64(w), key32(out[i]), key32(w), false, same)
		if d < 0 || d > bound || exact && !same {
			if bad < 5 {
				fmt.Printf("%s float32: x=%g (%#x): got %g want %g\n", name, x, math.Float32bits(x), out[i], w)
			}
			bad++
		}
		if d > worst {
			worst, at, got, want = d, x, out[i], w
		}
		if d != 0 || exact && !same {
			differ++
		}
	}
	fmt.Printf("%-10s float32 max %d ulp over %d inputs, %d not identical (x=%g: %g, math %g); %d out of bounds\n", name, worst, len(xs), differ, at, got, want, bad)
	return bad
}

func sweep64(name string, k func(c, x *float64), ref func(float64) float64, bound int64, exact, withDense bool) int {
	xs := inputs64(withDense)
	out := make([]float64, len(xs))
	for i := 0; i < len(xs); i += chunk {
		k(&out[i], &xs[i])
	}
	var worst int64
	var at, got, want float64
	bad, differ := 0, 0
	for i, x := range xs {
		w := ref(x)
		same := math.Float64bits(out[i]) == math.Float64bits(w) || math.IsNaN(out[i]) && math.IsNaN(w)
		d := dist(out[i], w, key64(out[i]), key64(w), false, same)
		if d < 0 || d > bound || exact && !same {
			if bad < 5 {
				fmt.Printf("%s float64: x=%g (%#x): got %g want %g\n", name, x, math.Float64bits(x), out[i], w)
			}
			bad++
		}
		if d > worst {
			worst, at, got, want = d, x, out[i], w
		}
		if d != 0 || exact && !same {
			differ++
		}
	}
	fmt.Printf("%-10s float64 max %d ulp over %d inputs, %d not identical (x=%g: %g, math %g); %d out of bounds\n", name, worst, len(xs), differ, at, got, want, bad)
	return bad
}

func fma32(k func(c, a, b, d *float32)) int {
	xs := inputs32(false)
	n := len(xs)
	a, b, d, out := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		a[i], b[i], d[i] = xs[i], xs[r.IntN(n)], xs[r.IntN(n)]
	}
	for i := 0; i < n; i += chunk {
		k(&out[i], &a[i], &b[i], &d[i])
	}
	bad := 0
	for i := range n {
		w := fma_(a[i], b[i], d[i])
		if dist(float64(out[i]), float64(w), 0, 0, true, math.Float32bits(out[i]) == math.Float32bits(w)) != 0 {
			if bad < 5 {
				fmt.Printf("fma float32: %g*%g+%g: got %g want %g\n", a[i], b[i], d[i], out[i], w)
			}
			bad++
		}
	}
	fmt.Printf("fma        float32 exact over %d inputs; %d differ\n", n, bad)
	return bad
}

func fma64(k func(c, a, b, d *float64)) int {
	xs := inputs64(false)
	n := len(xs)
	a, b, d, out := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range n {
		a[i], b[i], d[i] = xs[i], xs[r.IntN(n)], xs[r.IntN(n)]
	}
	for i := 0; i < n; i += chunk {
		k(&out[i], &a[i], &b[i], &d[i])
	}
	bad := 0
	for i := range n {
		w := fma_(a[i], b[i], d[i])
		if dist(out[i], w, 0, 0, true, math.Float64bits(out[i]) == math.Float64bits(w)) != 0 {
			if bad < 5 {
				fmt.Printf("fma float64: %g*%g+%g: got %g want %g\n", a[i], b[i], d[i], out[i], w)
			}
			bad++
		}
	}
	fmt.Printf("fma        float64 exact over %d inputs; %d differ\n", n, bad)
	return bad
}
`

// TestTranscendentalFit: a map whose AVX2 kernel would need more than
// the 16 YMM registers is refused (fitsAVX2, and Files fails rather than
// emit EVEX-only registers), a small one fits, and such maps are not
// emitted for the AVX-512 tier.
func TestTranscendentalFit(t *testing.T) {
	x := func(i int) loopir.Expr { return &loopir.Load{Tensor: i} }
	ap := func(p ops.PrimName, args ...loopir.Expr) loopir.Expr { return &loopir.Apply{Prim: p, Args: args} }
	// Six broadcast operands stay in registers across the loop.
	var sum loopir.Expr = x(0)
	for i := 1; i < 6; i++ {
		sum = ap("add", ap("tanh", ap("mul", sum, x(i))), ap("log", x(i)))
	}
	big := MapSpec{Elem: "float32", N: 100, Expr: ap("tanh", sum), Stride0: []bool{false, true, true, true, true, true}}
	if big.fitsAVX2() {
		t.Errorf("%s fits 16 registers, want not", mapDesc(&big))
	}
	s := NewSet(target.AVX2())
	s.AddMap(big)
	if _, err := s.Files("p"); err == nil {
		t.Errorf("Files of a map over 16 registers succeeded")
	}
	// Fits 32 registers but not 16: the guard, not avo, refuses it.
	var prod loopir.Expr = ap("tanh", x(0))
	for i := 1; i < 6; i++ {
		prod = ap("mul", prod, x(i))
	}
	mid := MapSpec{Elem: "float32", N: 100, Expr: ap("add", prod, ap("tanh", x(0))), Stride0: []bool{false, true, true, true, true, true}}
	s = NewSet(target.AVX2())
	s.AddMap(mid)
	if _, err := s.Files("p"); err == nil || !strings.Contains(err.Error(), "more than 16 vector registers") {
		t.Errorf("Files of a map over 16 registers: %v, want the register error", err)
	}
	small := MapSpec{Elem: "float64", N: 100, Expr: ap("exp", x(0)), Stride0: []bool{false}}
	if !small.fitsAVX2() || !small.avx2Only() || small.EmitsIn(AVX512()) || !small.EmitsIn(AVX2()) {
		t.Errorf("float64 exp map: fits %v, AVX2 only %v, in AVX512 %v", small.fitsAVX2(), small.avx2Only(), small.EmitsIn(AVX512()))
	}
	if d := small.Describe(AVX512(), AVX2()); !strings.HasSuffix(d, ": AVX2 (also on AVX-512 machines)") {
		t.Errorf("Describe = %q", d)
	}
	// A softmax's exp(x - max) and a layer norm's sqrt(var + eps) in
	// float32, and the exact primitives in both types, have AVX-512
	// kernels (wideTrans); a map mixing in log stays AVX2-only.
	for _, m := range []MapSpec{
		{Elem: "float32", N: 100, Expr: ap("exp", ap("sub", x(0), x(1))), Stride0: []bool{false, true}},
		{Elem: "float32", N: 100, Expr: ap("exp2", x(0)), Stride0: []bool{false}},
		{Elem: "float32", N: 100, Expr: ap("sqrt", ap("add", x(0), &loopir.Const{Value: 1e-5})), Stride0: []bool{false}},
		{Elem: "float64", N: 100, Expr: ap("sub", ap("recip", ap("neg", x(0))), ap("not", ap("sat01", x(0)))), Stride0: []bool{false}},
	} {
		if m.avx2Only() || !m.EmitsIn(AVX512()) || !m.EmitsIn(AVX2()) {
			t.Errorf("%s: AVX2 only %v, in AVX512 %v", mapDesc(&m), m.avx2Only(), m.EmitsIn(AVX512()))
		}
		if d := m.Describe(AVX512(), AVX2()); !strings.HasSuffix(d, ": AVX512, AVX2") {
			t.Errorf("Describe = %q", d)
		}
	}
	if m := (MapSpec{Elem: "float32", N: 100, Expr: ap("exp", ap("log", x(0))), Stride0: []bool{false}}); !m.avx2Only() || m.EmitsIn(AVX512()) {
		t.Errorf("%s: emitted in the AVX-512 tier", mapDesc(&m))
	}
	// The AVX-512 kernels assemble (32 registers, no 32-byte memory
	// operand widened to 64).
	ws := NewSet(target.AVX512(), target.AVX2())
	ws.AddMap(MapSpec{Elem: "float32", N: 37, Rows: 3, RowStride: []int{40, 41, 1}, Expr: ap("exp", ap("sub", x(0), x(1))), Stride0: []bool{false, true}, Accumulate: true})
	ws.AddMap(MapSpec{Elem: "float64", N: 19, Expr: ap("sub", ap("recip", ap("neg", x(0))), ap("not", ap("sat01", ap("sqrt", x(0))))), Stride0: []bool{false}})
	files, err := ws.Files("p")
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	if !bytes.Contains(files[AsmFile], []byte("VRNDSCALEPS")) || !bytes.Contains(files[AsmFile], []byte("ocannlMap0AVX512")) || !bytes.Contains(files[AsmFile], []byte("ocannlMap1AVX512")) {
		t.Errorf("no AVX-512 exp or exact kernel:\n%s", files[AsmFile])
	}
	// erf, gelu, gelu_tanh and gelu_grad of a bias add: kernels that fit,
	// in both element types, run from MinCostlyMapElems elements;
	// AVX2-only but for the float32 gelu and gelu_grad (float32
	// operations, which the AVX-512 tier emits too).
	kn := target.AVX2().Kernels
	for _, elem := range []string{"float32", "float64"} {
		for _, p := range []ops.PrimName{ops.Erf, ops.Gelu, ops.GeluTanh, ops.GeluGrad} {
			m := MapSpec{Elem: elem, N: 100, Expr: ap(p, ap("add", x(0), x(1))), Stride0: []bool{false, true}}
			wide := elem == "float32" && (p == ops.Gelu || p == ops.GeluGrad)
			if !m.fitsAVX2() || m.avx2Only() == wide || m.EmitsIn(AVX512()) != wide || minMapElems(m.Expr, kn) != kn.MinCostlyMapElems {
				t.Errorf("%s map: fits %v, AVX2 only %v, in AVX512 %v, from %d elements", mapDesc(&m), m.fitsAVX2(), m.avx2Only(), m.EmitsIn(AVX512()), minMapElems(m.Expr, kn))
			}
		}
	}
}

// TestTranscendentalTiming prints the time per call of exp, tanh and
// log map kernels against the Go path's loop (float32(math.Exp(...))),
// for the minimum-size rule (MinCostlyMapElems) and docs/design.md. A
// measurement, not a check: it runs only with OCANNLGEN_TIMING=1 (all)
// or a list of them (OCANNLGEN_TIMING=exp,log).
func TestTranscendentalTiming(t *testing.T) {
	which := os.Getenv("OCANNLGEN_TIMING") // 1: all; else a list of primitives
	if which == "" || runtime.GOARCH != "amd64" || !cpu.Supported("AVX", "AVX2", "FMA3") {
		t.Skip("set OCANNLGEN_TIMING=1 (or exp,log; amd64 with AVX2) to measure")
	}
	set := NewSet(target.AVX2())
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"testing\"\n)\n\nfunc main() {\n")
	goFn := map[string]string{"exp": "math.Exp", "tanh": "math.Tanh", "log": "math.Log", "erf": "math.Erf", "gelu": "geluRef", "gelu_tanh": "geluTanhRef", "gelu_grad": "geluGradRef"}
	for _, elem := range []string{"float32", "float64"} {
		for _, prim := range []string{"exp", "tanh", "log", "erf", "gelu", "gelu_tanh", "gelu_grad"} {
			if which != "1" && !slices.Contains(strings.Split(which, ","), prim) {
				continue
			}
			for _, n := range []int{8, 16, 64, 256, 1024, 4096} {
				i := set.AddMap(MapSpec{Elem: elem, N: n, Expr: &loopir.Apply{Prim: ops.PrimName(prim), Args: []loopir.Expr{&loopir.Load{Tensor: 0}}}, Stride0: []bool{false}})
				fmt.Fprintf(&b, "\t{\n\t\tx, c := make([]%[1]s, %[2]d), make([]%[1]s, %[2]d)\n\t\tfor j := range x {\n\t\t\tx[j] = %[1]s(j%%97)/31 + 0.01\n\t\t}\n", elem, n)
				fmt.Fprintf(&b, "\t\tk := testing.Benchmark(func(b *testing.B) {\n\t\t\tfor range b.N {\n\t\t\t\t%s(&c[0], &x[0])\n\t\t\t}\n\t\t})\n", set.MapName(i, AVX2()))
				fmt.Fprintf(&b, "\t\tg := testing.Benchmark(func(b *testing.B) {\n\t\t\tfor range b.N {\n\t\t\t\tfor j := range x {\n\t\t\t\t\tc[j] = %s(%s(float64(x[j])))\n\t\t\t\t}\n\t\t\t}\n\t\t})\n", elem, goFn[prim])
				fmt.Fprintf(&b, "\t\tfmt.Printf(\"%%-9s %%s n=%%5d: kernel %%8.1f ns, Go loop %%8.1f ns (%%.1fx)\\n\", %q, %q, %d, float64(k.NsPerOp()), float64(g.NsPerOp()), float64(g.NsPerOp())/float64(k.NsPerOp()))\n\t}\n", prim, elem, n)
			}
		}
	}
	b.WriteString("}\n")
	b.WriteString("\nfunc geluRef(x float64) float64 { return 0.5 * x * (1 + math.Erf(x*0.7071067811865476)) }\n")
	b.WriteString("\nfunc geluGradRef(x float64) float64 {\n\treturn 0.5*(1+math.Erf(x*0.7071067811865476)) + x*(0.3989422804014327*math.Exp(-0.5*(x*x)))\n}\n")
	b.WriteString("\nfunc geluTanhRef(x float64) float64 {\n\treturn 0.5 * x * (1 + math.Tanh(0.7978845608028654*(x+0.044715*x*x*x)))\n}\n")
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	out, err := runKernelModule(t, files, b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Log("\n" + out)
}
