package gen

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestParamRolesInModel: the model compiler gives each parameter the rt
// role its use shows (the generated ParamTensors carry it): conv2d's
// kernel `kh, kw, ic -> oc`, memory order [oc][kh][kw][ic], is a conv
// kernel with window axes 1 and 2. A padded conv2d with an even kernel
// (k=2) has both window axes read by an even window (EvenPadded, issue 27
// item 4); an odd one and a valid one with an even kernel none.
func TestParamRolesInModel(t *testing.T) {
	const src = `package m

// Conv is three convolutions and a linear head.
//
//ocannl:model
//ocannl:let c1 = conv2d[4]
//ocannl:let c2 = conv2d[4, k=2]
//ocannl:let c3 = conv2d_valid[4, k=2]
//ocannl:let head = linear[2]
//ocannl:entry predict:
//ocannl:input x : 2 | 5, 5, 3
//ocannl:return head(relu(c3(c2(c1(x)))) ++ "... | h, w, c => ... | c")
type Conv struct{ ocannlConv }
`
	c := &modelCompiler{ms: testModelSrc(t, src), typeName: "Conv"}
	if err := c.header(); err != nil {
		t.Fatal(err)
	}
	if err := c.expand(); err != nil {
		t.Fatal(err)
	}
	if err := c.params(); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		role             string
		spatial, evenPad []int
	}{
		"c1.kernel": {"RoleConvKernel", []int{1, 2}, nil},
		"c1.bias":   {"RoleBias", nil, nil},
		"c2.kernel": {"RoleConvKernel", []int{1, 2}, []int{1, 2}},
		"c2.bias":   {"RoleBias", nil, nil},
		"c3.kernel": {"RoleConvKernel", []int{1, 2}, nil},
		"c3.bias":   {"RoleBias", nil, nil},
		"head.w":    {"RoleLinearWeight", nil, nil},
		"head.b":    {"RoleBias", nil, nil},
	}
	if len(c.gm.Params) != len(want) {
		t.Fatalf("%d parameters, want %d", len(c.gm.Params), len(want))
	}
	for _, p := range c.gm.Params {
		w := want[p.ID]
		if p.Role != w.role || !slices.Equal(p.Spatial, w.spatial) || !slices.Equal(p.EvenPadded, w.evenPad) {
			t.Errorf("%s (%s): role %q spatial %v even-padded %v, want %q %v %v", p.ID, p.Shape, p.Role, p.Spatial, p.EvenPadded, w.role, w.spatial, w.evenPad)
		}
	}
}

// TestParamTensorsEvenPadded: the generated ParamTensors give the even
// kernel of a padded convolution its EvenPadded axes, and no other
// parameter any.
func TestParamTensorsEvenPadded(t *testing.T) {
	src := modelSource("Even",
		"let c1 = conv2d[2]",
		"let c2 = conv2d[2, k=2]",
		"entry predict:",
		"input x : 1 | 4, 4, 1",
		"return c2(c1(x))")
	out := regexp.MustCompile(`\s+`).ReplaceAllString(string(mustGenerate(t, src)), " ")
	// Each tensor literal, its fields sorted: { Data32: ..., Dims: ...,
	// EvenPadded: ..., Name: ..., Role: ..., Spatial: ..., }.
	lit := regexp.MustCompile(`\{ Data32: [^{}]*(?:\{[^{}]*\}[^{}]*)*\}`)
	name := regexp.MustCompile(`Name: "([^"]*)"`)
	got := map[string]string{}
	for _, l := range lit.FindAllString(out, -1) {
		if m := name.FindStringSubmatch(l); m != nil {
			got[m[1]] = l
		}
	}
	if k := got["c2.kernel"]; !strings.Contains(k, "EvenPadded: []int{1, 2}") || !strings.Contains(k, "Role: rt.RoleConvKernel") {
		t.Errorf("the even kernel's tensor is %q", k)
	}
	if k := got["c1.kernel"]; k == "" || strings.Contains(k, "EvenPadded") {
		t.Errorf("the odd kernel's tensor is %q", k)
	}
	if n := strings.Count(out, "EvenPadded"); n != 1 {
		t.Errorf("EvenPadded appears %d times, want once:\n%s", n, out)
	}
	// LoadSafetensors's doc says that the PyTorch preset refuses it.
	if !strings.Contains(out, "// With opt.Layout = rt.LayoutPyTorch, the kernels of padded convolutions with an even window (c2.kernel) // are refused (rt.ErrEvenKernelPadding) unless opt.AllowEvenKernelPadding confirms them") {
		t.Errorf("LoadSafetensors's doc does not name the even kernel:\n%s", out)
	}
	odd := regexp.MustCompile(`\s+`).ReplaceAllString(string(mustGenerate(t, modelSource("Odd", "let c1 = conv2d[2]", "entry predict:", "input x : 1 | 4, 4, 1", "return c1(x)"))), " ")
	if strings.Contains(odd, "EvenKernelPadding") || strings.Contains(odd, "EvenPadded") {
		t.Errorf("a model without even kernels mentions them:\n%s", odd)
	}
}
