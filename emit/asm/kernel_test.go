package asm

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// kernelCases cover both kinds and element types: exact tiles, every
// tail (m, n, k), several k blocks, transposed operands, a C with gaps
// between rows, no m axis, and overwriting kernels.
func kernelCases() []Spec {
	var out []Spec
	for _, elem := range []string{"float32", "float64"} {
		bc := func(m, n, k, cm, am, ak, bk int, ow bool) {
			out = append(out, Spec{Elem: elem, Kind: Broadcast, M: m, N: n, K: k, CM: cm, CN: 1, AM: am, AK: ak, BK: bk, BN: 1, Overwrite: ow})
		}
		bc(7, 19, 13, 19, 13, 1, 19, false)        // row-major, tails everywhere
		bc(12, 32, 16, 32, 16, 1, 32, false)       // exact tiles
		bc(13, 37, 600, 40, 600, 1, 37, false)     // k blocks, C rows with gaps
		bc(9, 21, 30, 21, 1, 9, 21, false)         // A transposed
		bc(1, 50, 40, 0, 0, 1, 50, false)          // no m axis
		bc(6, 5, 9, 5, 9, 1, 5, true)              // overwrite, n < lanes
		bc(20, 24, 1100, 24, 1100, 1, 24, true)    // overwrite with k blocks
		bc(45, 37, 300, 40, 1, 45, 37, false)      // B packed (both tiers), n tail, A transposed
		bc(50, 48, 70, 48, 70, 1, 48, true)        // B packed, exact n slivers
		bc(101, 70, 300, 70, 300, 1, 70, false)    // the wide AVX-512 tile: m, n and k tails, k blocks, B packed
		bc(96, 128, 64, 128, 64, 1, 128, true)     // the wide AVX-512 tile, exact, overwrite
		bc(16, 96, 40, 100, 1, 16, 96, false)      // the AVX-512 8x3 tile: two slivers, A transposed
		bc(50, 48, 64, 48, 64, 1, 48, true)        // the 8x3 tile with B packed, a row tail, overwrite
		bc(101, 192, 300, 200, 300, 1, 200, false) // AVX-512: B streamed (three slivers, k blocks, m tail, C rows with gaps)
		bc(50, 128, 130, 128, 1, 50, 136, true)    // AVX-512: B streamed, A transposed, overwrite
		// Folded reduction axes (K2, K3: the loops around a call of a
		// convolution's kernel gradient): the ResNet's first-stage shape
		// (m and n tails, rows of B overlapping along k2, k3 around the
		// tiles), k2 only with overwrite, the wide tile with a long k
		// (one block, no packing where the unfolded kernel would pack),
		// a k of one step, k3 inside the tiles (overwrite).
		fold := func(sp Spec) {
			sp.Elem, sp.Kind, sp.CN, sp.BN = elem, Broadcast, 1, 1
			if !sp.folds() {
				panic(fmt.Sprintf("folded case does not fold: %+v", sp))
			}
			out = append(out, sp)
		}
		fold(Spec{M: 16, N: 48, K: 8, CM: 50, AM: 1, AK: 40, BK: 60, K2: 5, AK2: 16, BK2: 16, K3: 3, AK3: 330, BK3: 500})
		fold(Spec{M: 7, N: 19, K: 13, CM: 19, AM: 13, AK: 1, BK: 19, K2: 4, AK2: 100, BK2: 250, Overwrite: true})
		fold(Spec{M: 101, N: 70, K: 300, CM: 70, AM: 1, AK: 101, BK: 70, K2: 2, AK2: 30300, BK2: 21000})
		fold(Spec{M: 3, N: 9, K: 1, CM: 9, AM: 1, AK: 3, BK: 9, K2: 6, AK2: 3, BK2: 9, K3: 2, AK3: 18, BK3: 54})
		fold(Spec{M: 5, N: 20, K: 3, CM: 20, AM: 3, AK: 1, BK: 20, K2: 2, AK2: 15, BK2: 60, K3: 3, AK3: 40, BK3: 130, Overwrite: true}) // k3 inside the tiles
		dot := func(m, n, k, cm, cn, am, bn int, ow bool) {
			out = append(out, Spec{Elem: elem, Kind: Dot, M: m, N: n, K: k, CM: cm, CN: cn, AM: am, AK: 1, BK: 1, BN: bn, Overwrite: ow})
		}
		dot(5, 7, 21, 7, 1, 21, 21, false)                                                                                                      // tails everywhere
		dot(6, 6, 16, 6, 1, 16, 16, false)                                                                                                      // exact
		dot(4, 5, 3, 1, 4, 3, 3, false)                                                                                                         // k below a vector, C transposed
		dot(1, 10, 40, 0, 1, 0, 45, false)                                                                                                      // no m axis, B rows with gaps
		dot(8, 1, 33, 1, 0, 40, 0, true)                                                                                                        // no n axis, overwrite
		dot(7, 9, 100, 9, 1, 100, 100, true)                                                                                                    // overwrite
		dot(9, 8, 40, 70, 1, 45, 41, false)                                                                                                     // full 4x4 tiles with C rows apart
		out = append(out, Spec{Elem: elem, Kind: Dot, M: 9, N: 8, K: 20, K2: 3, AK2: 31, BK2: 400, CM: 8, CN: 1, AM: 50, AK: 1, BK: 1, BN: 21}) // a second reduction axis
		out = append(out, Spec{Elem: elem, Kind: Dot, M: 10, N: 8, K: 3, K2: 3, AK2: 12, BK2: 3, CM: 8, CN: 1, AM: 1, AK: 1, BK: 1, BN: 9})     // a one-channel 3x3 convolution row
		out = append(out, Spec{Elem: elem, Kind: Dot, M: 5, N: 6, K: 16, K2: 2, AK2: 100, BK2: 16, CM: 6, CN: 1, AM: 16, AK: 1, BK: 1, BN: 40, Overwrite: true})
		dot(8, 12, 33, 12, 1, 33, 33, true) // full 4x4 tiles, overwrite
		// k blocks (AVX-512: DotKCBytes): 1000 = 512 + 488, the second
		// block with a k tail; full and partial tiles; adding and
		// overwriting (the first block stores, the second adds).
		dot(9, 10, 1000, 10, 1, 1003, 1001, false)
		dot(8, 8, 1000, 8, 1, 1000, 1000, true)
		dot(5, 7, 1600, 1, 5, 1600, 1600, true) // three blocks, C transposed
		// The transposed-B broadcast form (AVX-512 float32; the other
		// tiers run them as dot kernels): the 14x2 tile (M < 96) with an
		// m tail, a one-vector sliver and k blocks of 208 and 192 (B and
		// C rows with gaps); the 8x3 tile (N = 48) with an m tail and k
		// blocks, overwriting; the 6x4 tile with an m tail and k blocks
		// of 80; the 8x3 tile below 96 rows (tileSteps).
		dot(70, 80, 400, 90, 1, 410, 403, false)
		dot(101, 48, 512, 48, 1, 512, 520, true)
		dot(100, 64, 160, 64, 1, 160, 170, false)
		dot(64, 48, 64, 50, 1, 64, 64, false)
		// The gathered broadcast form (AVX2; the AVX-512 tier runs the
		// same specs as dot kernels): one-channel 3x3 convolutions over
		// an image row and over a batch, a second m tile with a row tail,
		// partial vectors, no k2 axis, the k2 loop (K*K2 > gatherUnroll),
		// two vectors (float64 N=8, float32 N=13 and 16).
		ga := func(m, n, k, k2, cm, am, bn, ak2, bk2 int, ow bool) {
			sp := Spec{Elem: elem, Kind: Dot, M: m, N: n, K: k, K2: k2, CM: cm, CN: 1, AM: am, AK: 1, BK: 1, BN: bn, AK2: ak2, BK2: bk2, Overwrite: ow, Gather: true}
			if !AVX2().gatherFits(&sp) {
				panic(fmt.Sprintf("gathered case does not fit: %+v", sp))
			}
			out = append(out, sp)
		}
		ga(10, 8, 3, 3, 8, 1, 9, 12, 3, true)       // a conv row, overwrite
		ga(10, 8, 3, 3, 8, 1, 9, 12, 3, false)      // a conv row, accumulate
		ga(29, 8, 3, 3, 80, 144, 9, 12, 3, true)    // over a batch, C rows apart
		ga(17, 5, 6, 2, 7, 20, 13, 9, 6, false)     // partial vector, accumulate
		ga(14, 7, 9, 1, 7, 9, 9, 0, 0, true)        // no k2 axis, a full tile and one row
		ga(20, 8, 24, 3, 8, 100, 72, 30, 24, false) // k2 loop
		ga(3, 3, 5, 2, 4, 11, 10, 5, 5, true)       // a single short tile
		if elem == "float32" {
			ga(15, 13, 12, 3, 16, 40, 36, 13, 12, true)  // two vectors, partial
			ga(9, 16, 24, 3, 16, 100, 72, 30, 24, false) // two vectors, k2 loop
		}
		// The m-vector kind (AVX2 only): a one-channel 3x3 kernel
		// gradient (m the output channels, 3x3 columns, the reduction
		// over batch, rows and columns of the output), a partial vector,
		// two vectors, one column axis and one reduction axis, a k tail
		// past the accumulator sets.
		mv := func(sp Spec) {
			sp.Elem, sp.Kind, sp.AM = elem, MVec, 1
			sp.N2, sp.K2, sp.K3 = max(1, sp.N2), max(1, sp.K2), max(1, sp.K3)
			if !AVX2().mvecFits(&sp) {
				panic(fmt.Sprintf("m-vector case does not fit: %+v", sp))
			}
			out = append(out, sp)
		}
		wide := 1 // float64 halves m to keep the accumulators in the registers
		if elem == "float32" {
			wide = 2
		}
		mv(Spec{M: 4 * wide, CM: 9, N: 3, CN: 3, BN: 12, N2: 3, CN2: 1, BN2: 1, K: 10, AK: 8, BK: 1, K2: 10, AK2: 80, BK2: 12, K3: 4, AK3: 800, BK3: 144})
		mv(Spec{M: 2 + wide, CM: 9, N: 3, CN: 3, BN: 12, N2: 3, CN2: 1, BN2: 1, K: 10, AK: 8, BK: 1, K2: 10, AK2: 80, BK2: 12, K3: 2, AK3: 800, BK3: 144, Overwrite: true})
		mv(Spec{M: 4*wide + 3, CM: 1, N: 4, CN: 11, BN: 3, K: 37, AK: 13, BK: 20})
		mv(Spec{M: 3, CM: 2, N: 2, CN: 1, BN: 5, N2: 2, CN2: 7, BN2: 1, K: 9, AK: 3, BK: 11, K2: 4, AK2: 40, BK2: 100, Overwrite: true})
	}
	return out
}

