package asm

import (
	"bytes"
	"fmt"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// reduceCases cover both kinds, every accumulator, both element types,
// per-row and constant stride-0 operands, rows with gaps, the initial
// value, tails and the unrolled group loop.
func reduceCases() []ReduceSpec {
	x := func(i int) loopir.Expr { return &loopir.Load{Tensor: i} }
	ap := func(p ops.PrimName, args ...loopir.Expr) loopir.Expr { return &loopir.Apply{Prim: p, Args: args} }
	k := func(v float64) loopir.Expr { return &loopir.Const{Value: v} }
	var out []ReduceSpec
	for _, elem := range []string{"float32", "float64"} {
		al := func(accum ops.AccumName, n, rows int, rs []int, e loopir.Expr, s0 []bool) *ReduceSpec {
			out = append(out, ReduceSpec{Elem: elem, Kind: AlongRows, Accum: accum, N: n, Rows: rows, RowStride: rs, Expr: e, Stride0: s0})
			return &out[len(out)-1]
		}
		ac := func(accum ops.AccumName, n, rows int, rs []int, e loopir.Expr, s0 []bool) *ReduceSpec {
			out = append(out, ReduceSpec{Elem: elem, Kind: AcrossRows, Accum: accum, N: n, Rows: rows, RowStride: rs, Expr: e, Stride0: s0})
			return &out[len(out)-1]
		}
		al("add", 100, 64, []int{1, 100}, x(0), []bool{false})                         // row sums
		al("max", 8, 300, []int{1, 8}, x(0), []bool{false})                            // attention row max
		r := al("max", 10, 256, []int{1, 10}, x(0), []bool{false})                     // softmax max absorbing the fill
		r.Init, r.InitVal = true, -1e30                                                //
		al("sub", 37, 20, []int{3, 40, 1}, ap("mul", x(0), x(1)), []bool{false, true}) // g2 =- g * t, t per row
		al("min", 1000, 1, []int{0, 0}, x(0), []bool{false})                           // one long row, the group loop
		al("add", 2560, 1, []int{0, 0}, ap("mul", x(0), k(-1)), []bool{false})         // the loss, neg(x)
		al("add", 64, 9, []int{2, 70, 0}, ap("where", ap("lt", k(0), x(0)), x(1), k(0.5)), []bool{false, false})
		r = al("add", 33, 12, []int{1, 33}, ap("div", x(0), k(4)), []bool{false})
		r.Init, r.InitVal = true, 1.5
		al("max", 5, 100, []int{1, 5, 5}, ap("add", x(0), x(1)), []bool{false, false})
		r = al("max", 8, 64, []int{1, 8}, x(0), []bool{false}) // the fill with the neutral element is absorbed
		r.Init, r.InitVal = true, math.Inf(-1)
		r = al("min", 19, 40, []int{2, 19}, x(0), []bool{false})
		r.Init, r.InitVal = true, math.Inf(1)
		ac("add", 16, 800, []int{0, 16}, x(0), []bool{false}) // conv2 bias gradient
		ac("add", 8, 3200, []int{0, 8}, x(0), []bool{false})  // conv1 bias gradient
		ac("add", 100, 7, []int{0, 100}, x(0), []bool{false}) // several blocks and a tail
		ac("sub", 37, 50, []int{0, 40, 1}, ap("mul", x(0), x(1)), []bool{false, true})
		r = ac("max", 100, 30, []int{0, 100}, x(0), []bool{false})
		r.Init, r.InitVal = true, math.Inf(-1)
		ac("min", 5, 300, []int{0, 5}, x(0), []bool{false})
		ac("add", 40, 9, []int{0, 40, 0}, ap("mul", x(0), x(1)), []bool{false, false}) // a weight shared by every row
		r = al("sub", 24, 33, []int{1, 24}, x(0), []bool{false})
		r.Init, r.InitVal = true, 2
		// The argmax of a softmax's maximum (its backward): the first
		// ordinal whose value equals the row's maximum (a per-row
		// scalar), starting from the "no winner" value; beyond
		// fixedRegs' bound, taken by fitsAVX2's compile check. A row
		// with a tail too.
		argmax := ap("where", ap("eq", x(0), x(1)), x(2), k(128))
		r = al("min", 128, 40, []int{1, 128, 1, 0}, argmax, []bool{false, true, false})
		r.Init, r.InitVal = true, 128
		al("min", 37, 21, []int{2, 40, 1, 0}, argmax, []bool{false, true, false})
		r = ac("sub", 13, 21, []int{0, 13}, x(0), []bool{false})
		r.Init, r.InitVal = true, 0.5
		r = ac("add", 24, 40, []int{0, 30}, x(0), []bool{false}) // a bias gradient absorbing the fill with 0
		r.Init = true
		// The register budget's limit (fixedRegs 13, 14 with the initial
		// value): five operands, one a per-row scalar, max's temporaries.
		big := ap("add", ap("add", ap("mul", x(0), x(1)), ap("div", x(2), x(3))), x(4))
		r = al("max", 45, 30, []int{1, 50, 1, 45, 45, 45}, big, []bool{false, true, false, false, false})
		r.Init, r.InitVal = true, -3
		r = ac("max", 45, 30, []int{0, 50, 1, 45, 45, 45}, big, []bool{false, true, false, false, false})
		r.Init, r.InitVal = true, -3
	}
	return out
}

// TestReduceKernelsAgainstLoops builds every reduction case into a
// throwaway module and compares it, in the AVX2 tier and (on a machine
// with AVX-512) the AVX-512 tier, on random data with zeros of both
// signs and (max, min) NaNs, with plain Go loops: bit for bit for max,
// min and the across-rows sums (same order), within 1e-5 (float32) or
// 1e-12 (float64) of the magnitudes summed for the along-rows sums.
// Guard cells past the touched ones must stay untouched.
func TestReduceKernelsAgainstLoops(t *testing.T) {
	if runtime.GOARCH != "amd64" || !cpu.Supported("AVX", "FMA3") {
		t.Skip("needs amd64 with AVX2 and FMA")
	}
	if testing.Short() {
		t.Skip("builds a module (slow)")
	}
	set := NewSet(Tiers()...)
	cases := reduceCases()
	for _, r := range cases {
		if !r.fitsAVX2() {
			t.Fatalf("case %s needs %d registers besides its accumulators and does not compile: the classifier would not take it", r.Describe(), r.fixedRegs())
		}
		set.AddReduce(r)
	}
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"os\"\n)\n\nvar _ = math.Abs\n\nfunc main() {\n\tbad := 0\n\tif !ocannlAVX2 {\n\t\tos.Exit(2)\n\t}\n")
	for i := range cases {
		fmt.Fprintf(&b, "\tbad += rcase%d()\n", i)
	}
	b.WriteString("\tif ocannlAVX512 {\n\t\tfmt.Println(\"AVX-512 kernels checked too\")\n")
	for i := range cases {
		fmt.Fprintf(&b, "\t\tbad += rcase%d()\n", len(cases)+i)
	}
	b.WriteString("\t}\n")
	b.WriteString("\tif bad > 0 {\n\t\tos.Exit(1)\n\t}\n\tfmt.Println(\"ok\")\n}\n")
	for i := range cases {
		writeReduceCase(&b, i, &cases[i], set.ReduceName(set.AddReduce(cases[i]), AVX2()))
		writeReduceCase(&b, len(cases)+i, &cases[i], set.ReduceName(set.AddReduce(cases[i]), AVX512()))
	}
	b.WriteString(mapHelpers)
	out := mustRunKernelModule(t, files, b.Bytes())
	if !strings.Contains(out, "ok") {
		t.Fatalf("reduction kernels differ from the loops:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// mustRunKernelModule is runKernelModule failing the test when the
// module does not run.
func mustRunKernelModule(t *testing.T, files map[string][]byte, main []byte) string {
	t.Helper()
	out, err := runKernelModule(t, files, main)
	if err != nil {
		t.Fatalf("running the kernels: %v\n%s", err, out)
	}
	return out
}

// writeReduceCase writes func rcase<i>() int: operands on a grid of
// quarters with zeros of both signs (and NaNs for max and min), the
// kernel on one copy of C, the reference loops on another, the count of
// mismatching cells.
func writeReduceCase(b *bytes.Buffer, i int, r *ReduceSpec, name string) {
	e := r.Elem
	fmt.Fprintf(b, "\nfunc rcase%d() int {\n\tseed := uint32(%d)\n\trnd := func() %s {\n\t\tseed = seed*1664525 + 1013904223\n", i, i*37+11, e)
	fmt.Fprintf(b, "\t\tv := %s(int32(seed>>8)%%17-8) / 4\n\t\tif v == 0 && seed&(1<<20) != 0 {\n\t\t\tv = %s(math.Copysign(0, -1))\n\t\t}\n\t\treturn v\n\t}\n", e, e)
	cLen := (r.Rows-1)*r.RowStride[0] + 1 + 8
	if r.Kind == AcrossRows {
		cLen = r.N + 8
	}
	fmt.Fprintf(b, "\tc := make([]%s, %d)\n\tref := make([]%s, %d)\n\tmag := make([]float64, %d)\n\tfor j := range c {\n\t\tc[j] = rnd()\n\t\tref[j] = c[j]\n\t\tmag[j] = math.Abs(float64(c[j]))\n\t}\n", e, cLen, e, cLen, cLen)
	args := []string{"&c[0]"}
	for k, s0 := range r.Stride0 {
		n := (r.Rows-1)*r.RowStride[k+1] + r.N + 8
		if s0 {
			n = (r.Rows-1)*r.RowStride[k+1] + 1
		}
		fmt.Fprintf(b, "\tx%d := make([]%s, %d)\n\tfor j := range x%d {\n\t\tx%d[j] = rnd()\n\t}\n", k, e, n, k, k)
		if k == 0 && (r.Accum == "max" || r.Accum == "min") {
			fmt.Fprintf(b, "\tx0[%d] = %s(math.NaN())\n", n/3, e)
		}
		args = append(args, fmt.Sprintf("&x%d[0]", k))
	}
	m := &MapSpec{Elem: e, Rows: max(2, r.Rows), RowStride: r.RowStride, Stride0: r.Stride0}
	upd := map[ops.AccumName]string{"add": "acc += v", "sub": "acc -= v", "max": "acc = max(acc, v)", "min": "acc = min(acc, v)"}[r.Accum]
	start := "ref[cell]"
	if r.Init {
		start = fmt.Sprintf("%s(%v)", e, r.InitVal)
		if math.IsInf(r.InitVal, 0) {
			start = fmt.Sprintf("%s(math.Inf(%d))", e, int(math.Copysign(1, r.InitVal)))
		}
	}
	outer, inner, cell := "r", "j", fmt.Sprintf("r*%d", r.RowStride[0])
	on, in := r.Rows, r.N
	if r.Kind == AcrossRows {
		outer, inner, cell, on, in = "j", "r", "j", r.N, r.Rows
	}
	fmt.Fprintf(b, "\tfor %s := 0; %s < %d; %s++ {\n\t\tcell := %s\n\t\tacc := %s\n\t\tfor %s := 0; %s < %d; %s++ {\n\t\t\tv := %s\n\t\t\tmag[cell] += math.Abs(float64(v))\n\t\t\t%s\n\t\t}\n\t\tref[cell] = acc\n\t}\n",
		outer, outer, on, outer, cell, start, inner, inner, in, inner, goExpr(r.Expr, m), upd)
	fmt.Fprintf(b, "\t%s(%s)\n", name, strings.Join(args, ", "))
	tol := "0"
	if r.Kind == AlongRows && (r.Accum == "add" || r.Accum == "sub") {
		tol = "1e-5"
		if e == "float64" {
			tol = "1e-12"
		}
	}
	fmt.Fprintf(b, `	bad := 0
	for j := range c {
		same := math.Float64bits(float64(c[j])) == math.Float64bits(float64(ref[j])) || math.IsNaN(float64(c[j])) && math.IsNaN(float64(ref[j]))
		if !same && !(%s > 0 && math.Abs(float64(c[j]-ref[j])) <= %s*(1+mag[j])) {
			if bad < 5 {
				fmt.Printf("reduce case %d (%s): cell %%d: got %%v want %%v\n", j, c[j], ref[j])
			}
			bad++
		}
	}
	return bad
}
`, tol, tol, i, strings.ReplaceAll(r.Describe(), "\"", ""))
}

// TestClassifyReduce pins the reduction kernel chosen for typical nests,
// its sizes and strides worked out by hand from the layouts.
func TestClassifyReduce(t *testing.T) {
	cases := []struct {
		name, src  string
		kind       ReduceKind
		accum      ops.AccumName
		n, rows    int // n == 0: no reduction kernel
		rowStride  []int
		outer      int
		outerReduc bool
	}{
		{"row sums", `input x : 64, 100 = range
let y = x ++ "i,j => i"`, AlongRows, "add", 100, 64, []int{1, 100}, 0, false},
		{"row max", `input x : 64, 100 = range
let y = x @^^ "i,j => i"`, AlongRows, "max", 100, 64, []int{1, 100}, 0, false},
		{"batch and sequence merge into the rows", `input x : 32, 8, 32 = range
let y = x ++ "b,s,d => b,s"`, AlongRows, "add", 32, 256, []int{1, 32}, 0, false},
		{"bias gradient: a column sum", `input g : 512, 16 = range
let y = g ++ "b,c => c"`, AcrossRows, "add", 16, 512, []int{0, 16}, 0, false},
		{"conv bias gradient: batch and spatial axes merge", `input g : 8, 5, 5, 16 = range
let y = g ++ "n,h,w,c => c"`, AcrossRows, "add", 16, 200, []int{0, 16}, 0, false},
		{"columns of a transposed layout", `input x : 100, 64 = range
let y = x @^^ "j,i => i"`, AcrossRows, "max", 64, 100, []int{0, 64}, 0, false},
		{"an outer reduced axis stays a Go loop", `input x : 8, 64, 100 = range
let y = x ++ "a,b,c => b"`, AlongRows, "add", 100, 64, []int{1, 100}, 1, true},
		{"the whole tensor into one cell", `input x : 16, 40 = range
let y = x ++ "i,j => 0"`, AlongRows, "add", 640, 1, []int{0, 0}, 0, false},
		{"too small", `input x : 4, 4 = range
let y = x ++ "i,j => i"`, 0, "", 0, 0, nil, 0, false},
		{"not a reduction", `input x : 64, 64 = range
let y = relu x`, 0, "", 0, 0, nil, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, loops, st := firstNest(t, c.src)
			r := ClassifyReduce(target.AVX512().Kernels, p, loops, st, "float32")
			if c.n == 0 {
				if r != nil {
					t.Fatalf("got %+v, want the Go loops", r.Spec)
				}
				return
			}
			if r == nil {
				t.Fatalf("Go loops, want a %s kernel\n%s", c.kind, p)
			}
			s := r.Spec
			if s.Kind != c.kind || s.Accum != c.accum || s.N != c.n || s.Rows != c.rows || fmt.Sprint(s.RowStride) != fmt.Sprint(c.rowStride) ||
				len(r.Outer) != c.outer || r.OuterReduces != c.outerReduc {
				t.Fatalf("got %s %s N=%d rows=%d strides %v, %d outer loops (reducing: %v);\nwant %s %s N=%d rows=%d strides %v, %d (%v)\n%s",
					s.Kind, s.Accum, s.N, s.Rows, s.RowStride, len(r.Outer), r.OuterReduces, c.kind, c.accum, c.n, c.rows, c.rowStride, c.outer, c.outerReduc, p)
			}
		})
	}
}
