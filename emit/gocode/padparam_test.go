package gocode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/autodiff"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// A loss over padded convolutions and a padded max pool that read the
// kernel's input x directly, for the backward kernels below.
const padParamLossSrc = `
input x : 2 | 6, 5, 2
input k2 : 3, 3, 2 -> 3
leaf win : 3, 3 = 0
let y = x +* "... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." k2
let s = x +* "... | 2*oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc.." k2
let m = x @^+ "... | oh=+wh, ow=+ww, ..c..; wh, ww => ... | oh, ow, ..c.." win
let l = ((y *. y) ++ "...|... => 0") + ((s *. s) ++ "...|... => 0") + (m ++ "...|... => 0")`

// buildBackward compiles c's program, differentiates the tensor named
// loss (the gradients of graph tensors named in grads become output
// parameters named g<name>, after c's parameters) and runs the
// interpreter on the backward program.
func buildBackward(t *testing.T, c ecase, loss string, grads []string) *built {
	t.Helper()
	b := prepareBackward(t, c, loss, grads)
	b.interpret(t)
	return b
}

// prepareBackward is buildBackward without the interpreter (b.want stays
// nil until b.interpret).
func prepareBackward(t *testing.T, c ecase, loss string, grads []string) *built {
	t.Helper()
	r := testutil.KeyedRand(c.kernel, 7)
	g := testutil.Compile(t, c.src)
	b := &built{c: c}
	b.bindParams(t, g, r)
	gr, err := autodiff.Backward(g, testutil.Named(t, g, loss))
	if err != nil {
		t.Fatalf("backward: %v", err)
	}
	b.p = gr.Program
	for _, n := range grads {
		gt := gr.Of(testutil.Named(t, g, n))
		if gt < 0 {
			t.Fatalf("no gradient of %s", n)
		}
		b.c.params = append(b.c.params, pspec{name: "g" + n, kind: desc.PtrArray, out: true})
		b.tensor = append(b.tensor, gt)
		vals := make([]float64, b.p.Tensors[gt].Size())
		for i := range vals {
			vals[i] = garbage
		}
		b.data = append(b.data, vals)
	}
	b.k = &desc.Kernel{Name: c.kernel, Elem: c.elem, Prog: b.p, Doc: []string{"test kernel " + c.kernel}}
	for i, ps := range b.c.params {
		b.k.Params = append(b.k.Params, desc.Param{Name: ps.goName(), Kind: ps.kind, Tensor: b.tensor[i], Output: ps.out})
	}
	return b
}

// TestGeneratedPaddedBackward runs forward+backward kernels whose padded
// input parameter is read by the forward convolutions and pool and by
// the gradient of the convolution kernel, and whose padded gradient of x
// is an output parameter, against the interpreter.
func TestGeneratedPaddedBackward(t *testing.T) {
	bs := []*built{
		buildBackward(t, ecase{"PadBackward32", "float32", padParamLossSrc, []pspec{pa("x"), pa("k2"), out(pa("l"))}}, "l", []string{"k2", "x"}),
		buildBackward(t, ecase{"PadBackward64S", "float64", padParamLossSrc, []pspec{sl("x"), sl("k2"), out(sl("l"))}}, "l", []string{"k2", "x"}),
	}
	var ks []*desc.Kernel
	for _, b := range bs {
		ks = append(ks, b.k)
	}
	src, err := Render(&desc.File{Package: "main", Kernels: ks}, Options{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	for _, b := range bs {
		fn := funcText(t, string(src), b.c.kernel)
		if !strings.Contains(fn, "var xPad [2][9][8][2]") || strings.Count(fn, "copy(xPad") != 1 {
			t.Errorf("%s: no padded copy of x:\n%s", b.c.kernel, fn)
		}
		if !strings.Contains(fn, "var gxPad [2][9][8][2]") || strings.Count(fn, "copy(gx") != 1 || strings.Contains(fn, "copy(gxPad") {
			t.Errorf("%s: no copy out of x's gradient:\n%s", b.c.kernel, fn)
		}
	}
	var h strings.Builder
	h.WriteString(harnessHead)
	h.WriteString("func main() {\n")
	for _, b := range bs {
		harnessCall(&h, b)
	}
	h.WriteString("}\n")
	got := runVetModule(t, src, h.String())
	for _, b := range bs {
		tol := tolerance(b.c.elem)
		for i, ps := range b.c.params {
			if !ps.out {
				continue
			}
			g, want := got[b.c.kernel+" "+ps.name], b.want[i]
			if len(g) != len(want) {
				t.Fatalf("%s %s: got %d values, want %d", b.c.kernel, ps.name, len(g), len(want))
			}
			for j := range want {
				if !testutil.CloseRel(g[j], want[j], tol) {
					t.Errorf("%s %s[%d] = %v, interpreter %v", b.c.kernel, ps.name, j, g[j], want[j])
					break
				}
			}
			if fmt.Sprint(want) == fmt.Sprint(make([]float64, len(want))) {
				t.Errorf("%s %s: all zeros (the test checks nothing)", b.c.kernel, ps.name)
			}
		}
	}
}