// TestKernelsAgainstLoops builds every case's kernel into a throwaway
// module and compares it, on random data, with plain Go loops over the
// same strides. Guard cells around and between the touched cells of C
// catch stray writes. The kernels run only where the CPU has AVX2+FMA.
func TestKernelsAgainstLoops(t *testing.T) {
	if runtime.GOARCH != "amd64" || !cpu.Supported("AVX", "FMA3") {
		t.Skip("needs amd64 with AVX2 and FMA")
	}
	if testing.Short() {
		t.Skip("builds a module (slow)")
	}
	set := NewSet(Tiers()...)
	cases := kernelCases()
	for _, sp := range cases {
		set.Add(sp)
	}
	maps := mapCases()
	for _, m := range maps {
		set.AddMap(m)
	}
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"os\"\n)\n\nfunc main() {\n\tbad, ran := 0, 0\n")
	for _, tier := range set.Tiers() {
		fmt.Fprintf(&b, "\tif %s {\n\t\tran++\n", tier.Flag())
		for i := range cases {
			if cases[i].EmitsIn(tier) {
				fmt.Fprintf(&b, "\t\tbad += case%d%s()\n", i, tier.Tier)
			}
		}
		for i := range maps {
			if maps[i].EmitsIn(tier) {
				fmt.Fprintf(&b, "\t\tbad += mcase%d%s()\n", i, tier.Tier)
			}
		}
		fmt.Fprintf(&b, "\t\tfmt.Println(\"tier %s checked\")\n\t}\n", tier.Tier)
	}
	b.WriteString("\tif bad > 0 || ran == 0 {\n\t\tos.Exit(1)\n\t}\n\tfmt.Println(\"ok\")\n}\n")
	for _, tier := range set.Tiers() {
		for i, sp := range cases {
			if sp.EmitsIn(tier) {
				writeCase(&b, i, tier.Tier, &sp, set.Name(set.Add(sp), tier))
			}
		}
		for i, m := range maps {
			if m.EmitsIn(tier) {
				writeMapCase(&b, i, tier.Tier, &m, set.MapName(set.AddMap(m), tier))
			}
		}
	}
	b.WriteString(mapHelpers)
	out, err := runKernelModule(t, files, b.Bytes())
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("kernels differ from the loops: %v\n%s", err, out)
	}
	for _, tier := range set.Tiers() {
		if tier.Wide == cpu.Supported("AVX512F", "AVX512VL") || !tier.Wide {
			if !strings.Contains(out, "tier "+tier.Tier+" checked") {
				t.Errorf("tier %s did not run on this CPU:\n%s", tier.Tier, out)
			}
		}
	}
	t.Log(out)
}

