package gocode

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// A 2x2 max pool of stride 2 over 16 images of 10x10x8 (the CNN demo's
// shape at half its batch), whose forward and backward nests become the
// map kernels: the -inf fill, the max accumulation, the backward's record
// of each window's winner (a min of ordinals, its scalar temporary
// inlined) and its compare-and-select;
// the zeroing of m's gradient is absorbed by the first nest adding into
// it, which then stores, and so is the zeroing of x's gradient, an
// output parameter the harness passes full of garbage.
const poolLossSrc = `
input x : 16 | 10, 10, 8
leaf win : 2, 2 = 0
let m = x @^+ "... | 2*oh<+wh, 2*ow<+ww, ..c..; wh, ww => ... | oh, ow, ..c.." win
let l = (m *. m) ++ "...|... => 0"`

// TestGeneratedMapKernels runs the max-pool forward and backward kernels
// with the assembly kernels, in the AVX-512 and AVX2 tiers (where the CPU
// has them) and
// with OCANNLGEN_CPU=purego (the Go loops), against the interpreter. The
// inputs lie on a grid, so windows hold ties (the gradient goes to the
// first winner).
func TestGeneratedMapKernels(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the assembly kernels are amd64 only")
	}
	bs := []*built{
		buildBackward(t, ecase{"PoolBackward32", "float32", poolLossSrc, []pspec{pa("x"), out(pa("l"))}}, "l", []string{"x"}),
		buildBackward(t, ecase{"PoolBackward64", "float64", poolLossSrc, []pspec{pa("x"), out(pa("l"))}}, "l", []string{"x"}),
	}
	// The same kernels with their locals in a scratch poisoned with NaN
	// (run twice): an absorbed zero fill of a scratch array is real code.
	bs = append(bs, withScratch(bs[0], "PoolBackward32S", 0), withScratch(bs[1], "PoolBackward64S", 0))
	var ks []*desc.Kernel
	for _, b := range bs {
		ks = append(ks, b.k)
	}
	set := asm.NewSet(asm.Tiers()...)
	src, err := Render(&desc.File{Package: "main", Kernels: ks}, Options{Asm: set})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	for _, b := range bs {
		fn := funcText(t, string(src), b.k.Name)
		for _, want := range []string{"(c = -Inf): AVX512, AVX2", "(c max= add(x0,0)): AVX512, AVX2",
			"(c min= where(eq(add(x0,0),x1),x2,4)): AVX512, AVX2", "(c = add(where(eq(x0,x1),x2,0),0)): AVX512, AVX2",
			"the zero fill absorbed: "} {
			if !strings.Contains(fn, want) {
				t.Errorf("%s: no kernel %q:\n%s", b.k.Name, want, fn)
			}
		}
	}
	runTiers(t, src, set, bs)
}

// asmModule writes a module holding the kernels, main and the assembly
// files, requiring this repository (the generated stubs import rt/cpu).
func asmModule(t *testing.T, src, main []byte, files map[string][]byte) string {
	t.Helper()
	all := map[string][]byte{"kernels.go": src, "main.go": main}
	for name, data := range files {
		all[name] = data
	}
	return testutil.WriteRepoModule(t, all)
}

// checkOutputs compares every output parameter with the interpreter's
// values (and fails on an all-zero expectation, which would check
// nothing).
func checkOutputs(t *testing.T, run string, bs []*built, got map[string][]float64) {
	t.Helper()
	for _, b := range bs {
		tol := tolerance(b.c.elem)
		for i, ps := range b.c.params {
			if !ps.out {
				continue
			}
			calls := []string{b.k.Name}
			if b.k.Scratch != "" {
				calls = append(calls, b.k.Name+"#2") // the second call
			}
			for _, call := range calls {
				g, want := got[call+" "+ps.name], b.want[i]
				if len(g) != len(want) {
					t.Fatalf("%s: %s %s: got %d values, want %d", run, call, ps.name, len(g), len(want))
				}
				for j := range want {
					if !testutil.CloseRel(g[j], want[j], tol) {
						t.Errorf("%s: %s %s[%d] = %v, interpreter %v", run, call, ps.name, j, g[j], want[j])
						break
					}
				}
			}
			want := b.want[i]
			if fmt.Sprint(want) == fmt.Sprint(make([]float64, len(want))) {
				t.Errorf("%s: %s %s: all zeros (the test checks nothing)", run, b.k.Name, ps.name)
			}
		}
	}
}

