package gocode

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/ops"
)

// primSource applies a pointwise primitive of p's arity to inputs a0..
// of n cells; the test then puts p itself in the operation, so that every
// primitive is tested whatever the language's spelling of it.
func primSource(p *ops.Prim, n int) string {
	var b strings.Builder
	for i := range p.Arity {
		fmt.Fprintf(&b, "input a%d : %d\n", i, n)
	}
	b.WriteString([...]string{1: "let o = id a0\n", 2: "let o = a0 + a1\n", 3: "let o = fma a0 a1 a2\n"}[p.Arity])
	return b.String()
}

// round is v as the kernel's element type holds it.
func round(elem string, v float64) float64 {
	if elem == "float32" {
		return float64(float32(v))
	}
	return v
}

// recipeCase binds the named tensors of src to the kernel's parameters,
// leaves getting the values draw gives them; a non-empty prim replaces
// the primitive of the operation writing o.
func recipeCase(t *testing.T, kernel, elem, src string, prim ops.PrimName, params []pspec, draw func(name string, n int) []float64) *built {
	t.Helper()
	b := &built{c: ecase{kernel: kernel, elem: elem, src: src, params: params}}
	_, p := compileProgram(t, src, func(g *inference.Graph) {
		if prim != "" {
			g.Ops[g.Tensors[testutil.Named(t, g, "o")].Op].Prim = prim
		}
		for _, ps := range params {
			id := testutil.Named(t, g, ps.name)
			tn := g.Tensors[id]
			vals := make([]float64, tn.Shape.Size())
			if isLeaf(tn.Kind) {
				vals = draw(ps.name, len(vals))
				for i := range vals {
					vals[i] = round(elem, vals[i])
				}
				tn.Init = inference.TensorInit{Kind: inference.InitValues, Values: vals}
			} else {
				for i := range vals {
					vals[i] = garbage
				}
			}
			b.tensor = append(b.tensor, id)
			b.data = append(b.data, vals)
		}
	})
	b.p = p
	b.k = &desc.Kernel{Name: kernel, Elem: elem, Prog: p, Doc: []string{"test kernel " + kernel}}
	for i, ps := range params {
		b.k.Params = append(b.k.Params, desc.Param{Name: ps.goName(), Kind: ps.kind, Tensor: b.tensor[i], Output: ps.out})
	}
	return b
}

// TestRecipesMatchEval generates, for every primitive and accumulator of
// the op table and both element types, a kernel applying it, runs the
// kernels on random inputs from the table's domains and compares their
// outputs with the table's Eval and Combine (the interpreter's
// definitions). A primitive or accumulator without a working Go recipe
// fails here.
func TestRecipesMatchEval(t *testing.T) {
	const n = 16
	var bs []*built
	f := &desc.File{Package: "main", Sources: []string{"recipe_test.go"}}
	for _, elem := range []string{"float32", "float64"} {
		for _, p := range ops.Prims() {
			r := testutil.KeyedRand(string(p.Name)+elem, 11)
			var params []pspec
			for i := range p.Arity {
				params = append(params, pa(fmt.Sprintf("a%d", i)))
			}
			b := recipeCase(t, "Prim_"+string(p.Name)+"_"+elem, elem, primSource(p, n), p.Name, append(params, out(pa("o"))),
				func(name string, k int) []float64 {
					d := p.Domain(int(name[1] - '0'))
					vals := make([]float64, k)
					for i := range vals {
						vals[i] = d.Draw(r)
					}
					return vals
				})
			var a [3]float64
			want := make([]float64, n)
			for j := range want {
				for i := range p.Arity {
					a[i] = b.data[i][j]
				}
				want[j] = round(elem, p.Eval(&a))
			}
			b.want = append(make([][]float64, p.Arity), want)
			bs = append(bs, b)
		}
		for _, a := range ops.Accums() {
			bs = append(bs, accumCase(t, a, elem))
		}
	}
	for _, b := range bs {
		f.Kernels = append(f.Kernels, b.k)
	}
	src, err := Render(f, Options{})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var h strings.Builder
	h.WriteString(harnessHead + "func main() {\n")
	for _, b := range bs {
		harnessCall(&h, b)
	}
	h.WriteString("}\n")
	got := runVetModule(t, src, h.String())
	for _, b := range bs {
		for i, ps := range b.c.params {
			if !ps.out {
				continue
			}
			g, want := got[b.c.kernel+" "+ps.name], b.want[i]
			if len(g) != len(want) {
				t.Errorf("%s %s: %d values, want %d", b.c.kernel, ps.name, len(g), len(want))
				continue
			}
			for j := range want {
				if !(testutil.CloseRel(g[j], want[j], tolerance(b.c.elem)) || math.IsNaN(g[j]) && math.IsNaN(want[j])) {
					t.Errorf("%s %s[%d] = %v, want %v (inputs %v)", b.c.kernel, ps.name, j, g[j], want[j], b.data)
					break
				}
			}
		}
	}
}

// accumCase reduces a 4x4 input into r with accumulator a from its
// neutral element (`=:`) and accumulates it into the existing t (`=`).
func accumCase(t *testing.T, a *ops.Accum, elem string) *built {
	src := fmt.Sprintf("input x : 4,4\ninput t : 4,4\n{r} =:%s x ~logic:\"ij=>i\"\nt =%s x\n", a.Symbol, a.Symbol)
	r := testutil.KeyedRand(string(a.Name)+elem, 13)
	b := recipeCase(t, "Accum_"+string(a.Name)+"_"+elem, elem, src, "", []pspec{pa("x"), out(pa("t")), out(pa("r"))},
		func(string, int) []float64 {
			vals := make([]float64, 16)
			for i := range vals {
				vals[i] = 0.5 + r.Float64()
			}
			return vals
		})
	x, t0 := b.data[0], b.data[1]
	wantT := make([]float64, 16)
	wantR := make([]float64, 4)
	for i := range 4 {
		acc := a.Neutral
		for j := range 4 {
			acc = round(elem, a.Combine(acc, x[4*i+j]))
			wantT[4*i+j] = round(elem, a.Combine(t0[4*i+j], x[4*i+j]))
		}
		wantR[i] = acc
	}
	b.want = [][]float64{nil, wantT, wantR}
	return b
}
