package asm

import (
	"bytes"
	"fmt"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"testing"
)

// TestGatherRule measures the AVX2 gathered broadcast form against the
// AVX2 dot kernel on the same Dot specs (convolutions with few input
// channels: n the output channels, k the kernel width times the
// channels, K2 the kernel rows, m a batch or (M=10) an image row), to set the
// classifier's rule (gatherPays, docs/design.md). It runs only when
// OCANNLGEN_MEASURE_GATHER is set (timings depend on the machine and its
// load) and prints, per shape, ns per call of each form (the best of 7
// rounds) and GFLOP/s; it fails when the two forms' results differ.
func TestGatherRule(t *testing.T) {
	measureGate(t, "OCANNLGEN_MEASURE_GATHER")
	var cases []Spec
	for _, elem := range []string{"float32", "float64"} {
		for _, m := range []int{4, 8, 10, 32, 256} {
			for _, n := range []int{4, 8, 16} {
				for _, k := range []int{3, 6, 8, 12, 24} {
					for _, kh := range []int{1, 3} {
						ic := max(1, k/3)
						sp := Spec{Elem: elem, Kind: Dot, M: m, N: n, K: k, K2: kh, CM: n, CN: 1, AM: ic, AK: 1, BK: 1, BN: kh * k, AK2: 12 * ic, BK2: k}
						if m != 10 { // a batch: image and output planes apart
							sp.AM, sp.CM = 144*ic, 100*n
						}
						if sp.Flops() < target.AVX2().Kernels.MinFlops || !AVX2().gatherFits(&sp) {
							continue
						}
						cases = append(cases, sp)
					}
				}
			}
		}
	}
	set := NewSet(target.AVX2())
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc best(f func()) float64 {\n\tb := 1e18\n\tn := 1\n\tfor {\n\t\tt := time.Now()\n\t\tfor range n {\n\t\t\tf()\n\t\t}\n\t\tif time.Since(t) > 2*time.Millisecond {\n\t\t\tbreak\n\t\t}\n\t\tn *= 2\n\t}\n\tfor range 7 {\n\t\tt := time.Now()\n\t\tfor range n {\n\t\t\tf()\n\t\t}\n\t\tb = min(b, float64(time.Since(t).Nanoseconds())/float64(n))\n\t}\n\treturn b\n}\n\nfunc main() {\n\tbad := 0\n")
	for _, sp := range cases {
		g := sp
		g.Gather = true
		dn, gn := set.Name(set.Add(sp), AVX2()), set.Name(set.Add(g), AVX2())
		span := func(ext, stride int) int { return max(0, ext-1) * stride }
		cl := span(sp.M, sp.CM) + sp.N
		al := span(sp.M, sp.AM) + span(sp.K, 1) + span(sp.K2, sp.AK2) + 1
		bl := span(sp.N, sp.BN) + span(sp.K, 1) + span(sp.K2, sp.BK2) + 1
		fmt.Fprintf(&b, "\t{\n\t\tc, r := make([]%[1]s, %[2]d), make([]%[1]s, %[2]d)\n\t\ta, bb := make([]%[1]s, %[3]d), make([]%[1]s, %[4]d)\n", sp.Elem, cl, al, bl)
		fmt.Fprintf(&b, "\t\tfor i := range a {\n\t\t\ta[i] = %[1]s(i%%13) / 4\n\t\t}\n\t\tfor i := range bb {\n\t\t\tbb[i] = %[1]s(i%%7) / 8\n\t\t}\n", sp.Elem)
		fmt.Fprintf(&b, "\t\t%s(&r[0], &a[0], &bb[0])\n\t\t%s(&c[0], &a[0], &bb[0])\n", dn, gn)
		b.WriteString("\t\tfor i := range c {\n\t\t\tif math.Abs(float64(c[i]-r[i])) > 1e-3*(1+math.Abs(float64(r[i]))) {\n\t\t\t\tbad++\n\t\t\t}\n\t\t}\n")
		fmt.Fprintf(&b, "\t\td := best(func() { %s(&c[0], &a[0], &bb[0]) })\n\t\tg := best(func() { %s(&c[0], &a[0], &bb[0]) })\n", dn, gn)
		fmt.Fprintf(&b, "\t\tfmt.Printf(\"%%-8s M=%%-3d N=%%-2d K=%%-2dx%%d  dot %%8.1f ns %%5.1f GFLOP/s  gathered %%8.1f ns %%5.1f GFLOP/s  %%.2fx\\n\", %q, %d, %d, %d, %d, d, %d/d, g, %d/g, d/g)\n\t}\n",
			sp.Elem, sp.M, sp.N, sp.K, sp.K2, sp.Flops(), sp.Flops())
	}
	b.WriteString("\tif bad > 0 {\n\t\tfmt.Println(bad, \"cells differ\")\n\t\tos.Exit(1)\n\t}\n}\n")
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + mustRunKernelModule(t, files, b.Bytes()))
}
