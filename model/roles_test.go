package model

import (
	"slices"
	"testing"
)

// TestParamRoles derives the roles from the operations: conv2d's kernel
// (`kh, kw, ic -> oc`, memory order [oc][kh][kw][ic]) has window axes 1
// and 2, so has conv2d_valid's; a kernel written by hand with its
// operands swapped, a valid strided convolution and the window axis
// after a row variable of two channel axes has its last axis; a `*` weight is a linear weight, added vectors biases, a
// vector multiplied pointwise a norm scale.
func TestParamRoles(t *testing.T) {
	const src = `
layer swapped(x) :
    let y = {k} +* "..c.., kh -> o; ... | 2*oh<+kh, ..c.. => ... | oh, o" ["kh"; "o"] x
    dim kh = 2
    dim o = 5
    return y
let c1 = conv2d[4]
let c2 = conv2d_valid[2, k=2]
let norm = layer_norm[]
let head = linear[3]
let sw = swapped[]
entry predict:
    input x : 2 | 6, 6, 3
    let y = c2(relu(c1(x)))
    return head(norm(y ++ "... | h, w, c => ... | c"))
entry other:
    input z : 2 | 8, 1, 2
    return sw(z)
`
	m, err := expand(t, src)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := m.Infer()
	if err != nil {
		t.Fatal(err)
	}
	roles := inf.ParamRoles()
	want := map[string]Role{
		"c1.kernel":  {Kind: RoleConvKernel, Spatial: []int{1, 2}},
		"c1.bias":    {Kind: RoleBias},
		"c2.kernel":  {Kind: RoleConvKernel, Spatial: []int{1, 2}},
		"c2.bias":    {Kind: RoleBias},
		"norm.gamma": {Kind: RoleNormScale},
		"norm.beta":  {Kind: RoleBias},
		"head.w":     {Kind: RoleLinearWeight},
		"head.b":     {Kind: RoleBias},
		// k : 1, 2, kh -> o (the row variable c is two axes), memory
		// order [o][1][2][kh]: the window axis is the last one.
		"sw.k": {Kind: RoleConvKernel, Spatial: []int{3}},
	}
	for id, w := range want {
		got, ok := roles[id]
		if !ok || got.Kind != w.Kind || !slices.Equal(got.Spatial, w.Spatial) {
			t.Errorf("%s: role %+v (found %v), want %+v", id, got, ok, w)
		}
	}
	if len(roles) != len(want) {
		t.Errorf("roles %v, want %d of them", roles, len(want))
	}
}
