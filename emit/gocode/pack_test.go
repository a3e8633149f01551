package gocode

import (
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// TestPackedContraction: products whose reduction axis is contiguous in
// neither operand (both transposed, and batched forms) copy one operand
// packed, or both, and run a contraction kernel, serially and in parts, in float32
// and float64, in both tiers against the interpreter; a product too small
// for packing stays in Go loops.
func TestPackedContraction(t *testing.T) {
	skipAsmModule(t)
	var bs []*built
	for _, c := range []ecase{
		{"PackTT32", "float32", "input a : 48, 64\ninput b : 40, 48\nlet c = a +* \"j,i; k,j => i,k\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
		{"PackTT64", "float64", "input a : 48, 64\ninput b : 40, 48\nlet c = a +* \"j,i; k,j => i,k\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
		{"PackTTBig", "float32", "input a : 96, 512\ninput b : 256, 96\nlet c = a +* \"j,i; k,j => i,k\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
		{"PackBatched", "float32", "input a : 4, 32, 64\ninput b : 4, 48, 32\nlet c = a +* \"n,j,i; n,k,j => n,i,k\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
		{"PackBoth", "float32", "input a : 48, 64, 4\ninput b : 64, 40, 4\nlet c = a +* \"i,j,n; j,k,n => n,i,k\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
		{"PackBoth64", "float64", "input a : 64, 4, 48\ninput b : 40, 64, 4\nlet c = a +* \"j,n,i; k,j,n => k,i,n\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
		{"PackSmall", "float32", "input a : 8, 8\ninput b : 8, 8\nlet c = a +* \"j,i; k,j => i,k\" b", []pspec{pa("a"), pa("b"), out(pa("c"))}},
	} {
		b := prepare(t, c)
		if c.kernel != "PackSmall" {
			b = withScratch(b, c.kernel+"S", 0)
		}
		bs = append(bs, b)
	}
	set := asm.NewSet(asm.Tiers()...)
	var kns []*desc.Kernel
	for _, b := range bs {
		kns = append(kns, b.k)
	}
	gen, err := Render(&desc.File{Package: "main", Kernels: kns}, Options{Asm: set, Parallel: true})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	for _, b := range bs {
		small := b.k.Name == "PackSmall"
		fn := funcText(t, string(gen), b.k.Name)
		if strings.Contains(fn, "a.packed = a packed") == small {
			t.Errorf("%s: packed %v:\n%s", b.k.Name, !small, fn)
		}
		if both := strings.HasPrefix(b.k.Name, "PackBoth"); strings.Contains(fn, "b.packed = b packed") != both {
			t.Errorf("%s: both operands packed %v:\n%s", b.k.Name, both, fn)
		}
		s, err := Schedule(b.k, Options{Asm: set, Parallel: true})
		if err != nil {
			t.Fatal(err)
		}
		last := s.Nests[len(s.Nests)-1]
		if (last.Kernel.Family == schedule.Contraction) == small {
			t.Errorf("%s: the product runs in %v:\n%s", b.k.Name, last.Kernel.Family, s)
		}
	}
	testutil.EndToEnd(t) // the module build and run: the checks of the code above run by default
	runTiers(t, gen, set, bs)
}
