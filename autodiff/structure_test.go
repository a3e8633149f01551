package autodiff

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/internal/testutil"
	"github.com/ocannlgen/ocannlgen/loopir"
)

func backward(t *testing.T, src string) (*inference.Graph, *Gradients) {
	t.Helper()
	g := testutil.Compile(t, src)
	gr, err := Backward(g, testutil.Named(t, g, "loss"))
	if err != nil {
		t.Fatalf("Backward: %v", err)
	}
	return g, gr
}

func gradValues(t *testing.T, g *inference.Graph, gr *Gradients, s *loopir.State[float64], name string) []float64 {
	t.Helper()
	id := gr.Of(testutil.Named(t, g, name))
	if id < 0 {
		t.Fatalf("%s has no gradient", name)
	}
	return s.Values(id)
}

// TestBroadcastGradientSums checks exact gradients of broadcast operands:
// each sums the incoming gradient over the axes it was broadcast along.
func TestBroadcastGradientSums(t *testing.T) {
	g, gr := backward(t, `
input x : 2,3 = [[1; 2; 3]; [4; 5; 6]]
input b : 3 = [10; 20; 30]
input z : 2 = [1; 2]
input r : 2,3 = [[1; 0; 2]; [3; 1; -1]]
let s = z ++ "i => 0"
let y = (x + b) *. s
let loss = (y *. r) ++ "...|...->... => 0"`)
	s, err := loopir.Run[float64](gr.Program)
	if err != nil {
		t.Fatal(err)
	}
	// dL/dy = r, s = 3, x + b = [[11,22,33],[14,25,36]].
	for _, c := range []struct {
		name string
		want []float64
	}{
		{"x", []float64{3, 0, 6, 9, 3, -3}},       // r * s
		{"b", []float64{3 * 4, 3 * 1, 3 * 1}},     // s * column sums of r
		{"s", []float64{11 + 66 + 42 + 25 - 36}},  // sum of r * (x + b)
		{"z", []float64{108, 108}},                // broadcast back from the sum
		{"r", []float64{33, 66, 99, 42, 75, 108}}, // y
		{"y", []float64{1, 0, 2, 3, 1, -1}},       // r
		{"loss", []float64{1}},                    // the seed
	} {
		if got := gradValues(t, g, gr, s, c.name); !reflect.DeepEqual(got, c.want) {
			t.Errorf("d loss / d %s = %v, want %v", c.name, got, c.want)
		}
	}
	// The broadcast operand's gradient assignment reduces over the
	// iterator its forward index map omits.
	d := gr.String()
	for _, want := range []string{
		"for i0 in 0..1:  # reduction\n  for i1 in 0..2:\n    b.grad[i1] += _y.1.grad[i0, i1]\n",
		"for i0 in 0..1:  # reduction\n  for i1 in 0..2:  # reduction\n    s.grad[0] += ",
		"for i0 in 0..1:\n  z.grad[i0] += s.grad[0]\n",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("backward dump lacks %q:\n%s", want, d)
		}
	}
}

// computesOf returns the gradient assignments of forward op k, by the
// gradient tensor they write.
func computesOf(gr *Gradients, k int) map[int]*loopir.Compute {
	out := map[int]*loopir.Compute{}
	for _, a := range gr.Program.Assignments {
		if c, ok := a.(*loopir.Compute); ok && c.Op == k {
			out[c.Stores[len(c.Stores)-1].Tensor] = c
		}
	}
	return out
}

