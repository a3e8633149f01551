package asm

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/rt/cpu"
)

// TestReduceSizeRule measures reduction kernels against the Go loops the
// emitter writes for the same nest, over small sizes, to set
// MinReduceElems and minReduceN (docs/design.md "Reductions"). It runs
// only when OCANNLGEN_MEASURE_REDUCE is set (timings depend on the
// machine and its load) and prints, per shape, ns per call of the kernel
// and of the loops (the best of 7 rounds); it fails when a kernel's
// result differs from the loops'.
func TestReduceSizeRule(t *testing.T) {
	measureGate(t, "OCANNLGEN_MEASURE_REDUCE")
	x0 := &loopir.Load{Tensor: 0}
	var cases []ReduceSpec
	for _, accum := range []ops.AccumName{"add", "max"} {
		for _, n := range []int{2, 3, 4, 8, 10, 16, 32} {
			for _, rows := range []int{2, 4, 8, 16, 32, 64} {
				cases = append(cases, ReduceSpec{Elem: "float32", Kind: AlongRows, Accum: accum, N: n, Rows: rows, RowStride: []int{1, n}, Expr: x0, Stride0: []bool{false}})
			}
		}
	}
	for _, n := range []int{2, 3, 4, 8, 16} {
		for _, rows := range []int{2, 4, 8, 16, 32, 64} {
			cases = append(cases, ReduceSpec{Elem: "float32", Kind: AcrossRows, Accum: "add", N: n, Rows: rows, RowStride: []int{0, n}, Expr: x0, Stride0: []bool{false}})
		}
	}
	set := NewSet(Tiers()...)
	for _, r := range cases {
		set.AddReduce(r)
	}
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n\nvar sink float32\n\nfunc best(f func()) float64 {\n\tb := 1e18\n\tfor range 7 {\n\t\tt := time.Now()\n\t\tfor range 20000 {\n\t\t\tf()\n\t\t}\n\t\tb = min(b, float64(time.Since(t).Nanoseconds())/20000)\n\t}\n\treturn b\n}\n\nfunc main() {\n\tbad := 0\n")
	for _, r := range cases {
		name := set.ReduceName(set.AddReduce(r), AVX2())
		cells, total := r.Rows, r.Rows*r.N
		_ = total
		if r.Kind == AcrossRows {
			cells = r.N
		}
		upd := map[ops.AccumName]string{"add": "acc += x[i][j]", "max": "acc = max(acc, x[i][j])"}[r.Accum]
		var loops string
		if r.Kind == AlongRows {
			loops = fmt.Sprintf("for i := range %d {\n\t\t\tacc := c[i]\n\t\t\tfor j := range %d {\n\t\t\t\t%s\n\t\t\t}\n\t\t\tc[i] = acc\n\t\t}", r.Rows, r.N, upd)
		} else {
			loops = fmt.Sprintf("for i := range %d {\n\t\t\tfor j := range %d {\n\t\t\t\tc[j] += x[i][j]\n\t\t\t}\n\t\t}", r.Rows, r.N)
		}
		fmt.Fprintf(&b, "\t{\n\t\tx := new([%d][%d]float32)\n\t\tfor i := range x {\n\t\t\tfor j := range x[i] {\n\t\t\t\tx[i][j] = float32((i+j)%%13) / 4\n\t\t\t}\n\t\t}\n\t\tc := new([%d]float32)\n\t\tref := new([%d]float32)\n", r.Rows, r.N, cells, cells)
		fmt.Fprintf(&b, "\t\tgo_ := func(c *[%d]float32) {\n\t\t%s\n\t\t}\n\t\tgo_(ref)\n\t\t%s(&c[0], &x[0][0])\n\t\tfor j := range c {\n\t\t\tif d := c[j] - ref[j]; d > 1e-3 || d < -1e-3 {\n\t\t\t\tbad++\n\t\t\t}\n\t\t}\n", cells, loops, name)
		fmt.Fprintf(&b, "\t\tk := best(func() { %s(&c[0], &x[0][0]) })\n\t\tg := best(func() { go_(c) })\n", name)
		fmt.Fprintf(&b, "\t\tfmt.Printf(\"%%-12s %%-4s N=%%-3d rows=%%-3d elems=%%-5d kernel %%7.1f ns  loops %%7.1f ns  %%.2fx\\n\", %q, %q, %d, %d, %d, k, g, g/k)\n\t}\n",
			r.Kind.String(), r.Accum, r.N, r.Rows, total)
	}
	b.WriteString("\tif bad > 0 {\n\t\tos.Exit(1)\n\t}\n}\n")
	t.Log("\n" + mustRunKernelModule(t, files, b.Bytes()))
}

// measureGate skips a measurement test unless the environment variable
// env is set and the CPU runs the AVX2 kernels.
func measureGate(t *testing.T, env string) {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skip("set " + env + "=1 to measure")
	}
	if runtime.GOARCH != "amd64" || !cpu.Supported("AVX", "FMA3") {
		t.Skip("needs amd64 with AVX2 and FMA")
	}
}