// runKernelModule writes main (package main) and the generated kernel
// files into a throwaway module requiring this repository, vets it and
// runs it with OCANNLGEN_CPU unset, returning its output.
func runKernelModule(t *testing.T, files map[string][]byte, main []byte) (string, error) {
	t.Helper()
	all := map[string][]byte{"main.go": main}
	for name, data := range files {
		all[name] = data
	}
	dir := testutil.WriteRepoModule(t, all)
	if out, err := testutil.GoCmd(t, dir, []string{"GOFLAGS=-mod=mod", "OCANNLGEN_CPU="}, "vet", "."); err != nil {
		t.Fatalf("go vet of the generated kernels: %v\n%s", err, out)
	}
	if keep := os.Getenv("OCANNLGEN_KERNEL_BIN_DIR"); keep != "" {
		// The same check for a machine without a Go toolchain (an AVX-512
		// machine lent for a session, say): the program, built into keep
		// under the test's name, prints the tiers it checked and "ok".
		bin := filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_"))
		if out, err := testutil.GoCmd(t, dir, []string{"GOFLAGS=-mod=mod"}, "build", "-o", bin, "."); err != nil {
			t.Fatalf("building %s: %v\n%s", bin, err, out)
		}
	}
	return testutil.GoCmd(t, dir, []string{"GOFLAGS=-mod=mod", "OCANNLGEN_CPU="}, "run", ".")
}

