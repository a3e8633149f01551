package gocode

import (
	"github.com/ocannlgen/ocannlgen/emit/target"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
)

// TestReduceDispatch: a reduction nest becomes a call of an AVX2
// reduction kernel under `if ocannlAVX2`, with no AVX-512 branch (the
// kernels exist in the AVX2 tier only) and the Go loops in the else
// branch; without the AVX2 tier in the set it stays Go loops.
func TestReduceDispatch(t *testing.T) {
	for _, name := range []string{"MaxRows", "SumCols"} {
		t.Run(name, func(t *testing.T) {
			b := build(t, caseNamed(t, name))
			set := asm.NewSet(asm.Tiers()...)
			out, err := Render(&desc.File{Package: "kern", Sources: []string{"model.go"}, Kernels: []*desc.Kernel{b.k}}, Options{Asm: set})
			if err != nil {
				t.Fatal(err)
			}
			fn := funcText(t, string(out), name)
			i, j := strings.Index(fn, "if ocannlAVX2 {"), strings.Index(fn, "ocannlReduce0AVX2(")
			if i < 0 || j < i || !strings.Contains(fn[j:], "} else {") || strings.Contains(fn, "ocannlAVX512") || !strings.Contains(fn, "reduction kernel") {
				t.Fatalf("want `if ocannlAVX2 { ocannlReduce0AVX2(...) } else { loops }` and no AVX-512 branch:\n%s", fn)
			}
			if set.Len() != 1 {
				t.Errorf("the set has %d kernels, want 1", set.Len())
			}
			out, err = Render(&desc.File{Package: "kern", Sources: []string{"model.go"}, Kernels: []*desc.Kernel{b.k}}, Options{Asm: asm.NewSet(target.AVX512())})
			if err != nil {
				t.Fatal(err)
			}
			if fn := funcText(t, string(out), name); strings.Contains(fn, "ocannlReduce") || strings.Contains(fn, "if ocannl") {
				t.Fatalf("an AVX-512-only set got a reduction kernel:\n%s", fn)
			}
		})
	}
}