// TestBackwardReusesForwardProjections checks that the gradient
// assignments of a matmul are the forward record with its slots permuted:
// the same record (product space included), g1's LHS index is the forward
// RHS1 index, g is read at the forward LHS index and v2 at RHS2's.
func TestBackwardReusesForwardProjections(t *testing.T) {
	for _, src := range []string{`
input x : 5 | 3
input w : 3 -> 4
let y = w * x
let loss = y ++ "...|...->... => 0"`, `
input w : 4,3
input x : 3,5
let y = w +* "ij;jk=>ik" x
let loss = y ++ "...|...->... => 0"`} {
		g, gr := backward(t, src)
		y := testutil.Named(t, g, "y")
		k := g.Tensors[y].Op
		fwd := g.Ops[k].Proj
		if len(fwd.Product) != 3 {
			t.Fatalf("the forward matmul has %d factors", len(fwd.Product))
		}
		cs := computesOf(gr, k)
		if len(cs) != 2 {
			t.Fatalf("op %d has %d gradient assignments, want 2", k, len(cs))
		}
		for slot, name := range []string{"w", "x"} {
			c := cs[gr.Of(testutil.Named(t, g, name))]
			if c == nil {
				t.Fatalf("no gradient assignment for %s", name)
			}
			if c.Proj != fwd {
				t.Errorf("g%d's assignment does not reuse the forward record", slot+1)
			}
			if len(c.Proj.Product) != len(fwd.Product) {
				t.Errorf("g%d's assignment has %d factors, the forward %d", slot+1, len(c.Proj.Product), len(fwd.Product))
			}
			st := c.Stores[0]
			if !reflect.DeepEqual(st.Index, fwd.RHS[slot]) || &st.Index[0] != &fwd.RHS[slot][0] {
				t.Errorf("g%d's LHS index %v is not the forward RHS%d index %v", slot+1, st.Index, slot+1, fwd.RHS[slot])
			}
			mul, ok := st.Value.(*loopir.ProjApply)
			if !ok || mul.Prim != "mul" || len(mul.Args) != 2 {
				t.Fatalf("g%d's value is %#v", slot+1, st.Value)
			}
			// g1 = g * v2, g2 = v1 * g
			gl, vl := mul.Args[0].(*loopir.ProjLoad), mul.Args[1].(*loopir.ProjLoad)
			if slot == 1 {
				gl, vl = vl, gl
			}
			if gl.Tensor != gr.Of(y) || !reflect.DeepEqual(gl.Index, fwd.LHS) {
				t.Errorf("g%d reads g as %v at %v, want %d at the forward LHS %v", slot+1, gl.Tensor, gl.Index, gr.Of(y), fwd.LHS)
			}
			other := 1 - slot
			if vl.Tensor != g.Ops[k].RHS[other] || !reflect.DeepEqual(vl.Index, fwd.RHS[other]) {
				t.Errorf("g%d reads v%d at %v, want the forward RHS%d %v", slot+1, other+1, vl.Index, other+1, fwd.RHS[other])
			}
		}
		// The lowered nests have the forward's three loops, and each
		// gradient reduces over the one iterator its LHS map omits.
		for _, o := range gr.Backward() {
			if o.Op != k {
				continue
			}
			depth, reductions := nestDepth(o.Body)
			if depth != 3 || reductions != 1 {
				t.Errorf("%s: %d nested loops with %d reductions, want 3 and 1:\n%s", o.Desc, depth, reductions, gr.Program.DumpOps([]*loopir.Operation{o}))
			}
		}
	}
}

// nestDepth returns the depth of a perfect loop nest and how many of its
// loops no store's LHS index mentions.
func nestDepth(body []loopir.Stmt) (depth, reductions int) {
	var vars []int
	var store *loopir.Store
	for len(body) == 1 {
		switch s := body[0].(type) {
		case *loopir.For:
			vars = append(vars, s.Var)
			body = s.Body
			continue
		case *loopir.Store:
			store = s
		}
		break
	}
	if store == nil {
		return -1, -1
	}
	for _, v := range vars {
		used := false
		for _, x := range store.Index {
			for _, tm := range x.Terms {
				if tm.Var == v {
					used = true
				}
			}
		}
		if !used {
			reductions++
		}
	}
	return len(vars), reductions
}

