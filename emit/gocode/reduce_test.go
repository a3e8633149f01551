package gocode

import (
	"github.com/ocannlgen/ocannlgen/emit/target"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
)

// TestReduceDispatch: a reduction nest becomes a call of the AVX-512
// reduction kernel under `if ocannlAVX512`, of the AVX2 one under `else
// if ocannlAVX2`, and the Go loops in the else branch; with the AVX-512
// tier alone in the set, only its branch.
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
			w, w2 := strings.Index(fn, "if ocannlAVX512 {"), strings.Index(fn, "ocannlReduce0AVX512(")
			i, j := strings.Index(fn, "} else if ocannlAVX2 {"), strings.Index(fn, "ocannlReduce0AVX2(")
			if w < 0 || w2 < w || i < w2 || j < i || !strings.Contains(fn[j:], "} else {") || !strings.Contains(fn, "reduction kernel") || !strings.Contains(fn, "): AVX512, AVX2.") {
				t.Fatalf("want `if ocannlAVX512 { ocannlReduce0AVX512(...) } else if ocannlAVX2 { ocannlReduce0AVX2(...) } else { loops }`:\n%s", fn)
			}
			if set.Len() != 1 {
				t.Errorf("the set has %d kernels, want 1", set.Len())
			}
			out, err = Render(&desc.File{Package: "kern", Sources: []string{"model.go"}, Kernels: []*desc.Kernel{b.k}}, Options{Asm: asm.NewSet(target.AVX512())})
			if err != nil {
				t.Fatal(err)
			}
			if fn := funcText(t, string(out), name); !strings.Contains(fn, "if ocannlAVX512 {") || strings.Contains(fn, "ocannlAVX2") || !strings.Contains(fn, "ocannlReduce0AVX512(") {
				t.Fatalf("an AVX-512-only set: want `if ocannlAVX512 { ocannlReduce0AVX512(...) } else { loops }`:\n%s", fn)
			}
		})
	}
}