// TestCoversOnce: the absorption check accepts a nest visiting each cell
// once (in any order) and rejects one missing or repeating cells.
func TestCoversOnce(t *testing.T) {
	v := func(c, x int) loopir.IndexExpr {
		return loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: c, Var: x}}}
	}
	loops := []*loopir.For{{Var: 0, Extent: 4}, {Var: 1, Extent: 3}}
	cases := []struct {
		idx  []loopir.IndexExpr
		bd   []int
		want bool
	}{
		{[]loopir.IndexExpr{v(1, 0), v(1, 1)}, []int{4, 3}, true},
		{[]loopir.IndexExpr{v(1, 1), v(1, 0)}, []int{3, 4}, true}, // transposed
		{[]loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 3, Var: 0}, {Coeff: 1, Var: 1}}}}, []int{12}, true},
		{[]loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 2, Var: 0}, {Coeff: 1, Var: 1}}}}, []int{12}, false}, // overlaps
		{[]loopir.IndexExpr{v(1, 0), v(1, 1)}, []int{4, 4}, false},                                                  // misses a column
	}
	for i, c := range cases {
		if got := schedule.CoversOnce(loops, c.idx, c.bd); got != c.want {
			t.Errorf("case %d: coversOnce = %v, want %v", i, got, c.want)
		}
	}
}

// TestGeneratedMapKernelsParallel is TestGeneratedMapKernels at a batch
// of 1024 with the nests run in parts on the pool: the parts of the
// backward's first nest into m's gradient each store their cells (the
// zero fill absorbed in every part), and the Go branch fills before the
// parts; both tiers against the interpreter, twice on a scratch poisoned
// with NaN. In float64: the loss sums 200k squares, beyond float32's
// tolerance.
func TestGeneratedMapKernelsParallel(t *testing.T) {
	skipAsmModule(t)
	src := strings.Replace(poolLossSrc, "16 |", "1024 |", 1)
	b := prepareBackward(t, ecase{"PoolBackwardPar64", "float64", src, []pspec{pa("x"), out(pa("l"))}}, "l", []string{"x"})
	bs := []*built{withScratch(b, "PoolBackwardPar64S", 0)}
	set := asm.NewSet(asm.Tiers()...)
	gen, err := Render(&desc.File{Package: "main", Kernels: []*desc.Kernel{bs[0].k}}, Options{Asm: set, Parallel: true})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	whole := string(gen)
	if i := strings.Index(whole, ") Part(j"); i < 0 || !strings.Contains(whole[i:], "the zero fill absorbed: float64 pointwise kernel") {
		t.Errorf("no part of a nest absorbs a zero fill:\n%s", whole)
	}
	testutil.EndToEnd(t) // the module build and run: the checks of the code above run by default
	runTiers(t, gen, set, bs)
}

