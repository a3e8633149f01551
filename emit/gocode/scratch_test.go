package gocode

import (
	"fmt"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// Kernels with a scratch: the large locals live in the fields of a
// struct the caller keeps between calls, which the kernel must not
// assume zero. The harness fills each scratch with garbage (a scratch
// the kernel owns, Kernel.ScratchOwned, starts zeroed instead), runs the
// kernel, restores the parameters' initial contents and runs it again
// on the same scratch: both calls must match the interpreter, and the
// second must repeat the first exactly.

// scratchPoison fills a scratch struct (arrays of T only) with nonzero
// garbage of both signs, so that a missing zeroing, fill or margin reset
// changes a sum, a product, a max or a min.
const scratchPoison = `
func poison[T float32 | float64, S any](s *S) {
	n := int(unsafe.Sizeof(*s) / unsafe.Sizeof(T(0)))
	if n == 0 {
		return
	}
	vs := unsafe.Slice((*T)(unsafe.Pointer(s)), n)
	for i := range vs {
		vs[i] = T(12345.5 - 24691*float64(i%2))
	}
}
`

// harnessCallScratch writes the block of main that runs b's kernel twice
// on one poisoned scratch (when it takes one), printing the outputs of
// the first call as "<kernel> <param>" and of the second as
// "<kernel>#2 <param>".
func harnessCallScratch(w *strings.Builder, b *built, takes bool) {
	fmt.Fprintf(w, "\t{\n")
	if takes {
		fmt.Fprintf(w, "\t\tvar sc %s\n", b.k.Scratch)
		if !b.k.ScratchOwned {
			fmt.Fprintf(w, "\t\tpoison[%s](&sc)\n", b.c.elem)
		}
	}
	var args []string
	for i := range b.c.params {
		v := "d" + strconv.Itoa(i)
		writeData(w, v, b.c.elem, b.data[i])
		fmt.Fprintf(w, "\t\tc%d := append([]%s(nil), %s...)\n", i, b.c.elem, v)
		args = append(args, b.arg(i, v))
	}
	if b.k.PoolParam {
		args = append(args, "nil") // the default pool (the kernel must have a parallel nest)
	}
	if takes {
		args = append(args, "&sc")
	}
	for call := 1; call <= 2; call++ {
		suffix := ""
		if call == 2 {
			suffix = "#2"
			for i := range b.c.params {
				fmt.Fprintf(w, "\t\tcopy(d%d, c%d)\n", i, i)
			}
		}
		fmt.Fprintf(w, "\t\t%s(%s)\n", b.k.Name, strings.Join(args, ", "))
		for i, ps := range b.c.params {
			if ps.out {
				fmt.Fprintf(w, "\t\temit(%q, %q, d%d)\n", b.k.Name+suffix, ps.name, i)
			}
		}
	}
	fmt.Fprintf(w, "\t}\n")
}

// withScratch returns a copy of b whose kernel, renamed to name, keeps
// its locals of more than over bytes in a scratch.
func withScratch(b *built, name string, over int) *built {
	c := *b
	k := *b.k
	k.Name, k.Scratch, k.ScratchOver = name, name+"Scratch", over
	c.k = &k
	return &c
}

// localArray matches the declaration of a local array.
var localArray = regexp.MustCompile(`\tvar \w+ \[`)

func sameBits(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// scratchRun is the cases whose scratch variants TestGeneratedScratch
// builds and runs without the end-to-end checks (OCANNLGEN_E2E=1 runs
// every case): margins reset in a scratch (padded parameters, results
// and copies), accumulators of every kind into one, locals that start at
// zero, a network with locals on the stack and in the scratch, and the
// padded backward kernels.
var scratchRun = map[string]bool{
	"ConvPadded2D": true, "MaxPool": true, "PadParamShared": true, "PadParam2DS": true,
	"PadOutInPlace64S": true, "Accums32": true, "Accums64": true, "LocalsStartZero": true,
	"Intermediate": true, "MLP": true, "PadBackward32": true, "PadBackward64S": true,
}

// TestGeneratedScratch runs every end-to-end case and the padded
// backward kernels with all their locals in a scratch (ScratchOver 0),
// and again with only the locals of more than 256 bytes there (the others
// on the stack), against the interpreter. Without OCANNLGEN_E2E=1 it
// checks the rendered code of every case but builds (rendered alone) and
// runs only the cases of scratchRun.
func TestGeneratedScratch(t *testing.T) {
	var base []*built
	for _, c := range e2eCases(t) {
		base = append(base, build(t, c))
	}
	base = append(base,
		buildBackward(t, ecase{"PadBackward32", "float32", padParamLossSrc, []pspec{pa("x"), pa("k2"), out(pa("l"))}}, "l", []string{"k2", "x"}),
		buildBackward(t, ecase{"PadBackward64S", "float64", padParamLossSrc, []pspec{sl("x"), sl("k2"), out(sl("l"))}}, "l", []string{"k2", "x"}))
	n := 0
	for _, b := range base {
		if scratchRun[b.c.kernel] {
			n++
		}
	}
	if n != len(scratchRun) {
		t.Fatalf("%d of the %d cases of scratchRun exist", n, len(scratchRun))
	}
	var bs []*built
	f := &desc.File{Package: "main"}
	for _, b := range base {
		for _, v := range []struct {
			suffix string
			min    int
			owned  bool
		}{{"All", 0, false}, {"Mixed", 256, false}, {"Owned", 0, true}} {
			s := withScratch(b, b.c.kernel+v.suffix, v.min)
			s.k.ScratchOwned = v.owned
			bs = append(bs, s)
			f.Kernels = append(f.Kernels, s.k)
		}
	}
	src, err := Render(f, Options{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	text := string(src)
	// Spot checks of the shape of the code.
	fn := funcText(t, text, "PadParamSharedAll")
	if !strings.Contains(fn, "func PadParamSharedAll(x *[6]float32, u *[3]float32, c *[6]float32, p *[6]float32, c2 []float32, scratch *PadParamSharedAllScratch) {") ||
		!strings.Contains(fn, "copy(scratch.xPad[1:7], x[:])\n") || strings.Contains(fn, "var xPad") ||
		!strings.Contains(text, "type PadParamSharedAllScratch struct {\n\txPad [9]float32\n") {
		t.Errorf("PadParamSharedAll: no padded copy in the scratch:\n%s", fn)
	}
	// The margins of a scratch local are unknown at entry: reset before
	// each read (0 for c, -inf for p, 0 again for c2).
	if n := strings.Count(fn, "scratch.xPad[0] = "); n != 3 {
		t.Errorf("PadParamSharedAll: %d margin resets, want 3:\n%s", n, fn)
	}
	// A scratch the kernel owns keeps the margins no statement writes at
	// +0: no reset (the padded copy's, on every call otherwise).
	if fn := funcText(t, text, "ConvPadded2DOwned"); strings.Contains(fn, "scratch.img[0][j] = 0") ||
		!strings.Contains(funcText(t, text, "ConvPadded2DAll"), "scratch.img[0][j] = 0") {
		t.Errorf("ConvPadded2DOwned: margin resets, or ConvPadded2DAll none:\n%s", fn)
	}
	// The backward program's scalar temporary _scratch is inlined into
	// the comparison that reads it: no local scratch2.
	fn = funcText(t, text, "PadBackward32All")
	if !strings.Contains(fn, "scratch.gxPad = [2][9][8][2]float32{}") || strings.Contains(fn, "scratch2") {
		t.Errorf("PadBackward32All: the padded gradient (accumulated into) is not zeroed:\n%s", fn)
	}
	if fn = funcText(t, text, "MLPMixed"); !strings.Contains(fn, "var ") || !strings.Contains(fn, "= &scratch.") {
		t.Errorf("MLPMixed: want locals both on the stack and in the scratch:\n%s", fn)
	}
	var h strings.Builder
	h.WriteString(harnessHead)
	h.WriteString(scratchPoison)
	h.WriteString("\nfunc main() {\n")
	takes := 0
	for _, b := range bs {
		// A kernel without locals of more than ScratchOver bytes takes no
		// scratch.
		hasType := strings.Contains(text, "\ntype "+b.k.Scratch+" struct {")
		if want := regexp.MustCompile(`, scratch \*` + b.k.Scratch + `\) \{`).MatchString(funcText(t, text, b.k.Name)); hasType != want {
			t.Errorf("%s: scratch type declared %v, scratch parameter %v", b.k.Name, hasType, want)
		}
		if hasType {
			takes++
		}
		if fn := funcText(t, text, b.k.Name); b.k.ScratchOver == 0 && len(localArray.FindAllString(fn, -1)) != strings.Count(fn, "\tvar buf [20]byte") {
			t.Errorf("%s: a local is not in the scratch:\n%s", b.k.Name, fn)
		}
		if testutil.IsEndToEnd() || scratchRun[b.c.kernel] {
			harnessCallScratch(&h, b, hasType)
		}
	}
	if takes < len(bs)/3 {
		t.Errorf("only %d of %d kernels take a scratch", takes, len(bs))
	}
	h.WriteString("}\n")
	mod := src
	if !testutil.IsEndToEnd() {
		// The module holds only the kernels main calls: compiling all
		// of them takes the go command seconds.
		sub := &desc.File{Package: "main"}
		for _, b := range bs {
			if scratchRun[b.c.kernel] {
				sub.Kernels = append(sub.Kernels, b.k)
			}
		}
		if mod, err = Render(sub, Options{}); err != nil {
			t.Fatalf("Render: %v", err)
		}
	}
	got := runVetModule(t, mod, h.String())
	for _, b := range bs {
		if !testutil.IsEndToEnd() && !scratchRun[b.c.kernel] {
			continue
		}
		t.Run(b.k.Name, func(t *testing.T) {
			tol := tolerance(b.c.elem)
			for i, ps := range b.c.params {
				if !ps.out {
					continue
				}
				g, ok := got[b.k.Name+" "+ps.name]
				g2 := got[b.k.Name+"#2 "+ps.name]
				want := b.want[i]
				if !ok || len(g) != len(want) || len(g2) != len(want) {
					t.Fatalf("%s: got %d and %d values, want %d", ps.name, len(g), len(g2), len(want))
				}
				for j := range want {
					if !testutil.CloseRel(g[j], want[j], tol) {
						t.Errorf("%s[%d] = %v, interpreter %v\ngenerated: %v\ninterpreter: %v", ps.name, j, g[j], want[j], g, want)
						break
					}
				}
				for j := range want {
					if !sameBits(g2[j], g[j]) {
						t.Errorf("second call: %s[%d] = %v, first call %v\nsecond: %v\nfirst: %v", ps.name, j, g2[j], g[j], g2, g)
						break
					}
				}
			}
		})
	}
}

// A local of 256 KiB (relu x), and a padded copy of an input of 128 KiB
// (139 KiB with its margins): Go moves such locals to the heap.
// The intermediate is read twice, so it is not fused into its reader
// (loopir.FusePointwise).
const bigLocalSrc = `
input x : 16384, 4
let t = relu x
let y = relu (t *. t)`

const bigPadSrc = `
input img : 64, 64, 8
input k2 : 3, 3, 8 -> 8
let c2 = img +* "oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => oh, ow, ..oc.." k2`

const bigMain = `package main

import (
	"fmt"
	"testing"
)

var (
	x, y, y2      [16384][4]float32
	img           [64][64][8]float32
	k2            [8][3][3][8]float32
	c2, c2b       [64][64][8]float32
	scL           BigLocalScratch
	scP           BigPadScratch
)

func main() {
	for i := range x {
		for j := range x[i] {
			x[i][j] = float32((i*7+j*3)%11) - 5
		}
	}
	for i := range img {
		for j := range img[i] {
			for c := range img[i][j] {
				img[i][j][c] = float32((i*5+j*3+c)%13)/13 - 0.5
			}
		}
	}
	for o := range k2 {
		for i := range k2[o] {
			for j := range k2[o][i] {
				for c := range k2[o][i][j] {
					k2[o][i][j][c] = float32((o*3+i*5+j*7+c)%9)/9 - 0.4
				}
			}
		}
	}
	fmt.Println("!allocsLocalStack", testing.AllocsPerRun(5, func() { BigLocalStack(&x, &y) }))
	fmt.Println("!allocsLocal", testing.AllocsPerRun(5, func() { BigLocal(&x, &y2, &scL) }))
	fmt.Println("!allocsPadStack", testing.AllocsPerRun(2, func() { BigPadStack(&img, &k2, &c2) }))
	fmt.Println("!allocsPad", testing.AllocsPerRun(2, func() { BigPad(&img, &k2, &c2b, &scP) }))
	fmt.Println("!sameLocal", y == y2 && y[1][1] != 0)
	fmt.Println("!samePad", c2 == c2b && c2[1][1][1] != 0)
}
`

// TestScratchAllocs checks that kernels whose locals exceed Go's limit
// for a stack variable allocate nothing with a scratch (at the default
// ScratchOver), and compute what the same kernels without one compute;
// a kernel with only small locals takes no scratch.
func TestScratchAllocs(t *testing.T) {
	kernel := func(name, src string, scratch bool, params ...pspec) *desc.Kernel {
		g, p := compileProgram(t, src, nil)
		k := &desc.Kernel{Name: name, Elem: "float32", Prog: p}
		if scratch {
			k.Scratch, k.ScratchOver = name+"Scratch", target.Generic().Loops.ScratchOver
		}
		for _, ps := range params {
			k.Params = append(k.Params, desc.Param{Name: ps.name, Kind: ps.kind, Tensor: testutil.Named(t, g, ps.name), Output: ps.out})
		}
		return k
	}
	src, err := Render(&desc.File{Package: "main", Kernels: []*desc.Kernel{
		kernel("BigLocalStack", bigLocalSrc, false, pa("x"), out(pa("y"))),
		kernel("BigLocal", bigLocalSrc, true, pa("x"), out(pa("y"))),
		kernel("BigPadStack", bigPadSrc, false, pa("img"), pa("k2"), out(pa("c2"))),
		kernel("BigPad", bigPadSrc, true, pa("img"), pa("k2"), out(pa("c2"))),
		kernel("SmallLocals", `
input a : 3,4
input b : 3,4
let t = a *. b
let r = relu (t + t)`, true, pa("a"), pa("b"), out(pa("r"))),
	}}, Options{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	text := string(src)
	if fn := funcText(t, text, "BigLocal"); !strings.Contains(fn, "scratch.t[") || strings.Contains(fn, "var ") {
		t.Errorf("BigLocal: the intermediate is not in the scratch:\n%s", fn)
	}
	if fn := funcText(t, text, "BigPad"); !strings.Contains(fn, "copy(scratch.imgPad[") || strings.Contains(fn, "var ") {
		t.Errorf("BigPad: the padded copy is not in the scratch:\n%s", fn)
	}
	// A kernel whose locals all fit on the stack takes no scratch.
	if fn := funcText(t, text, "SmallLocals"); !strings.Contains(fn, "func SmallLocals(a *[3][4]float32, b *[3][4]float32, r *[3][4]float32) {") ||
		!strings.Contains(fn, "var ") || strings.Contains(text, "SmallLocalsScratch") {
		t.Errorf("SmallLocals: want no scratch:\n%s", fn)
	}
	dir := testutil.WriteModule(t, map[string][]byte{"kernels.go": src, "main.go": []byte(bigMain)})
	runOut, err := testutil.GoCmd(t, dir, goEnv, "run", ".")
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, head(runOut, 4000))
	}
	_, other := parseOutputs(t, runOut)
	for _, k := range []string{"!allocsLocal", "!allocsPad"} {
		if other[k] != "0" {
			t.Errorf("%s: %q allocs/op, want 0\n%s", k, other[k], runOut)
		}
	}
	// Without a scratch the same kernels allocate (1 allocs/op each with
	// Go 1.26); only logged, as it depends on the compiler.
	t.Logf("without a scratch: %s and %s allocs/op", other["!allocsLocalStack"], other["!allocsPadStack"])
	for _, k := range []string{"!sameLocal", "!samePad"} {
		if other[k] != "true" {
			t.Errorf("%s: the kernels with and without a scratch differ\n%s", k, runOut)
		}
	}
}
