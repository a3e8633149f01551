package cuda_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/cuda"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/pipeline"
	rtcuda "github.com/ocannlgen/ocannlgen/rt/cuda"
)

// contraction is a float32 kernel name with parameters a, b (inputs) and
// c (output): c = a +* spec b, a and b of the given dims.
func contraction(t *testing.T, name, spec, adims, bdims string) *desc.Kernel {
	t.Helper()
	g := testutil.Compile(t, "input a : "+adims+" = 0\ninput b : "+bdims+" = 0\nlet c = a +* \""+spec+"\" b")
	res, err := pipeline.CompileGraph(g, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := &desc.Kernel{Name: name, Elem: "float32", Prog: res.Loops}
	for _, n := range []string{"a", "b", "c"} {
		k.Params = append(k.Params, desc.Param{Name: n, Tensor: testutil.Named(t, g, n), Output: n == "c"})
	}
	return k
}

func render(t *testing.T, tg target.CUDA, ks ...*desc.Kernel) string {
	t.Helper()
	src, err := cuda.Render(&desc.File{Package: "gemm", Kernels: ks}, tg)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// kernelText is the part of a rendered file from kernel name's first
// function to its plan's end line.
func kernelText(t *testing.T, src, name string) string {
	t.Helper()
	i := strings.Index(src, "\n// Kernel "+name+" (")
	j := strings.Index(src, "// @ocannl end "+name+"\n")
	if i < 0 || j < 0 {
		t.Fatalf("no kernel %s in the file", name)
	}
	return src[i : j+len("// @ocannl end "+name+"\n")]
}

// mutate returns kernel name's text renamed to name+"Broken" with the
// first occurrence of old replaced by new (which must occur).
func mutate(t *testing.T, src, name, old, new string) string {
	t.Helper()
	k := kernelText(t, src, name)
	if !strings.Contains(k, old) {
		t.Fatalf("kernel %s has no %q to mutate", name, old)
	}
	k = strings.Replace(k, old, new, 1)
	return strings.ReplaceAll(k, name, name+"Broken")
}

// gemmPrecision is the tolerance of a tensor-core GEMM with operands
// rounded to a precision of unit roundoff u (tf32: 2^-11, its 10 mantissa
// bits rounded to nearest; bf16: 2^-8, 7 bits), inputs in [-1, 1) and a
// reduction of K terms: each product carries a relative error of at most
// about 2u, and independent errors of random sign grow like sqrt(K) (the
// standard deviation of the sum's error is about 0.27 u sqrt(K) for
// uniform inputs), so an absolute 4 u sqrt(K) is ~15 standard deviations
// while a single dropped product (|a b| up to 1, 1/3 on average) or a
// skipped slice exceeds it.
func gemmPrecision(prec string, K int) float64 {
	u := math.Ldexp(1, -11)
	if prec == "bf16" {
		u = math.Ldexp(1, -8)
	}
	return 4 * u * math.Sqrt(float64(K))
}

// gemmCase is one kernel of TestTunedGEMMs: its name, what its source
// must say, and its tolerance (0: the float32 relative tolerance).
type gemmCase struct {
	k    *desc.Kernel
	want []string
	prec string
	K    int
	// broken: a mutated copy that must fail.
	broken bool
}

// gemmSet is the kernels of TestTunedGEMMs (also recorded for the GPU):
// their sources (float32 with the lowered thresholds, tf32, bf16) and
// cases.
type gemmSet struct {
	src, tf32, bf16 string
	cases           []gemmCase
}

// all is the one file of every kernel of the set.
func (s *gemmSet) all() string { return s.src + s.tf32 + s.bf16 }

func tunedGEMMs(t *testing.T) *gemmSet {
	big := target.GPU()
	big.BigMinBlocks = 1
	tuned := contraction(t, "Tuned", "ij;jk=>ik", "136,24", "24,132")   // A float4 along k, B along the rows
	tunedT := contraction(t, "TunedT", "ji;jk=>ik", "20,136", "20,130") // A float4 along the rows, B scalar (rows of 130: misaligned)
	tunedS := contraction(t, "TunedS", "ij;jk=>ik", "130,26", "26,132") // A scalar (rows of 26)
	// Split-K at a size the emulation runs quickly: the thresholds
	// lowered (the target's own are tested by TestSplitKPlan).
	small := target.GPU()
	small.SplitK = target.SplitK{MaxBlocks: 16, MinK: 256, MinSlice: 64, Max: 64, TargetBlocks: 8}
	split := contraction(t, "Split", "ij;jk=>ik", "20,600", "600,12")         // 8 splits of 80, the last 40
	splitB := contraction(t, "SplitB", "bij;bjk=>ik", "2,16,256", "2,256,12") // reduction over b and j
	// A convolution's weight gradient (an implicit GEMM of affine
	// indices: few output cells, the reduction over batch and positions).
	const conv = "b, 1*oh<+kh, 1*ow<+kw, ic; b, oh, ow, oc => kh, kw, ic, oc"
	splitConv := contraction(t, "SplitConv", conv, "8,10,10,4", "8,8,8,8")
	src := render(t, big, tuned, tunedT, tunedS) + render(t, small, split, splitB, splitConv)
	tf32T, bf16T := target.GPU(), target.GPU()
	tf32T.Precision, bf16T.Precision = "tf32", "bf16"
	tc32 := contraction(t, "TF32", "ij;jk=>ik", "132,40", "40,136")
	tc16 := contraction(t, "BF16", "ji;jk=>ik", "72,136", "72,132")
	// Tensor cores with a batch and rows of two loops (decoded), and
	// split over the reduction (the lowered thresholds).
	tcB := contraction(t, "TF32Batch", "zipj;zjk=>zipk", "2,3,50,40", "2,40,136")
	tf32Small := small
	tf32Small.Precision = "tf32"
	tcS := contraction(t, "TF32Split", "ij;jk=>ik", "20,600", "600,12")
	tcConv := contraction(t, "TF32SplitConv", conv, "8,10,10,4", "8,8,8,8")
	return &gemmSet{src: src, tf32: render(t, tf32T, tc32, tcB) + render(t, tf32Small, tcS, tcConv), bf16: render(t, bf16T, tc16), cases: []gemmCase{
		{k: tuned, want: []string{"Tile 128x128", "A: float4 along the reduction; B: float4 along the rows", "OCANNL_LD4"}},
		{k: tunedT, want: []string{"Tile 128x128", "A: float4 along the rows; B: scalar, rows fastest"}},
		{k: tunedS, want: []string{"Tile 128x128", "A: scalar, reduction fastest; B: float4 along the rows"}},
		{k: split, want: []string{"Tile 64x64", "split-K: 8 splits of 80", "// @ocannl scratch 3 1920\n", "Split-K sum"}},
		{k: splitB, want: []string{"split-K: 8 splits of 64", "reduced i2,i3"}},
		{k: tc32, prec: "tf32", K: 40, want: []string{"Tensor-core GEMM (tf32", "nvcuda::wmma::__float_to_tf32", "16, 16, 8, nvcuda::wmma::precision::tf32"}},
		{k: tc16, prec: "bf16", K: 72, want: []string{"Tensor-core GEMM (bf16", "__float2bfloat16", "16, 16, 16, __nv_bfloat16"}},
		{k: tcB, prec: "tf32", K: 40, want: []string{"Tensor-core GEMM (tf32", "C 150x136 += A * B over 40 (rows i1,i2", "zb"}},
		{k: tcS, prec: "tf32", K: 600, want: []string{"Tensor-core GEMM (tf32", "split-K: 8 splits of 80"}},
		{k: splitConv, want: []string{"C 36x8 += A * B over 512 (rows i0,i1,i2, columns i3, reduced i4,i5,i6)", "split-K: 8 splits of 64"}},
		{k: tcConv, prec: "tf32", K: 512, want: []string{"Tensor-core GEMM (tf32", "split-K: 8 splits of 64"}},
	}}
}

// tol is the case's tolerance for compare and testutil.CloseRel: the
// float32 one, or for a tensor-core kernel gemmPrecision (an absolute
// bound; CloseRel scales it by max(1, |a|, |b|), which only loosens it).
func (c gemmCase) tol() float64 {
	if c.prec != "" {
		return gemmPrecision(c.prec, c.K)
	}
	return tolerance("float32")
}

// close reports whether got matches the interpreter's want.
func (c gemmCase) close(got, want float64) bool {
	if c.prec != "" {
		return math.Abs(got-want) <= c.tol()
	}
	return testutil.CloseRel(got, want, c.tol())
}

// TestTunedGEMMs renders, in one emulation binary (one g++ build), the
// tuned float32 GEMM (128x128 tiles: target's BigMinBlocks lowered so
// that a small problem takes it) with float4 and scalar staging, partial
// tiles on every side; split-K GEMMs (one with a reduction of two loops,
// one with a partial last split, a convolution's weight gradient); the
// tf32 and bf16 tensor-core kernels (tf32 also with a batch and rows of
// two loops, and split-K, on a matmul and a weight gradient);
// and broken copies (a double buffer that stores the next slice into the
// stage being read, a tensor-core tile stored one column off, a split
// that drops its last slice). Every kernel runs on random inputs against
// the interpreter; every broken copy must differ. The split-K kernels
// must be bit-identical across two runs and equal, bit for bit, to a
// fixed-order float32 reference (each split summed in k order, the
// splits added in order). An end-to-end check (a g++ build and ~2 s of
// emulation).
func TestTunedGEMMs(t *testing.T) {
	testutil.EndToEnd(t)
	set := tunedGEMMs(t)
	src, srcTF32, srcBF16 := set.src, set.tf32, set.bf16
	cases := set.cases
	tuned, split, tc32 := cases[0].k, cases[3].k, cases[5].k
	splitB, splitConv := cases[4].k, cases[9].k
	for _, c := range cases {
		s := src
		switch c.prec {
		case "tf32":
			s = srcTF32
		case "bf16":
			s = srcBF16
		}
		kt := kernelText(t, s, c.k.Name)
		for _, w := range c.want {
			if !strings.Contains(kt, w) {
				t.Errorf("kernel %s lacks %q:\n%s", c.k.Name, w, kt)
			}
		}
	}
	brokenSrc := mutate(t, src, "Tuned", "[cur ^ 1]", "[cur]") +
		mutate(t, srcTF32, "TF32", "e % 16", "(e + 1) % 16") +
		mutate(t, src, "Split", "for (int p = 1; p < 8; ++p)", "for (int p = 1; p < 7; ++p)")
	all := set.all() + brokenSrc
	broken := func(k *desc.Kernel) *desc.Kernel {
		b := *k
		b.Name += "Broken"
		return &b
	}
	cases = append(cases, gemmCase{k: broken(tuned), broken: true}, gemmCase{k: broken(tc32), prec: "tf32", K: 40, broken: true},
		gemmCase{k: broken(split), broken: true})
	s, err := rtcuda.NewSession(startEmu(t, emuBuild(t, "tuned-gemms", []byte(all))), []byte(all))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		inputs, io := randomInputs(c.k, 5)
		if err := s.Run(c.k.Name, io); err != nil {
			t.Fatalf("%s: %v", c.k.Name, err)
		}
		got := io["c"].([]float64)
		want := interpret(t, c.k, inputs)(c.k.Params[2].Tensor)
		bad, maxErr := 0, 0.0
		for i := range want {
			d := math.Abs(got[i] - want[i])
			maxErr = max(maxErr, d)
			ok := c.close(got[i], want[i])
			if !ok {
				if bad < 3 && !c.broken {
					t.Errorf("%s: c[%d] = %v, the interpreter says %v", c.k.Name, i, got[i], want[i])
				}
				bad++
			}
		}
		switch {
		case c.broken && bad == 0:
			t.Errorf("%s: a broken kernel matches the interpreter", c.k.Name)
		case !c.broken && bad > 0:
			t.Errorf("%s: %d of %d cells differ", c.k.Name, bad, len(want))
		}
		if c.prec == "bf16" && maxErr <= gemmPrecision("tf32", c.K) {
			// The operands' rounding is emulated: bf16 is visibly
			// coarser than tf32 would be.
			t.Errorf("%s: largest error %g, within tf32's tolerance: is bf16 rounding emulated?", c.k.Name, maxErr)
		}
		t.Logf("%s: %d cells, largest error %.3g", c.k.Name, len(want), maxErr)
	}
	for _, sc := range []struct {
		k      *desc.Kernel
		splits int
		kc     int
	}{{split, 8, 80}, {splitB, 8, 64}, {splitConv, 0, 0}} {
		splitKDeterministic(t, s, sc.k, sc.splits, sc.kc)
	}
}

// splitKDeterministic runs a split-K kernel twice on the same inputs:
// the results must be the same bits, and (splits > 0: an "ij;jk=>ik" or
// "bij;bjk=>ik" kernel of that many splits of kc) the bits of the
// fixed-order float32 reference.
func splitKDeterministic(t *testing.T, s *rtcuda.Session, k *desc.Kernel, splits, kc int) {
	inputs, io := randomInputs(k, 6)
	var runs [2][]float64
	for i := range runs {
		io["c"] = make([]float64, len(io["c"].([]float64)))
		if err := s.Run(k.Name, io); err != nil {
			t.Fatal(err)
		}
		runs[i] = io["c"].([]float64)
	}
	var ref []float32
	if splits > 0 {
		ref = splitReference(k, inputs, splits, kc)
	}
	for i := range runs[0] {
		if math.Float64bits(runs[0][i]) != math.Float64bits(runs[1][i]) {
			t.Fatalf("%s: cell %d differs between two runs: %v, %v", k.Name, i, runs[0][i], runs[1][i])
		}
		if ref != nil && float32(runs[0][i]) != ref[i] {
			t.Fatalf("%s: cell %d = %v, the fixed-order reference %v", k.Name, i, runs[0][i], ref[i])
		}
	}
}

// splitReference computes c = a +* b of a split kernel ("ij;jk=>ik" or
// "bij;bjk=>ik", the reduction flattened b-major) the way the split-K
// GEMM orders its float32 arithmetic: per split, products summed in k
// order from zero; the splits' sums added in split order; the total
// added to the zeroed cell.
func splitReference(k *desc.Kernel, in map[int][]float64, splits, kc int) []float32 {
	a, b := in[k.Params[0].Tensor], in[k.Params[1].Tensor]
	ad, bd := k.Prog.Tensors[k.Params[0].Tensor].Dims, k.Prog.Tensors[k.Params[1].Tensor].Dims
	M, N := ad[len(ad)-2], bd[len(bd)-1]
	J := ad[len(ad)-1]
	B := 1
	if len(ad) == 3 {
		B = ad[0]
	}
	K := B * J
	out := make([]float32, M*N)
	for i := range M {
		for n := range N {
			var total float32
			for p := range splits {
				var ps float32
				for f := p * kc; f < min(K, (p+1)*kc); f++ {
					bb, j := f/J, f%J
					x := float32(a[(bb*M+i)*J+j])
					y := float32(b[(bb*J+j)*N+n])
					ps = ps + float32(x*y)
				}
				if p == 0 {
					total = ps
				} else {
					total = total + ps
				}
			}
			out[i*N+n] = 0 + total
		}
	}
	return out
}

// TestSplitKPlan: with the target's own thresholds, a contraction with a
// small output and a long reduction (a convolution weight gradient's
// shape) is split, a large one (the 4096^3 benchmark) is not, and a
// small one with a short reduction is not.
func TestSplitKPlan(t *testing.T) {
	for _, c := range []struct {
		name, adims, bdims, want, not string
	}{
		{"Wgrad", "16,8192", "8192,12", "split-K: 16 splits of 512", ""},
		{"Long", "8,100000", "100000,8", "split-K: 64 splits of 1568", ""},
		{"Short", "16,4000", "4000,12", "Tile 64x64", "split-K"},
		{"Big", "4096,4096", "4096,4096", "Tile 128x128", "split-K"},
	} {
		src := render(t, target.GPU(), contraction(t, c.name, "ij;jk=>ik", c.adims, c.bdims))
		if !strings.Contains(src, c.want) || c.not != "" && strings.Contains(src, c.not) {
			t.Errorf("%s: want %q and not %q in:\n%.2500s", c.name, c.want, c.not, src)
		}
	}
}