// TestAbsorbedContractionFill: the zeroing of a hidden layer's gradient
// is absorbed by the contraction that first sums into it (its kernel
// stores), serially at a batch of 512 and in parts at 2048, in both
// tiers against the interpreter, twice on a scratch poisoned with NaN
// (a kernel adding instead of storing would keep the NaN).
func TestAbsorbedContractionFill(t *testing.T) {
	skipAsmModule(t)
	const src = "input x : 512 | 64\nleaf w1 : 64 -> 32 = 0\nleaf w2 : 32 -> 8 = 0\nlet h = w1 * x\nlet y = w2 * h\nlet l = (y *. y) ++ \"...|... => 0\""
	var bs []*built
	for _, batch := range []string{"512", "2048"} {
		name := "Absorb" + batch
		b := prepareBackward(t, ecase{name, "float64", strings.Replace(src, "512", batch, 1), []pspec{pa("x"), pa("w1"), pa("w2"), out(pa("l"))}}, "l", []string{"w1"})
		bs = append(bs, withScratch(b, name+"S", 0))
	}
	set := asm.NewSet(asm.Tiers()...)
	gen, err := Render(&desc.File{Package: "main", Kernels: []*desc.Kernel{bs[0].k, bs[1].k}}, Options{Asm: set, Parallel: true})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	for _, b := range bs {
		fn := funcText(t, string(gen), b.k.Name)
		if strings.Count(fn, "h_grad = [") != 1 || !strings.Contains(fn, "if !(ocannlAVX512 || ocannlAVX2) {\n\t\tscratch.h_grad = [") && !strings.Contains(fn, "} else {\n\t\tscratch.h_grad = [") {
			t.Errorf("%s: h's gradient is not zeroed in the Go branch only:\n%s", b.k.Name, fn)
		}
	}
	testutil.EndToEnd(t) // the module build and run: the checks of the code above run by default
	runTiers(t, gen, set, bs)
}

// TestAbsorbedPaddedFill: the zeroing of a padded activation's gradient
// (a, read by a padded convolution) is absorbed by the residual's map
// that first adds into its interior (the kernel stores), and only its
// margins are zeroed in the assembly tiers; both tiers and the Go loops
// against the interpreter, twice on a scratch poisoned with NaN (an
// interior or margin left unset keeps the NaN).
func TestAbsorbedPaddedFill(t *testing.T) {
	skipAsmModule(t)
	const src = "input img : 16 | 6, 6, 4\nleaf k1 : 3, 3, 4 -> 4 = 0\nleaf k2 : 3, 3, 4 -> 4 = 0\n" +
		"let a = relu (img +* \"... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc\" k1)\n" +
		"let b = a +* \"... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc\" k2\n" +
		"let y = b + a\nlet l = (y *. y) ++ \"...|... => 0\""
	b := prepareBackward(t, ecase{"AbsorbPad", "float64", src, []pspec{pa("img"), pa("k1"), pa("k2"), out(pa("l"))}}, "l", []string{"k1", "k2"})
	bs := []*built{withScratch(b, "AbsorbPadS", 0)}
	set := asm.NewSet(asm.Tiers()...)
	gen, err := Render(&desc.File{Package: "main", Kernels: []*desc.Kernel{bs[0].k}}, Options{Asm: set, Parallel: true})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	fn := funcText(t, string(gen), bs[0].k.Name)
	if strings.Count(fn, "scratch.a_grad = [") != 1 || !strings.Contains(fn, "} else {\n\t\tscratch.a_grad = [") && !strings.Contains(fn, "if !(ocannlAVX512 || ocannlAVX2) {\n\t\tscratch.a_grad = [") {
		t.Errorf("a's gradient is not zeroed whole in the Go branch only:\n%s", fn)
	}
	if !strings.Contains(string(gen), "the zero fill absorbed") {
		t.Errorf("no nest absorbs a zero fill:\n%s", fn)
	}
	testutil.EndToEnd(t) // the module build and run: the checks of the code above run by default
	runTiers(t, gen, set, bs)
}