// recorder collects a gradient check's complaints instead of failing.
type recorder struct {
	*testing.T
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestGradCheckCatchesWrongGradients corrupts correct backward programs
// and checks that the gradient check fails on them.
func TestGradCheckCatchesWrongGradients(t *testing.T) {
	for _, c := range []struct {
		gc     gcase
		mutate func(*Gradients)
	}{
		{gcase{name: "matmul, a scaled gradient", src: weighted(`
input x : 5 | 3
input w : 3 -> 4
let y = w * x`, "y")}, func(gr *Gradients) {
			st := firstStore(gr, "w.grad")
			st.Value = &loopir.Apply{Prim: "mul", Args: []loopir.Expr{st.Value, &loopir.Const{Value: 1.001}}}
		}},
		{gcase{name: "tanh, the derivative of the wrong value", src: weighted(`
input x : 3,4
let y = tanh x`, "y")}, func(gr *Gradients) {
			st := firstStore(gr, "x.grad")
			st.Value = &loopir.Apply{Prim: "mul", Args: []loopir.Expr{st.Value, &loopir.Const{Value: 0.999}}}
		}},
		{gcase{name: "max-pool, gradient to every window cell", src: weighted(`
input img : 4,4
leaf win : 2,2 = 0
let p = img @^+ "2*oh<+wh, 2*ow<+ww; wh, ww => oh, ow" win`, "p"), gens: map[string]gen{"img": distinct(-2, 2), "win": keep}},
			func(gr *Gradients) {
				st := firstStore(gr, "img.grad")
				st.Value = st.Value.(*loopir.Apply).Args[1]
			}},
	} {
		t.Run(c.gc.name, func(t *testing.T) {
			r := &recorder{T: t}
			c.gc.mutate = c.mutate
			res := gradCheckWith(r, c.gc)
			if res.fails == 0 || len(r.errs) == 0 {
				t.Errorf("the corrupted gradient passed the check (worst relative error %.2e)", res.worst)
			}
			t.Logf("caught: %d failing cells, worst relative error %.2e; first: %s", res.fails, res.worst, r.errs[0])
		})
	}
}

// firstStore finds the first store into the named tensor in the backward
// pass.
func firstStore(gr *Gradients, name string) *loopir.Store {
	id := gr.Program.Lookup(name)
	var found *loopir.Store
	var walk func(s loopir.Stmt)
	walk = func(s loopir.Stmt) {
		switch s := s.(type) {
		case *loopir.For:
			for _, c := range s.Body {
				walk(c)
			}
		case *loopir.Store:
			if s.Tensor == id && found == nil {
				found = s
			}
		}
	}
	for _, o := range gr.Backward() {
		for _, s := range o.Body {
			walk(s)
		}
	}
	if found == nil {
		panic("no store into " + name)
	}
	return found
}

func TestUnsupported(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`
input x : 3
input t : 3
t =+ t *. x
let loss = t ++ "i => 0"`, "reads its own target t; in-place updates are not differentiated"},
		{`
input x : 3
input t : 3
t =@^ x
let loss = t ++ "i => 0"`, "accumulating by max into an existing value (without `:`) is not differentiated"},
		{`
input x : 3
input t : 3
t =* x
let loss = t ++ "i => 0"`, `accumulating by "mul" is not differentiated`},
		{`
input x : 3,4
{t} =: x ~logic:"ij => i"
let loss = t ++ "i => 0"`, "an overwrite (`=:`) through a non-injective projection keeps the last write"},
		{`
input x : 3
let loss = x *. 2`, "the loss loss must have a single cell, its shape 3 has 3"},
	} {
		g := testutil.Compile(t, c.src)
		_, err := Backward(g, testutil.Named(t, g, "loss"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	g := testutil.Compile(t, "let loss = 1 + 2\n")
	if _, err := Backward(g, g.Tensors[0].ID); err == nil || !strings.Contains(err.Error(), "is a constant") {
		t.Errorf("err = %v", err)
	}
	if _, err := Backward(g, 99); err == nil {
		t.Errorf("no error for a missing loss")
	}
	g = testutil.Compile(t, "input x : 3\nlet loss = x ++ \"i => 0\"\n")
	g.Ops[0].Proj = nil
	if _, err := Backward(g, testutil.Named(t, g, "loss")); err == nil || !strings.Contains(err.Error(), "DeriveProjections") {
		t.Errorf("err = %v", err)
	}
}

// TestWhichTensorsGetGradients checks the dependency analysis.
func TestWhichTensorsGetGradients(t *testing.T) {
	g, gr := backward(t, `
input x : 3
input unused : 3
input c : 3
let other = unused *. 2
let y = where (c < x) (x *. 3) (x + 1)
let loss = y ++ "i => 0"`)
	has := map[string]bool{}
	for _, id := range gr.Tensors() {
		has[g.Tensors[id].Name] = true
	}
	for name, want := range map[string]bool{"x": true, "y": true, "loss": true, "unused": false, "other": false, "c": false} {
		if has[name] != want {
			t.Errorf("%s has a gradient: %v, want %v", name, has[name], want)
		}
	}
	for _, tn := range g.Tensors {
		if tn.Kind == inference.Number && gr.Of(tn.ID) >= 0 {
			t.Errorf("number %s has a gradient", tn.Name)
		}
	}
	if gr.Of(-1) != -1 || gr.Of(len(g.Tensors)) != -1 {
		t.Errorf("Of out of range is not -1")
	}
	if n := gr.Names(); n["x.grad"] != testutil.Named(t, g, "x") {
		t.Errorf("Names: %v", n)
	}
}

// TestDump pins the backward pass of a small program.
func TestDump(t *testing.T) {
	_, gr := backward(t, `
input x : 2,3
input w : 3
let y = tanh (x +* "ij;j=>i" w)
let loss = (y *. y) ++ "i => 0"`)
	want := `# zero the gradients
fill x.grad with 0
fill w.grad with 0
fill _y.1.grad with 0
fill y.grad with 0
fill _loss.1.grad with 0
fill loss.grad with 0

# loss.grad = 1
loss.grad[0] = 1

# backprop of op 3 (loss = einsum "++" "i => 0" of _loss.1): g1 =+ g; g1 is _loss.1.grad
for i0 in 0..1:
  _loss.1.grad[i0] += loss.grad[0]

# backprop of op 2 (_loss.1 = pointwise "*." of y, y): g1 =+ g * v2; g1 is y.grad
for i0 in 0..1:
  y.grad[i0] += _loss.1.grad[i0] * y[i0]

# backprop of op 2 (_loss.1 = pointwise "*." of y, y): g2 =+ v1 * g; g2 is y.grad
for i0 in 0..1:
  y.grad[i0] += y[i0] * _loss.1.grad[i0]

# backprop of op 1 (y = pointwise tanh of _y.1): g1 =+ g * (1 - (t * t)); g1 is _y.1.grad
for i0 in 0..1:
  _y.1.grad[i0] += y.grad[i0] * (1 - (y[i0] * y[i0]))

# backprop of op 0 (_y.1 = einsum "+*" "ij;j=>i" of x, w): g1 =+ g * v2; g1 is x.grad
for i0 in 0..1:
  for i1 in 0..2:
    x.grad[i0, i1] += _y.1.grad[i0] * w[i1]

# backprop of op 0 (_y.1 = einsum "+*" "ij;j=>i" of x, w): g2 =+ v1 * g; g2 is w.grad
for i0 in 0..1:  # reduction
  for i1 in 0..2:
    w.grad[i1] += x[i0, i1] * _y.1.grad[i0]
`
	if got := gr.String(); got != want {
		t.Errorf("dump:\n%s\nwant:\n%s", got, want)
	}
	var b strings.Builder
	gr.Dump(&b)
	if b.String() != want {
		t.Errorf("Dump differs from String")
	}
}

// TestSnapshots checks that a value a gradient needs is saved before a
// later assignment modifies it, and that the reset of an overwritten
// tensor stops its gradient.
func TestSnapshots(t *testing.T) {
	g, gr := backward(t, `
input t : 3 = [1; 2; 3]
input v : 3 = [5; 6; 7]
let u = t *. t
t =: v *. v
let loss = (u + t) ++ "i => 0"`)
	d := gr.Program.String()
	for _, want := range []string{
		"# snapshot t@0 = t as of op 0 (op 1 modifies t later)\n",
		"t.grad[i0] += u.grad[i0] * t@0[i0]",
		"# backprop of op 1 (t = assignment t =: ~logic:\".\" of v, v): t.grad = 0 (the operation overwrites t)\nfill t.grad with 0\n",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("program lacks %q:\n%s", want, d)
		}
	}
	s, err := loopir.Run[float64](gr.Program)
	if err != nil {
		t.Fatal(err)
	}
	if got := gradValues(t, g, gr, s, "t"); !reflect.DeepEqual(got, []float64{2, 4, 6}) {
		t.Errorf("d loss / d t = %v, want 2t = [2 4 6]", got)
	}
	if got := gradValues(t, g, gr, s, "v"); !reflect.DeepEqual(got, []float64{10, 12, 14}) {
		t.Errorf("d loss / d v = %v, want 2v", got)
	}
}

// TestFloat32Tropical runs a max-pool's backward pass in float32: the
// argmax test compares the stored maximum with the point's value rounded
// the same way, so the gradient still reaches the winners.
func TestFloat32Tropical(t *testing.T) {
	g, gr := backward(t, `
input x : 8 = [0.1; 0.7; 0.3; 0.9; 0.45; 0.2; 0.65; 0.15]
input w : 3 = [0.013; 0.37; 0.011]
let p = x @^+ "o<+k; k => o" w
let loss = p ++ "i => 0"`)
	s64, err := loopir.Run[float64](gr.Program)
	if err != nil {
		t.Fatal(err)
	}
	s32, err := loopir.Run[float32](gr.Program)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x", "w"} {
		a, b := gradValues(t, g, gr, s64, name), s32.Values(gr.Of(testutil.Named(t, g, name)))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("d loss / d %s: float64 %v, float32 %v", name, a, b)
		}
		sum := 0.0
		for _, v := range a {
			sum += v
		}
		if math.Abs(sum-6) > 0 {
			t.Errorf("d loss / d %s sums to %v, want one winner per output (6)", name, sum)
		}
	}
}