// writeCase writes func case<i><tier>() int: random operands, the kernel on
// one copy of C, the loops on another, the count of mismatches.
func writeCase(b *bytes.Buffer, i int, tier string, sp *Spec, name string) {
	span := func(m, n, sm, sn int) int { return (m-1)*sm + (n-1)*sn + 1 }
	k2, n2, k3 := max(1, sp.K2), max(1, sp.N2), max(1, sp.K3)
	cLen := span(sp.M, sp.N, sp.CM, sp.CN) + (n2-1)*sp.CN2 + 8
	aLen := span(sp.M, sp.K, sp.AM, sp.AK) + (k2-1)*sp.AK2 + (k3-1)*sp.AK3 + 8
	bLen := span(sp.K, sp.N, sp.BK, sp.BN) + (k2-1)*sp.BK2 + (n2-1)*sp.BN2 + (k3-1)*sp.BK3 + 8
	tol := "1e-5"
	if sp.Elem == "float64" {
		tol = "1e-12"
	}
	acc := "+="
	if sp.Overwrite {
		acc = "="
	}
	fmt.Fprintf(b, `
func case%[1]d%[19]s() int {
	e := %[2]s(0)
	_ = e
	c := make([]%[2]s, %[3]d)
	ref := make([]%[2]s, %[3]d)
	a := make([]%[2]s, %[4]d)
	bb := make([]%[2]s, %[5]d)
	seed := uint32(%[1]d*7919 + 1)
	rnd := func() %[2]s {
		seed = seed*1664525 + 1013904223
		return %[2]s(int32(seed>>8)%%2048-1024) / 512
	}
	for j := range c {
		c[j] = rnd()
		ref[j] = c[j]
	}
	for j := range a {
		a[j] = rnd()
	}
	for j := range bb {
		bb[j] = rnd()
	}
	mag := make([]float64, len(c))
	for m := 0; m < %[6]d; m++ {
		for n := 0; n < %[7]d; n++ {
			for n2 := 0; n2 < %[23]d; n2++ {
				s := %[2]s(0)
				for r := 0; r < %[26]d; r++ {
					for q := 0; q < %[20]d; q++ {
						for k := 0; k < %[8]d; k++ {
							p := a[m*%[9]d+k*%[10]d+q*%[21]d+r*%[27]d] * bb[k*%[11]d+n*%[12]d+q*%[22]d+n2*%[25]d+r*%[28]d]
							s += p
							mag[m*%[13]d+n*%[14]d+n2*%[24]d] += math.Abs(float64(p))
						}
					}
				}
				ref[m*%[13]d+n*%[14]d+n2*%[24]d] %[15]s s
			}
		}
	}
	%[16]s(&c[0], &a[0], &bb[0])
	bad := 0
	for j := range c {
		d := math.Abs(float64(c[j] - ref[j]))
		if d > %[17]s*(1+mag[j]) || math.IsNaN(float64(c[j])) {
			if bad < 5 {
				fmt.Printf("case %[1]d %[19]s (%[18]s): cell %%d: got %%v want %%v\n", j, c[j], ref[j])
			}
			bad++
		}
	}
	return bad
}
`, i, sp.Elem, cLen, aLen, bLen, sp.M, sp.N, sp.K, sp.AM, sp.AK, sp.BK, sp.BN, sp.CM, sp.CN, acc, name, tol,
		fmt.Sprintf("%s %s M=%d N=%d K=%d overwrite=%v", sp.Elem, sp.Kind, sp.M, sp.N, sp.K, sp.Overwrite), tier, k2, sp.AK2, sp.BK2,
		n2, sp.CN2, sp.BN2, k3, sp.AK3, sp.BK3)
}

