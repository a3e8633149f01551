package asm

import (
	"bytes"
	"fmt"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"testing"
)

// TestMVecRule measures the AVX2 m-vector kernel of a 3x3 one-channel
// convolution's kernel gradient (dW[oc][kh][kw] += g[b][oh][ow][oc] *
// x[b][oh+kh][ow+kw], one call) against the broadcast kernel the
// classifier chose before (n = kw, the batch as k, called in Go loops
// over oh, ow and kh), for docs/design.md. It runs only when
// OCANNLGEN_MEASURE_MVEC is set and prints, per shape, ns per nest of
// each (the best of 7 rounds); it fails when the results differ.
func TestMVecRule(t *testing.T) {
	measureGate(t, "OCANNLGEN_MEASURE_MVEC")
	type shape struct {
		elem        string
		oc, b, h, w int
	}
	var shapes []shape
	for _, elem := range []string{"float32", "float64"} {
		for _, oc := range []int{4, 8} {
			for _, b := range []int{32, 64, 256} {
				for _, hw := range []int{4, 10} {
					if elem == "float64" && oc > 4 || 6*oc*b < target.AVX2().Kernels.MinFlops {
						continue
					}
					shapes = append(shapes, shape{elem, oc, b, hw, hw})
				}
			}
		}
	}
	set := NewSet(target.AVX2())
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc best(f func()) float64 {\n\tb := 1e18\n\tn := 1\n\tfor {\n\t\tt := time.Now()\n\t\tfor range n {\n\t\t\tf()\n\t\t}\n\t\tif time.Since(t) > 2*time.Millisecond {\n\t\t\tbreak\n\t\t}\n\t\tn *= 2\n\t}\n\tfor range 7 {\n\t\tt := time.Now()\n\t\tfor range n {\n\t\t\tf()\n\t\t}\n\t\tb = min(b, float64(time.Since(t).Nanoseconds())/float64(n))\n\t}\n\treturn b\n}\n\nfunc main() {\n\tbad := 0\n")
	for _, s := range shapes {
		iw := s.w + 2
		plane := (s.h + 2) * iw
		old := Spec{Elem: s.elem, Kind: Broadcast, M: s.oc, N: 3, K: s.b, CM: 9, CN: 1, AM: 1, AK: s.h * s.w * s.oc, BK: plane, BN: 1}
		mv := Spec{Elem: s.elem, Kind: MVec, M: s.oc, CM: 9, AM: 1, N: 3, CN: 3, BN: iw, N2: 3, CN2: 1, BN2: 1,
			K: s.w, AK: s.oc, BK: 1, K2: s.h, AK2: s.w * s.oc, BK2: iw, K3: s.b, AK3: s.h * s.w * s.oc, BK3: plane}
		on, mn := set.Name(set.Add(old), AVX2()), set.Name(set.Add(mv), AVX2())
		fmt.Fprintf(&b, "\t{\n\t\tg, x := make([]%[1]s, %[2]d), make([]%[1]s, %[3]d)\n\t\tc1, c2 := make([]%[1]s, %[4]d), make([]%[1]s, %[4]d)\n", s.elem, s.b*s.h*s.w*s.oc, s.b*plane, 9*s.oc)
		fmt.Fprintf(&b, "\t\tfor i := range g {\n\t\t\tg[i] = %[1]s(i%%13) / 8\n\t\t}\n\t\tfor i := range x {\n\t\t\tx[i] = %[1]s(i%%7) / 4\n\t\t}\n", s.elem)
		fmt.Fprintf(&b, "\t\told := func() {\n\t\t\tfor oh := range %d {\n\t\t\t\tfor ow := range %d {\n\t\t\t\t\tfor kh := range 3 {\n\t\t\t\t\t\t%s(&c1[kh*3], &g[(oh*%d+ow)*%d], &x[(oh+kh)*%d+ow])\n\t\t\t\t\t}\n\t\t\t\t}\n\t\t\t}\n\t\t}\n", s.h, s.w, on, s.w, s.oc, iw)
		fmt.Fprintf(&b, "\t\tnew := func() { %s(&c2[0], &g[0], &x[0]) }\n\t\told()\n\t\tnew()\n", mn)
		b.WriteString("\t\tfor i := range c1 {\n\t\t\tif math.Abs(float64(c1[i]-c2[i])) > 1e-3*(1+math.Abs(float64(c1[i]))) {\n\t\t\t\tbad++\n\t\t\t}\n\t\t}\n")
		fmt.Fprintf(&b, "\t\to, n := best(old), best(new)\n\t\tfmt.Printf(\"%%-8s oc=%%-2d batch=%%-3d out=%%dx%%d  broadcast %%9.0f ns  m-vector %%8.0f ns  %%.1fx\\n\", %q, %d, %d, %d, %d, o, n, o/n)\n\t}\n", s.elem, s.oc, s.b, s.h, s.w)
	}
	b.WriteString("\tif bad > 0 {\n\t\tfmt.Println(bad, \"cells differ\")\n\t\tos.Exit(1)\n\t}\n}\n")
	files, err := set.Files("main")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + mustRunKernelModule(t, files, b.Bytes()))
}