// runTiers builds the rendered kernels gen with set's assembly files,
// calls each (twice on a scratch poisoned with NaN when it has one), and
// checks the outputs against the interpreter (run here on a case
// prepared without it), and the tier flag, in the assembly tier and with
// OCANNLGEN_CPU=purego.
func runTiers(t *testing.T, gen []byte, set *asm.Set, bs []*built) {
	t.Helper()
	for _, b := range bs {
		if b.want == nil {
			b.interpret(t)
		}
	}
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	var h strings.Builder
	h.WriteString(harnessHead)
	h.WriteString(scratchPoison)
	h.WriteString("func main() {\n\tfmt.Println(\"!avx2\", ocannlAVX2)\n")
	for _, b := range bs {
		if b.k.Scratch != "" {
			harnessCallScratch(&h, b, true)
		} else {
			harnessCall(&h, b)
		}
	}
	h.WriteString("}\n")
	dir := asmModule(t, gen, []byte(h.String()), files)
	// "" runs the best tier this CPU has (AVX512 on an AVX-512 machine),
	// avx2 the AVX2 kernels, purego the Go loops.
	for _, tier := range []string{"", "avx2", "purego"} {
		out, err := testutil.GoCmd(t, dir, append(goEnv, "GOFLAGS=-mod=mod", "OCANNLGEN_CPU="+tier), "run", ".")
		if err != nil {
			t.Fatalf("go run (OCANNLGEN_CPU=%q): %v\n%s", tier, err, head(out, 4000))
		}
		got, other := parseOutputs(t, out)
		wantAVX2 := fmt.Sprint(tier != "purego" && cpu.Supported("AVX", "FMA3"))
		if other["!avx2"] != wantAVX2 {
			t.Errorf("OCANNLGEN_CPU=%q: ocannlAVX2 is %s, want %s", tier, other["!avx2"], wantAVX2)
		}
		checkOutputs(t, "OCANNLGEN_CPU="+tier, bs, got)
	}
}

// TestChainedNests: consecutive nests split into the same parts of the
// batch run as one job (rt.Region.RunSeq), and a nest that reads what an
// earlier nest's partial sums combine into (the batch mean m, then x - m)
// is not chained to it: the forward kernel and the backward of a small
// network at batch 2048, in both tiers against the interpreter (a wrong
// chain reads m before it is combined, or rows another part has not
// written yet).
func TestChainedNests(t *testing.T) {
	skipAsmModule(t)
	const src = "input x : 2048 | 64\nleaf w1 : 64 -> 32 = 0\nleaf b1 : 32 = 0\nleaf w2 : 32 -> 8 = 0\n" +
		"let m = x ++ \"b|i => i\"\nlet z = x - m\nlet h = relu (w1 * z + b1)\nlet y = w2 * h\nlet l = (y *. y) ++ \"...|... => 0\""
	params := []pspec{pa("x"), pa("w1"), pa("b1"), pa("w2"), out(pa("l"))}
	fwd, bwd, set, gen := renderFwdBwd(t, "Chain", src, params, []string{"w1", "b1", "w2"}, false)
	// The forward pass's maps are below the size rule: they join the
	// chain of the contractions around them (joinSplit), four nests in one
	// job (z, w1 * z, the relu with its bias, w2 * h; the loss's square
	// fuses into its sum, loopir.FusePointwise). The backward pass has
	// nests whose Go loops need their output filled first: the fill runs
	// before the chain's job.
	fwdLongest, _ := seqJobs(funcText(t, string(gen), fwd.k.Name))
	if fwdLongest < 4 {
		t.Errorf("%s: the longest chain has %d nests, want 4 (the small maps join it):\n%s", fwd.k.Name, fwdLongest, funcText(t, string(gen), fwd.k.Name))
	}
	if _, preFilled := seqJobs(funcText(t, string(gen), bwd.k.Name)); !preFilled {
		t.Errorf("%s: no chain holds a nest with a pre-fill", bwd.k.Name)
	}
	testutil.EndToEnd(t) // the module build and run: the checks of the code above run by default
	runTiers(t, gen, set, []*built{fwd, bwd})
}