// mapCases cover every primitive of the pointwise kernels, both element
// types, stride-0 operands, accumulation and every tail length class.
func mapCases() []MapSpec {
	x := func(i int) loopir.Expr { return &loopir.Load{Tensor: i} }
	ap := func(p ops.PrimName, args ...loopir.Expr) loopir.Expr { return &loopir.Apply{Prim: p, Args: args} }
	k := func(v float64) loopir.Expr { return &loopir.Const{Value: v} }
	var out []MapSpec
	for _, elem := range []string{"float32", "float64"} {
		out = append(out,
			MapSpec{Elem: elem, N: 1000, Expr: ap("relu", x(0)), Stride0: []bool{false}},
			MapSpec{Elem: elem, N: 777, Expr: ap("where", ap("lt", k(0), x(0)), x(1), k(0)), Stride0: []bool{false, false}, Accumulate: true},
			MapSpec{Elem: elem, N: 300, Expr: ap("add", ap("mul", x(0), x(1)), k(2.5)), Stride0: []bool{false, true}},
			MapSpec{Elem: elem, N: 259, Expr: ap("add", ap("eq", x(0), x(1)), ap("ne", x(0), x(2))), Stride0: []bool{false, false, false}},
			MapSpec{Elem: elem, N: 333, Expr: ap("div", ap("sub", x(0), ap("id", x(1))), k(4)), Stride0: []bool{false, false}, Accumulate: true},
			MapSpec{Elem: elem, N: 264, Expr: ap("where", x(0), x(1), x(2)), Stride0: []bool{false, false, true}},
			// Rows: a bias over channel rows; rows with gaps, a per-row
			// scalar (stride 0 along the row, not across rows).
			MapSpec{Elem: elem, N: 8, Rows: 50, RowStride: []int{8, 8, 0}, Expr: ap("add", x(0), x(1)), Stride0: []bool{false, false}},
			MapSpec{Elem: elem, N: 21, Rows: 13, RowStride: []int{30, 25, 1}, Expr: ap("mul", x(0), ap("relu", x(1))), Stride0: []bool{false, true}, Accumulate: true},
			// Max and min accumulation (NaN, -0 and +0 are injected), a
			// max-pool row (a window weight per call), and the max-pool
			// backward's compare-and-select, in both tiers; the fill
			// also with AVX2Only (the AVX2 tier only).
			MapSpec{Elem: elem, N: 301, Expr: x(0), Stride0: []bool{false}, Accumulate: true, Combine: "max"},
			MapSpec{Elem: elem, N: 299, Expr: ap("sub", x(0), x(1)), Stride0: []bool{false, false}, Accumulate: true, Combine: "min"},
			MapSpec{Elem: elem, N: 8, Rows: 40, RowStride: []int{64, 100, 0}, Expr: ap("add", x(0), x(1)), Stride0: []bool{false, true}, Accumulate: true, Combine: "max"},
			MapSpec{Elem: elem, N: 8, Rows: 33, RowStride: []int{100, 64, 100, 0, 64}, Expr: ap("where", ap("eq", x(0), ap("add", x(1), x(2))), x(3), k(0)), Stride0: []bool{false, false, true, false}, Accumulate: true},
			MapSpec{Elem: elem, N: 1003, Expr: k(math.Inf(-1)), Stride0: []bool{}, AVX2Only: true},
			MapSpec{Elem: elem, N: 1001, Expr: k(math.Inf(-1)), Stride0: []bool{}},
			// Two levels of rows: the max-pool backward's window column
			// within the batch, a per-outer-row scalar, a 5-element tail.
			MapSpec{Elem: elem, N: 8, Rows: 2, RowStride: []int{8, 0, 8, 0, 0}, Rows2: 20, Row2Stride: []int{100, 64, 100, 0, 64}, Expr: ap("where", ap("eq", x(0), ap("add", x(1), x(2))), x(3), k(0)), Stride0: []bool{false, false, true, false}, Accumulate: true},
			MapSpec{Elem: elem, N: 13, Rows: 5, RowStride: []int{16, 32, 0}, Rows2: 7, Row2Stride: []int{90, 200, 1}, Expr: ap("add", x(0), x(1)), Stride0: []bool{false, true}, Accumulate: true, Combine: "max"},
		)
	}
	return out
}

