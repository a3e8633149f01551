package asm

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
)

// gemmMeasureCases are the float32 contraction kernels that take most of
// the scale models' steps (bench/models: the decoder's Gemm27-43 as
// generated on 2026-11-29, overwriting C as in the step; the ResNet-20's
// convolution GEMMs), as the emitter specifies them.
func gemmMeasureCases() []struct {
	name string
	s    Spec
} {
	bc := func(m, n, k, cm, am, ak, bk int) Spec {
		return Spec{Elem: "float32", Kind: Broadcast, M: m, N: n, K: k, CM: cm, CN: 1, AM: am, AK: ak, BK: bk, BN: 1}
	}
	dot := func(m, n, k, cm, am, bn int) Spec {
		return Spec{Elem: "float32", Kind: Dot, M: m, N: n, K: k, CM: cm, CN: 1, AM: am, AK: 1, BK: 1, BN: bn}
	}
	ow := func(s Spec) Spec {
		s.Overwrite = true
		return s
	}
	return []struct {
		name string
		s    Spec
	}{
		{"l1 bc", bc(6, 64, 128, 64, 128, 1, 64)},
		{"l1 bc96", bc(96, 64, 64, 64, 64, 1, 64)},
		{"l1 dot", dot(4, 4, 512, 4, 512, 512)},
		{"l1 dot32", dot(32, 32, 128, 32, 128, 128)},
		{"gpt27 dot", ow(dot(128, 384, 384, 384, 384, 384))},
		{"gpt28 dot", ow(dot(128, 128, 64, 768, 384, 384))},
		{"gpt29 bc", ow(bc(128, 64, 128, 384, 768, 1, 384))},
		{"gpt30 dot", ow(dot(1024, 48, 384, 384, 384, 384))},
		{"gpt31 dot", ow(dot(1024, 192, 384, 1536, 384, 384))},
		{"gpt32 dot", ow(dot(1024, 48, 1536, 384, 1536, 1536))},
		{"gpt36 bc", ow(bc(384, 192, 1024, 1536, 1, 384, 1536))},
		{"gpt37 bc", ow(bc(1024, 192, 384, 1536, 384, 1, 1536))},
		{"gpt38 bc", ow(bc(192, 384, 1024, 384, 1, 1536, 384))},
		{"gpt39 bc", ow(bc(128, 384, 1536, 384, 1536, 1, 384))},
		{"gpt40 bc", ow(bc(48, 384, 1024, 384, 1, 384, 384))},
		{"gpt41 bc", ow(bc(128, 384, 384, 384, 384, 1, 384))},
		{"gpt42 bc", ow(bc(128, 64, 128, 384, 1, 768, 384))},
		{"gpt43 bc", ow(bc(384, 64, 1024, 384, 1, 384, 384))},
		{"rn48 dot", Spec{Elem: "float32", Kind: Dot, M: 32, N: 16, K: 48, CM: 16384, CN: 1, AM: 19600, AK: 1, BK: 1, BN: 144}},
		{"rn54 dot", Spec{Elem: "float32", Kind: Dot, M: 32, N: 64, K: 192, CM: 4096, CN: 1, AM: 7744, AK: 1, BK: 1, BN: 576}},
		{"rn51 dot", Spec{Elem: "float32", Kind: Dot, M: 32, N: 32, K: 96, CM: 8192, CN: 1, AM: 11552, AK: 1, BK: 1, BN: 288}},
		// The same convolutions with the kernel rows as K2 (as the
		// model runs them), batch rows against pixel rows (dotRows).
		{"rn48 batch", Spec{Elem: "float32", Kind: Dot, M: 32, N: 16, K: 48, CM: 16384, CN: 1, AM: 19600, AK: 1, BK: 1, BN: 144, K2: 3, AK2: 560, BK2: 48}},
		{"rn48 pix", Spec{Elem: "float32", Kind: Dot, M: 32, N: 16, K: 48, CM: 16, CN: 1, AM: 16, AK: 1, BK: 1, BN: 144, K2: 3, AK2: 560, BK2: 48}},
		{"rn51 batch", Spec{Elem: "float32", Kind: Dot, M: 32, N: 32, K: 96, CM: 8192, CN: 1, AM: 11552, AK: 1, BK: 1, BN: 288, K2: 3, AK2: 608, BK2: 96}},
		{"rn51 pix", Spec{Elem: "float32", Kind: Dot, M: 16, N: 32, K: 96, CM: 32, CN: 1, AM: 32, AK: 1, BK: 1, BN: 288, K2: 3, AK2: 608, BK2: 96}},
		{"rn54 batch", Spec{Elem: "float32", Kind: Dot, M: 32, N: 64, K: 192, CM: 4096, CN: 1, AM: 7744, AK: 1, BK: 1, BN: 576, K2: 3, AK2: 704, BK2: 192}},
		{"rn54 pix", Spec{Elem: "float32", Kind: Dot, M: 8, N: 64, K: 192, CM: 64, CN: 1, AM: 64, AK: 1, BK: 1, BN: 576, K2: 3, AK2: 704, BK2: 192}},
		{"rn58 bc", bc(8, 192, 64, 704, 512, 1, 576)},
		{"rn64 bc", bc(16, 96, 32, 608, 512, 1, 288)},
		{"rn70 bc", bc(32, 48, 16, 560, 512, 1, 144)},
		{"rn66 bc", bc(16, 48, 32, 1120, 512, 1, 144)},
		{"rn60 bc", bc(8, 96, 64, 1216, 512, 1, 288)},
		{"rn71 fold", Spec{Elem: "float32", Kind: Broadcast, M: 16, N: 48, K: 32, CM: 144, CN: 1, AM: 1, AK: 16, BK: 16, BN: 1, K2: 32, AK2: 512, BK2: 560, K3: 32, AK3: 16384, BK3: 19600}},
		{"rn65 fold", Spec{Elem: "float32", Kind: Broadcast, M: 32, N: 96, K: 16, CM: 288, CN: 1, AM: 1, AK: 32, BK: 32, BN: 1, K2: 16, AK2: 512, BK2: 608, K3: 32, AK3: 8192, BK3: 11552}},
		{"rn59 fold", Spec{Elem: "float32", Kind: Broadcast, M: 64, N: 192, K: 8, CM: 576, CN: 1, AM: 1, AK: 64, BK: 64, BN: 1, K2: 8, AK2: 512, BK2: 704, K3: 32, AK3: 4096, BK3: 7744}},
	}
}

