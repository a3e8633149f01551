package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// torchFlattenModel is the CNN of testdata/torchflatten/make.py on NHWC
// images (ocannlgen's `batch | h, w, c`): conv2d, relu, flatten, linear.
const torchFlattenModel = `
let c1 = conv2d[3]
let fc = linear[4]
loss train:
    input x : 2 | 4, 5, 2
    input y : 2 | 4
    let d = fc(flatten(relu(c1(x)))) - y
    return (d *. d) ++ "...|... => 0"
entry predict:
    input x : 2 | 4, 5, 2
    return fc(flatten(relu(c1(x))))
`

// TestTorchFlatten: a model whose conv2d feeds flatten and a linear layer
// loads the state_dict of the PyTorch CNN that computes the same with
// x.flatten(1) on NCHW images (Layout LayoutPyTorch for the conv kernel,
// rt.TorchFlattenLinear for the linear weight, which the layout alone
// refuses as ambiguous), and gives PyTorch's
// logits, loss and every parameter gradient (PyTorch's own float64
// autograd) to 1e-9 relative, run by the reference interpreter in float64.
// The gradients are compared in PyTorch's layout by index arithmetic
// written here, independently of the View: fc.w's input index is
// h*W*C + w*C + c, PyTorch's c*H*W + h*W + w.
func TestTorchFlatten(t *testing.T) {
	const H, W, C, IC, O = 4, 5, 3, 2, 4
	state, err := os.ReadFile("testdata/torchflatten/torchflatten.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/torchflatten/torchflatten.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		X      []float64 `json:"x_nhwc"`
		Y      []float64
		Logits []float64
		Loss   float64
		Grads  map[string][]float64
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.X) != 2*H*W*IC || len(fx.Y) != 2*O || len(fx.Logits) != 2*O {
		t.Fatalf("fixture sizes: x %d, y %d, logits %d", len(fx.X), len(fx.Y), len(fx.Logits))
	}
	prog, err := program.Parse(torchFlattenModel)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Kernels) != 2 || c.Kernels[0].Err != nil || c.Kernels[1].Err != nil {
		t.Fatalf("kernels: %+v", c.Kernels)
	}
	train, predict := c.Kernels[0].Kernel, c.Kernels[1].Kernel
	g := train.Graph
	names := map[string]string{"c1.kernel": "conv1.weight", "c1.bias": "conv1.bias", "fc.w": "fc.weight", "fc.b": "fc.bias"}
	shapes := map[string]string{"c1.kernel": "3,3,2 -> 3", "c1.bias": "3", "fc.w": "60 -> 4", "fc.b": "4"}
	var ts []rt.Tensor
	for _, n := range []string{"c1.kernel", "c1.bias", "fc.w", "fc.b"} {
		sh := g.Tensors[Tensor(g, n)].Shape
		if sh.String() != shapes[n] {
			t.Fatalf("%s : %s, want %s", n, sh, shapes[n])
		}
		var dims []int
		for _, d := range sh.Dims() {
			dims = append(dims, d.Size)
		}
		ts = append(ts, rt.Tensor{Name: n, Dims: dims, Data64: make([]float64, sh.Size())})
	}
	// The roles generated ParamTensors give: c1.kernel a conv kernel,
	// fc.w a linear weight after a flatten of 4, 5, 3.
	roles := c.ParamRoles()
	if r := roles["fc.w"]; r.Kind != RoleLinearWeight || !slices.Equal(r.Flattened, []int{H, W, C}) {
		t.Fatalf("fc.w: role %v, Flattened %v", r.Kind, r.Flattened)
	}
	ts[0].Role, ts[0].Spatial = rt.RoleConvKernel, roles["c1.kernel"].Spatial
	ts[2].Role, ts[2].Flattened = rt.RoleLinearWeight, roles["fc.w"].Flattened
	// PyTorch's layout alone leaves fc.w's order open: refused.
	if err := rt.LoadSafetensors(bytes.NewReader(state), ts, &rt.SafetensorsOptions{Names: names, Layout: rt.LayoutPyTorch}); !errors.Is(err, rt.ErrAmbiguousLayout) {
		t.Errorf("LayoutPyTorch without a View: got %v, want rt.ErrAmbiguousLayout", err)
	}
	opt := &rt.SafetensorsOptions{Names: names, Layout: rt.LayoutPyTorch, Views: map[string]rt.View{"fc.w": rt.TorchFlattenLinear(C, H, W)}}
	if err := rt.LoadSafetensors(bytes.NewReader(state), ts, opt); err != nil {
		t.Fatal(err)
	}
	inputs := func(g2 map[string]int, withY bool) map[int][]float64 {
		in := map[int][]float64{g2["x"]: fx.X}
		if withY {
			in[g2["y"]] = fx.Y
		}
		for _, p := range ts {
			in[g2[p.Name]] = p.Data64
		}
		return in
	}
	ids := func(names ...string) map[string]int {
		m := map[string]int{}
		for _, n := range names {
			m[n] = Tensor(g, n)
		}
		return m
	}
	worst, cells := 0.0, 0
	near := func(what string, got, want float64) {
		t.Helper()
		worst = math.Max(worst, math.Abs(got-want)/math.Max(1e-3, math.Abs(want)))
		cells++
		if math.Abs(got-want) > 1e-9*math.Max(1e-3, math.Abs(want)) {
			t.Errorf("%s = %.17g, PyTorch %.17g", what, got, want)
		}
	}

	// Forward: the logits.
	pg := predict.Graph
	pids := map[string]int{}
	for _, n := range []string{"x", "c1.kernel", "c1.bias", "fc.w", "fc.b"} {
		pids[n] = Tensor(pg, n)
	}
	ps, err := loopir.RunWith[float64](predict.Loops, inputs(pids, false))
	if err != nil {
		t.Fatal(err)
	}
	out := pg.Ops[len(pg.Ops)-1].LHS
	logits := ps.Values(out)
	if len(logits) != len(fx.Logits) {
		t.Fatalf("%d logits, PyTorch %d", len(logits), len(fx.Logits))
	}
	for i := range logits {
		near("logits["+strconv.Itoa(i)+"]", logits[i], fx.Logits[i])
	}

	// Loss and gradients.
	gr := train.Gradients
	tids := ids("x", "y", "c1.kernel", "c1.bias", "fc.w", "fc.b")
	s, err := loopir.RunWith[float64](gr.Program, inputs(tids, true))
	if err != nil {
		t.Fatal(err)
	}
	near("loss", s.Values(gr.Loss)[0], fx.Loss)
	grad := func(n string) []float64 {
		gi := gr.Of(tids[n])
		if gi < 0 {
			t.Fatalf("%s has no gradient", n)
		}
		return s.Values(gi)
	}
	// PyTorch's index of each of our cells.
	torchIndex := map[string]func(k int) int{
		"c1.kernel": func(k int) int { // ours [oc][kh][kw][ic], PyTorch's [oc][ic][kh][kw]
			ic, kw, kh, oc := k%IC, k/IC%3, k/(IC*3)%3, k/(IC*9)
			return ((oc*IC+ic)*3+kh)*3 + kw
		},
		"fc.w": func(k int) int { // ours [o][h*W*C + w*C + c], PyTorch's [o][c*H*W + h*W + w]
			c, w, h, o := k%C, k/C%W, k/(C*W)%H, k/(C*W*H)
			return o*C*H*W + c*H*W + h*W + w
		},
		"c1.bias": func(k int) int { return k },
		"fc.b":    func(k int) int { return k },
	}
	for _, p := range ts {
		got, want := grad(p.Name), fx.Grads[names[p.Name]]
		if len(got) != len(want) {
			t.Fatalf("%s: %d gradient cells, PyTorch %d", p.Name, len(got), len(want))
		}
		for k := range got {
			near(p.Name+" gradient ["+strconv.Itoa(k)+"]", got[k], want[torchIndex[p.Name](k)])
		}
	}
	t.Logf("worst relative difference from PyTorch %.2e over %d values", worst, cells)
}