// seqJobs reads a generated function's RunSeq jobs: the most nests one
// chains, and whether the code between a chain's first record and its
// RunSeq call holds a tier-conditional fill (a pre-fill moved before the
// job).
func seqJobs(fn string) (longest int, preFilled bool) {
	seg := ""
	for _, line := range strings.Split(fn, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "region.RunSeq("):
			longest = max(longest, strings.Count(line, ","))
			preFilled = preFilled || strings.Contains(seg, "if !(")
			seg = ""
		case strings.HasPrefix(line, "region.Run("), strings.Contains(line, "Records.Put("):
			seg = ""
		default:
			seg += line + "\n"
		}
	}
	return longest, preFilled
}

// TestParallelMarginReset: in a model's kernels (a pool parameter, one
// region per call), the margins of a padded batch of images (a relu's
// output read by a same-padded convolution, and its gradient) are reset
// in parts of the batch, chained with the nests around them, and the
// operations without a parallel nest that touch nothing the chain
// touches move before its job; both tiers against the interpreter,
// twice on a poisoned scratch (a part resetting too little would leave
// garbage in a margin).
func TestParallelMarginReset(t *testing.T) {
	skipAsmModule(t)
	const src = "input x : 256 | 8, 8, 8\ninput k : 3, 3, 8 -> 4\nlet h = relu x\n" +
		"let y = h +* \"... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc..\" k\n" +
		"let l = (y *. y) ++ \"...|... => 0\""
	params := []pspec{pa("x"), pa("k"), out(pa("l"))}
	fwd, bwd, set, gen := renderFwdBwd(t, "Reset", src, params, []string{"k"}, true)
	for _, b := range []*built{fwd, bwd} {
		fn := funcText(t, string(gen), b.k.Name)
		if !strings.Contains(string(gen), "// "+b.k.Name+"Part") || !strings.Contains(string(gen), "rows of h, their margins") {
			t.Errorf("%s: no margin reset in parts", b.k.Name)
		}
		// The backward pass's reset chains with the nests around it. (The
		// forward's only chain was the loss's square and its sum, one
		// nest since the square fuses into the sum.)
		if longest, _ := seqJobs(fn); b == bwd && longest < 2 {
			t.Errorf("%s: the margin reset chains with no nest:\n%s", b.k.Name, fn)
		}
	}
	testutil.EndToEnd(t) // the module build and run: the checks of the code above run by default
	runTiers(t, gen, set, []*built{fwd, bwd})
}

// renderFwdBwd prepares (runTiers interprets) the float64 forward kernel
// <name>FwdS of src and the backward <name>BwdS of its loss l into the
// parameters grads, both with every local in a scratch (and a pool
// parameter when pool, as a model's), and renders them with the assembly
// kernels and parallel nests.
func renderFwdBwd(t *testing.T, name, src string, params []pspec, grads []string, pool bool) (fwd, bwd *built, set *asm.Set, gen []byte) {
	t.Helper()
	fwd = withScratch(prepare(t, ecase{name + "Fwd", "float64", src, params}), name+"FwdS", 0)
	bwd = withScratch(prepareBackward(t, ecase{name + "Bwd", "float64", src, params}, "l", grads), name+"BwdS", 0)
	fwd.k.PoolParam, bwd.k.PoolParam = pool, pool
	set = asm.NewSet(asm.Tiers()...)
	gen, err := Render(&desc.File{Package: "main", Kernels: []*desc.Kernel{fwd.k, bwd.k}}, Options{Asm: set, Parallel: true})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return fwd, bwd, set, gen
}

// skipAsmModule skips a test that builds and runs a module with the
// assembly kernels: off amd64, and in -short mode (slow). Such a test
// checks the rendered code, then (testutil.EndToEnd) builds and runs it
// only with OCANNLGEN_E2E=1 (bash .ci/run): building and running the
// module in both tiers takes each of them 5 to 30 s on two cores.
func skipAsmModule(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the assembly kernels are amd64 only")
	}
	if testing.Short() {
		t.Skip("builds a module (slow)")
	}
}