// mapHelpers are the reference semantics of the primitives (the
// interpreter's).
const mapHelpers = `
func relu[T float32 | float64](x T) T {
	if x > 0 {
		return x
	}
	return 0
}

func b2f[T float32 | float64](b bool) T {
	if b {
		return 1
	}
	return 0
}

func where[T float32 | float64](c, a, b T) T {
	if c != 0 {
		return a
	}
	return b
}
`

// goExpr renders a map expression as Go over x<i>[j] (x<i>[0] for a
// stride-0 operand).
func goExpr(e loopir.Expr, m *MapSpec) string {
	switch e := e.(type) {
	case *loopir.Const:
		if math.IsInf(e.Value, 0) {
			return fmt.Sprintf("%s(math.Inf(%d))", m.Elem, int(math.Copysign(1, e.Value)))
		}
		return fmt.Sprintf("%s(%v)", m.Elem, e.Value)
	case *loopir.Load:
		rs, r2s := 0, 0
		if m.Rows > 1 {
			rs = m.RowStride[1+e.Tensor]
		}
		if m.Rows2 > 1 {
			r2s = m.Row2Stride[1+e.Tensor]
		}
		idx := fmt.Sprintf("r*%d", rs)
		if r2s != 0 { // the map cases' outer row loop (the reduction cases have none)
			idx = fmt.Sprintf("r2*%d+%s", r2s, idx)
		}
		if m.Stride0[e.Tensor] {
			return fmt.Sprintf("x%d[%s]", e.Tensor, idx)
		}
		return fmt.Sprintf("x%d[%s+j]", e.Tensor, idx)
	case *loopir.Apply:
		a := make([]string, len(e.Args))
		for i, x := range e.Args {
			a[i] = goExpr(x, m)
		}
		switch e.Prim {
		case "add":
			return "(" + a[0] + " + " + a[1] + ")"
		case "sub":
			return "(" + a[0] + " - " + a[1] + ")"
		case "mul":
			return "(" + a[0] + " * " + a[1] + ")"
		case "div":
			return "(" + a[0] + " / " + a[1] + ")"
		case "id":
			return a[0]
		case "relu":
			return "relu(" + a[0] + ")"
		case "lt":
			return "b2f[" + m.Elem + "](" + a[0] + " < " + a[1] + ")"
		case "eq":
			return "b2f[" + m.Elem + "](" + a[0] + " == " + a[1] + ")"
		case "ne":
			return "b2f[" + m.Elem + "](" + a[0] + " != " + a[1] + ")"
		case "where":
			return "where(" + a[0] + ", " + a[1] + ", " + a[2] + ")"
		}
		if _, ok := transPrims[e.Prim]; ok { // transHelpers
			return string(e.Prim) + "_(" + strings.Join(a, ", ") + ")"
		}
	}
	panic("goExpr")
}

