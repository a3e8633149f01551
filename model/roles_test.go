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

// TestEvenPaddedRoles: a conv kernel's EvenPadded are its window axes
// that a padded convolution (`=+`) reads with a window spanning an even
// number of cells, 1 + (k−1)·d (issue 27, item 4): both axes of a 2x2
// padded kernel, strided or not; the 2-wide axis of a 3x2 kernel; no axis
// of a valid convolution or of an odd window (a 2-cell kernel dilated by
// 2 spans 3 cells), while a 4-cell kernel dilated by 3 spans 10.
func TestEvenPaddedRoles(t *testing.T) {
	const src = `
layer rect(x) :
    let y = x +* "... | oh=+kh, ow=+kw, ..ic..; kh, kw, ..ic.. -> oc => ... | oh, ow, oc" ["kh"; "kw"; "oc"] {kernel}
    dim kh = 3
    dim kw = 2
    dim oc = 2
    return y
layer dil[k, d](x) :
    let y = x +* "... | oh=+$d*kh, ic; kh, ic -> oc => ... | oh, oc" ["kh"; "oc"] {kernel}
    dim kh = k
    dim oc = 2
    return y
let even = conv2d[2, k=2]
let strided = conv2d[2, k=4, stride=2]
let odd = conv2d[2]
let valid = conv2d_valid[2, k=2]
let r = rect[]
let d2 = dil[2, 2]
let d3 = dil[4, 3]
entry images:
    input x : 2 | 8, 8, 3
    return valid(odd(strided(even(r(x)))))
entry rows:
    input z : 2 | 12, 3
    return d3(d2(z))
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
	for id, want := range map[string][]int{
		"even.kernel":    {1, 2},
		"strided.kernel": {1, 2},
		"odd.kernel":     nil,
		"valid.kernel":   nil,
		"r.kernel":       {2},
		"d2.kernel":      nil,
		"d3.kernel":      {1},
		"even.bias":      nil,
	} {
		got, ok := roles[id]
		if !ok || !slices.Equal(got.EvenPadded, want) {
			t.Errorf("%s: role %+v (found %v), want EvenPadded %v", id, got, ok, want)
		}
		if ok && id != "even.bias" && got.Kind != RoleConvKernel {
			t.Errorf("%s: role %+v, want a conv kernel", id, got)
		}
	}
}

// TestFlattenedRole: a linear weight contracted with `flatten x` (also
// through unary pointwise functions) records the sizes of x's output
// axes; one fed by a flatten of a single axis, or by no flatten, does not.
func TestFlattenedRole(t *testing.T) {
	const src = `
let a = linear[3]
let b = linear[2]
let c = linear[2]
let d = linear[2]
entry e:
    input x : 2 | 4, 5, 3
    input v : 2 | 7
    let h = a(relu(flatten(x)))
    return b(h) + c(flatten(v)) + d(flatten(exp(x) ++ "... | h, w, c => ... | h, c"))
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
	for id, want := range map[string][]int{"a.w": {4, 5, 3}, "b.w": nil, "c.w": nil, "d.w": {4, 3}} {
		r := roles[id]
		if r.Kind != RoleLinearWeight || !slices.Equal(r.Flattened, want) {
			t.Errorf("%s: role %v, Flattened %v; want a linear weight, Flattened %v", id, r.Kind, r.Flattened, want)
		}
	}
}
