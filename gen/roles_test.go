package gen

import (
	"slices"
	"testing"
)

// TestParamRolesInModel: the model compiler gives each parameter the rt
// role its use shows (the generated ParamTensors carry it): conv2d's
// kernel `kh, kw, ic -> oc`, memory order [oc][kh][kw][ic], is a conv
// kernel with window axes 1 and 2.
func TestParamRolesInModel(t *testing.T) {
	const src = `package m

// Conv is a convolution and a linear head.
//
//ocannl:model
//ocannl:let c1 = conv2d[4]
//ocannl:let head = linear[2]
//ocannl:entry predict:
//ocannl:input x : 2 | 5, 5, 3
//ocannl:return head(relu(c1(x)) ++ "... | h, w, c => ... | c")
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
		role    string
		spatial []int
	}{
		"c1.kernel": {"RoleConvKernel", []int{1, 2}},
		"c1.bias":   {"RoleBias", nil},
		"head.w":    {"RoleLinearWeight", nil},
		"head.b":    {"RoleBias", nil},
	}
	if len(c.gm.Params) != len(want) {
		t.Fatalf("%d parameters, want %d", len(c.gm.Params), len(want))
	}
	for _, p := range c.gm.Params {
		w := want[p.ID]
		if p.Role != w.role || !slices.Equal(p.Spatial, w.spatial) {
			t.Errorf("%s (%s): role %q spatial %v, want %q %v", p.ID, p.Shape, p.Role, p.Spatial, w.role, w.spatial)
		}
	}
}