// writeMapCase writes func mcase<i><tier>() int: operands on a grid of
// quarters (ties for ==, zeros for where and relu), the kernel on one
// copy of C, the reference loop on another, the count of mismatches
// (guard cells past N must stay untouched).
func writeMapCase(b *bytes.Buffer, i int, tier string, m *MapSpec, name string) {
	fmt.Fprintf(b, "\nfunc mcase%d%s() int {\n\tseed := uint32(%d)\n\trnd := func() %s {\n\t\tseed = seed*1664525 + 1013904223\n\t\treturn %s(int32(seed>>8)%%17-8) / 4\n\t}\n", i, tier, i*31+7, m.Elem, m.Elem)
	rows, rs := max(1, m.Rows), make([]int, len(m.Stride0)+1)
	if m.Rows > 1 {
		rs = m.RowStride
	}
	rows2, r2s := max(1, m.Rows2), make([]int, len(m.Stride0)+1)
	if m.Rows2 > 1 {
		r2s = m.Row2Stride
	}
	cn := (rows2-1)*r2s[0] + (rows-1)*rs[0] + m.N + 8
	fmt.Fprintf(b, "\tc := make([]%s, %d)\n\tref := make([]%s, %d)\n\tfor j := range c {\n\t\tc[j] = rnd()\n\t\tref[j] = c[j]\n\t}\n", m.Elem, cn, m.Elem, cn)
	args := []string{"&c[0]"}
	for k, s0 := range m.Stride0 {
		n := (rows2-1)*r2s[k+1] + (rows-1)*rs[k+1] + m.N + 8
		if s0 {
			n = (rows2-1)*r2s[k+1] + (rows-1)*rs[k+1] + 1
		}
		fmt.Fprintf(b, "\tx%d := make([]%s, %d)\n\tfor j := range x%d {\n\t\tx%d[j] = rnd()\n\t}\n", k, m.Elem, n, k, k)
		args = append(args, fmt.Sprintf("&x%d[0]", k))
	}
	op := "="
	if m.Accumulate {
		op = "+="
	}
	val := goExpr(m.Expr, m)
	// Exact: the same bits (a NaN for a NaN, the sign of a zero).
	cmp := "math.Abs(float64(c[j]-ref[j])) > 1e-6*max(1, math.Abs(float64(ref[j]))) || math.IsNaN(float64(c[j]))"
	if m.Combine != "" {
		injectSpecials(b, m)
		op = "="
		val = fmt.Sprintf("%s(ref[r2*%d+r*%d+j], %s)", m.Combine, r2s[0], rs[0], val)
	}
	if m.Combine != "" || len(m.Stride0) == 0 {
		cmp = "!(math.IsNaN(float64(c[j])) && math.IsNaN(float64(ref[j]))) && (c[j] != ref[j] || math.Signbit(float64(c[j])) != math.Signbit(float64(ref[j])))"
	}
	fmt.Fprintf(b, "\tfor r2 := 0; r2 < %d; r2++ {\n\tfor r := 0; r < %d; r++ {\n\t\tfor j := 0; j < %d; j++ {\n\t\t\tref[r2*%d+r*%d+j] %s %s\n\t\t}\n\t}\n\t}\n", rows2, rows, m.N, r2s[0], rs[0], op, val)
	fmt.Fprintf(b, "\t%s(%s)\n", name, strings.Join(args, ", "))
	fmt.Fprintf(b, "\tbad := 0\n\tfor j := range c {\n\t\tif %s {\n\t\t\tif bad < 5 {\n\t\t\t\tfmt.Printf(\"map case %d %s (%s): cell %%d: got %%v want %%v\\n\", j, c[j], ref[j])\n\t\t\t}\n\t\t\tbad++\n\t\t}\n\t}\n\treturn bad\n}\n", cmp, i, tier, strings.ReplaceAll(mapDesc(m), "\"", ""))
}