// TestBackwardParams: only tensors a parameter influences get gradients.
func TestBackwardParams(t *testing.T) {
	g := testutil.Compile(t, `
input x : 4 | 3
input y : 4 | 2
let xs = x *. 2
let d = ({w} * xs) - y
let loss = (d *. d) ++ "...|... => 0"
`)
	loss := testutil.Named(t, g, "loss")
	gr, err := BackwardParams(g, loss)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x", "y", "xs"} {
		if gr.Of(testutil.Named(t, g, name)) >= 0 {
			t.Errorf("%s has a gradient", name)
		}
	}
	for _, name := range []string{"w", "d", "loss"} {
		if gr.Of(testutil.Named(t, g, name)) < 0 {
			t.Errorf("%s has no gradient", name)
		}
	}
	full, err := Backward(g, loss)
	if err != nil {
		t.Fatal(err)
	}
	if full.Of(testutil.Named(t, g, "x")) < 0 {
		t.Error("Backward: x has no gradient")
	}
}

// TestBackwardParamsNoParameter: a loss computed from data alone has no
// gradient to train with: BackwardParams says so (ErrNoParameter)
// instead of building a backward pass, even when a parameter is used
// next to it or only through a comparison; Backward still works.
func TestBackwardParamsNoParameter(t *testing.T) {
	for _, src := range []string{
		"input x : 32 | 2\nlet loss = (x *. x) ++ \"...|... => 0\"\n",
		"input x : 4 | 2\nlet y = {w; o=[3]} * x\nlet loss = (x *. x) ++ \"...|... => 0\"\n",
		"input x : 4 | 2\nlet loss = (x < {w; o=[2]}) ++ \"...|... => 0\"\n",
	} {
		g := testutil.Compile(t, src)
		loss := testutil.Named(t, g, "loss")
		_, err := BackwardParams(g, loss)
		if !errors.Is(err, ErrNoParameter) || !strings.Contains(err.Error(), "the loss loss depends on no parameter") {
			t.Errorf("%q: BackwardParams: %v, want ErrNoParameter", src, err)
		}
		if _, err := Backward(g, loss); err != nil {
			t.Errorf("%q: Backward: %v", src, err)
		}
	}
}