// TestGemmMeasure times the float32 contraction kernels of the scale
// models one call at a time (the same call repeated, so operands that
// fit stay in cache) and prints GFLOP/s; OCANNLGEN_MEASURE_GEMM=1 runs
// it (OCANNLGEN_MEASURE_GEMM_ONLY=S: only the cases whose name contains
// S). It fails when a kernel's result differs from a plain loop's.
func TestGemmMeasure(t *testing.T) {
	measureGate(t, "OCANNLGEN_MEASURE_GEMM")
	set := NewSet(target.AVX512())
	tier := AVX512()
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc best(f func()) float64 {\n\tb := 1e18\n\tn := 1\n\tfor {\n\t\tt := time.Now()\n\t\tfor range n {\n\t\t\tf()\n\t\t}\n\t\tif time.Since(t) > 5*time.Millisecond {\n\t\t\tbreak\n\t\t}\n\t\tn *= 2\n\t}\n\tfor range 7 {\n\t\tt := time.Now()\n\t\tfor range n {\n\t\t\tf()\n\t\t}\n\t\tb = min(b, float64(time.Since(t).Nanoseconds())/float64(n))\n\t}\n\treturn b\n}\n\nfunc main() {\n\tif !ocannlAVX512 {\n\t\tfmt.Println(\"no AVX-512\")\n\t\treturn\n\t}\n\tbad := 0\n")
	cases := gemmMeasureCases()
	if os.Getenv("OCANNLGEN_MEASURE_GEMM_ONLY") != "" {
		var keep []struct {
			name string
			s    Spec
		}
		for _, c := range cases {
			if strings.Contains(c.name, os.Getenv("OCANNLGEN_MEASURE_GEMM_ONLY")) {
				keep = append(keep, c)
			}
		}
		cases = keep
	}
	fmt.Fprintf(&b, "\tbestNS := make([]float64, %d)\n\tcoldNS := make([]float64, %d)\n\tfor i := range bestNS {\n\t\tbestNS[i], coldNS[i] = 1e18, 1e18\n\t}\n\tfor round := range 3 {\n", len(cases), len(cases))
	for i, c := range cases {
		s := c.s
		name := set.Name(set.Add(s), tier)
		span := func(m, n, sm, sn int) int { return (m-1)*sm + (n-1)*sn + 1 }
		k2, k3 := max(1, s.K2), max(1, s.K3)
		cl := span(s.M, s.N, s.CM, s.CN)
		al := span(s.M, s.K, s.AM, s.AK) + (k2-1)*s.AK2 + (k3-1)*s.AK3
		bl := span(s.K, s.N, s.BK, s.BN) + (k2-1)*s.BK2 + (k3-1)*s.BK3
		fmt.Fprintf(&b, "\t{\n\t\tc, a, bb := make([]float32, %d), make([]float32, %d), make([]float32, %d)\n", cl, al, bl)
		b.WriteString("\t\tfor i := range a {\n\t\t\ta[i] = float32(i%13-6) / 8\n\t\t}\n\t\tfor i := range bb {\n\t\t\tbb[i] = float32(i%7-3) / 4\n\t\t}\n")
		fmt.Fprintf(&b, "\t\t%s(&c[0], &a[0], &bb[0])\n\t\tif round == 0 {\n", name)
		fmt.Fprintf(&b, "\t\tfor m := range %d {\n\t\t\tfor n := range %d {\n\t\t\t\ts := 0.0\n\t\t\t\tfor k := range %d {\n\t\t\t\tfor q := range %d {\n\t\t\t\tfor r := range %d {\n\t\t\t\t\ts += float64(a[m*%d+k*%d+q*%d+r*%d]) * float64(bb[k*%d+n*%d+q*%d+r*%d])\n\t\t\t\t}\n\t\t\t\t}\n\t\t\t\t}\n",
			s.M, s.N, s.K, k2, k3, s.AM, s.AK, s.AK2, s.AK3, s.BK, s.BN, s.BK2, s.BK3)
		fmt.Fprintf(&b, "\t\t\t\tif math.Abs(float64(c[m*%d+n*%d])-s) > 1e-3*(1+math.Abs(s)) {\n\t\t\t\t\tbad++\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t\t}\n", s.CM, s.CN)
		fmt.Fprintf(&b, "\t\tbestNS[%d] = min(bestNS[%d], best(func() { %s(&c[0], &a[0], &bb[0]) }))\n", i, i, name)
		// Cold: the operands rotate among copies of 96 MiB in all, so
		// that each call finds them in memory (as a model's step does,
		// whose tensors are larger than the caches).
		cp := max(1, (96<<20)/(4*(cl+al+bl)))
		fmt.Fprintf(&b, "\t\tcc, ca, cb := make([]float32, %d), make([]float32, %d), make([]float32, %d)\n", cp*cl, cp*al, cp*bl)
		b.WriteString("\t\tfor i := range ca {\n\t\t\tca[i] = a[i%len(a)]\n\t\t}\n\t\tfor i := range cb {\n\t\t\tcb[i] = bb[i%len(bb)]\n\t\t}\n\t\tfor i := range cc {\n\t\t\tcc[i] = 1\n\t\t}\n")
		fmt.Fprintf(&b, "\t\tj := 0\n\t\tcoldNS[%d] = min(coldNS[%d], best(func() {\n\t\t\tj = (j + 1) %% %d\n\t\t\t%s(&cc[j*%d], &ca[j*%d], &cb[j*%d])\n\t\t}))\n", i, i, cp, name, cl, al, bl)
		fmt.Fprintf(&b, "\t\tif round == 2 {\n\t\t\tfmt.Printf(\"%%-10s %%-78s %%9.1f us %%6.1f GFLOP/s, cold %%6.1f\\n\", %q, %q, bestNS[%d]/1e3, %d/bestNS[%d], %d/coldNS[%d])\n\t\t}\n\t}\n",
			c.name, fmt.Sprintf("%s M=%d N=%d K=%d %s", s.Kind, s.M, s.N, s.K, tier.blocking(&s)), i, s.Flops(), i, s.Flops(), i)
	}
	b.WriteString("\t}\n")
	b.WriteString("\tif bad > 0 {\n\t\tfmt.Println(bad, \"cells differ\")\n\t\tos.Exit(1)\n\t}\n}\n")
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + mustRunKernelModule(t, files, b.Bytes()))
}