// injectSpecials writes code setting some cells of C and of the first
// operand to NaN, -0 and +0 (both zeros against each other too), for the
// max and min kernels' exact semantics.
func injectSpecials(b *bytes.Buffer, m *MapSpec) {
	fmt.Fprintf(b, "\tnan, negz := %[1]s(math.NaN()), %[1]s(math.Copysign(0, -1))\n", m.Elem)
	b.WriteString("\tfor j := range c {\n\t\tswitch j % 11 {\n\t\tcase 1:\n\t\t\tc[j] = nan\n\t\tcase 2, 5:\n\t\t\tc[j] = negz\n\t\tcase 3, 6:\n\t\t\tc[j] = 0\n\t\t}\n\t\tref[j] = c[j]\n\t}\n")
	if len(m.Stride0) > 0 && !m.Stride0[0] {
		b.WriteString("\tfor j := range x0 {\n\t\tswitch j % 13 {\n\t\tcase 4:\n\t\t\tx0[j] = nan\n\t\tcase 2, 6:\n\t\t\tx0[j] = 0\n\t\tcase 3, 5:\n\t\t\tx0[j] = negz\n\t\t}\n\t}\n")
	}
}

// TestTransposedForm checks which kernel cases the AVX-512 tier runs in
// the transposed-B broadcast form and with which tile, so that
// TestKernelsAgainstLoops covers each tile of the form.
func TestTransposedForm(t *testing.T) {
	c := AVX512()
	var got []string
	for _, sp := range kernelCases() {
		if sp.transposes(c) {
			mr, nr := c.tile(&sp)
			got = append(got, fmt.Sprintf("M=%d N=%d K=%d %dx%d %s", sp.M, sp.N, sp.K, mr, nr, c.blocking(&sp)))
		}
	}
	want := []string{
		"M=70 N=80 K=400 14x32 B transposed into the frame, 2 k blocks of at most 208",
		"M=101 N=48 K=512 8x48 B transposed into the frame, 4 k blocks of at most 128",
		"M=100 N=64 K=160 6x64 B transposed into the frame, 2 k blocks of at most 80",
		"M=64 N=48 K=64 8x48 B transposed into the frame, one k block",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transposed kernel cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if (&Spec{Elem: "float32", Kind: Dot, M: 128, N: 64, K: 64, CN: 1, AK: 1, BK: 1}).transposes(AVX2()) {
		t.Error("the AVX2 tier transposes")
	}
}

// TestThreeVectorTile lists the kernel cases the AVX-512 tier runs with
// the 8x3 broadcast tile (tileSteps), so that TestKernelsAgainstLoops
// covers it: folded and not, with row and sliver remainders.
func TestThreeVectorTile(t *testing.T) {
	c := AVX512()
	var got []string
	for _, sp := range kernelCases() {
		if sp.Kind == Broadcast && sp.Elem == "float32" {
			if mr, nr := c.tile(&sp); mr == 8 && nr == 48 {
				got = append(got, fmt.Sprintf("M=%d N=%d K=%d K2=%d K3=%d", sp.M, sp.N, sp.K, sp.K2, sp.K3))
			}
		}
	}
	want := []string{
		"M=50 N=48 K=70 K2=0 K3=0",
		"M=16 N=96 K=40 K2=0 K3=0",
		"M=50 N=48 K=64 K2=0 K3=0",
		"M=16 N=48 K=8 K2=5 K3=3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("8x3 kernel cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
