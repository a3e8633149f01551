package model

import (
	"slices"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/ops"
	"github.com/ocannlgen/ocannlgen/spec"
)

// RoleKind is what a parameter is in the model, as the operations that
// use it show (rt.Role in generated code: it decides the parameter's
// layout in a PyTorch state_dict).
type RoleKind int

// The parameter roles, in increasing precedence: a parameter with
// several uses takes the highest role any use gives it.
const (
	// RoleOther: no use below (e.g. a parameter with input axes used
	// only pointwise).
	RoleOther RoleKind = iota
	// RoleBias: a parameter with output axes only, added (or used
	// otherwise than multiplied pointwise).
	RoleBias
	// RoleNormScale: a parameter with output axes only, multiplied
	// pointwise (`*.`): a norm's gamma, a scale.
	RoleNormScale
	// RoleLinearWeight: the left operand w of a composition w * x
	// (an `in -> out` matrix, stored [out][in] as nn.Linear's weight).
	RoleLinearWeight
	// RoleConvKernel: an operand of an einsum whose other operand has a
	// convolution axis (`oh=+kh`, `2*ow<+kw`) and whose own slot holds
	// the kernel labels (kh, kw): its window axes are those.
	RoleConvKernel
)

// Role is a parameter's role and, for a conv kernel, its window axes.
type Role struct {
	Kind RoleKind
	// Spatial are the window axes of a conv kernel: indices into the
	// parameter's dims in memory order (batch, output, input),
	// increasing.
	Spatial []int
	// EvenPadded are the window axes of a conv kernel (a subset of
	// Spatial, increasing) read by a padded convolution (`=+`) whose
	// window spans an even number of cells, 1 + (k−1)·d for a kernel
	// axis of size k and dilation d (an even kernel, dilation odd):
	// ocannlgen pads the extra cell of such a window on the left (seed
	// 002), PyTorch's padding='same' on the right (rt.Tensor.EvenPadded,
	// rt.ErrEvenKernelPadding). Nil when there are none.
	EvenPadded []int
	// Flattened are, for a linear weight w of `w * flatten x` (through
	// unary pointwise operations: `w * relu (flatten x)` too), the sizes
	// of x's output axes that flatten merged into w's input axis, when
	// there are at least two (rt.Tensor.Flattened: PyTorch's twin may
	// flatten them in another order); nil otherwise.
	Flattened []int
}

// ParamRoles derives each parameter's role from the operations of every
// entry that use it (see RoleKind). A convolution kernel is found by the
// einsum, not by the layer's name: a parameter whose slot in an einsum
// names the kernel label of a convolution axis of another slot is a conv
// kernel, its window axes the axes of those labels. Parameters that no
// entry uses are absent.
func (r *Inferred) ParamRoles() map[string]Role {
	roles := map[string]Role{}
	for _, g := range r.Graphs {
		if g == nil {
			continue
		}
		params := map[int]string{}
		for _, n := range g.Named {
			if n.Kind == inference.Param {
				params[n.Tensor] = n.Name
			}
		}
		for id, name := range params {
			got := paramRole(g, id)
			old, ok := roles[name]
			switch {
			case !ok || got.Kind > old.Kind:
				roles[name] = got
			case got.Kind == old.Kind && got.Kind == RoleConvKernel:
				old.EvenPadded = union(old.EvenPadded, got.EvenPadded, old.Spatial)
				roles[name] = old
			case got.Kind == old.Kind && got.Kind == RoleLinearWeight && old.Flattened == nil:
				old.Flattened = got.Flattened
				roles[name] = old
			}
		}
	}
	return roles
}

// union returns the increasing union of two index lists, restricted to
// the axes of within (a role's Spatial: EvenPadded stays a subset of it),
// nil when it is empty.
func union(a, b, within []int) []int {
	var out []int
	for _, x := range append(slices.Clone(a), b...) {
		if slices.Contains(within, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// paramRole is the role of parameter tensor id in graph g.
func paramRole(g *inference.Graph, id int) Role {
	t := g.Tensors[id]
	vector := len(t.Shape.Input) == 0 && len(t.Shape.Batch) == 0 && len(t.Shape.Output) > 0
	role := Role{Kind: RoleOther}
	raise := func(r Role) {
		switch {
		case r.Kind > role.Kind:
			role = r
		case r.Kind == role.Kind && r.Kind == RoleConvKernel:
			role.EvenPadded = union(role.EvenPadded, r.EvenPadded, role.Spatial)
		case r.Kind == role.Kind && r.Kind == RoleLinearWeight && role.Flattened == nil:
			role.Flattened = r.Flattened
		}
	}
	for _, op := range g.Ops {
		for slot, in := range op.RHS {
			if in != id {
				continue
			}
			switch {
			case op.Kind == inference.OpEinsum && op.Spec != nil:
				if sp, even := convSpatial(op.Spec, slot, t.Shape); sp != nil {
					raise(Role{Kind: RoleConvKernel, Spatial: sp, EvenPadded: even})
				} else if vector {
					raise(Role{Kind: RoleBias})
				}
			case op.Kind == inference.OpCompose && slot == 0 && len(t.Shape.Input) > 0:
				raise(Role{Kind: RoleLinearWeight, Flattened: flattenedInput(g, t, op.RHS[1])})
			case vector && op.Kind == inference.OpPointwise && op.Prim == ops.Mul:
				raise(Role{Kind: RoleNormScale})
			case vector:
				raise(Role{Kind: RoleBias})
			}
		}
	}
	return role
}

// flattenedInput returns the sizes of the output axes of x when w's
// one input axis is contracted with `flatten x` (x's output row of at
// least two axes), found through the unary pointwise operations between
// the flatten and the composition; nil otherwise.
func flattenedInput(g *inference.Graph, w *inference.Tensor, rhs int) []int {
	if len(w.Shape.Input) != 1 {
		return nil
	}
	for {
		t := g.Tensors[rhs]
		if t.Op < 0 {
			return nil
		}
		op := g.Ops[t.Op]
		switch {
		case op.Kind == inference.OpFlatten:
			out := g.Tensors[op.RHS[0]].Shape.Output
			if len(out) < 2 {
				return nil
			}
			return sizes(out)
		case op.Kind == inference.OpPointwise && len(op.RHS) == 1 && !op.Assign:
			rhs = op.RHS[0]
		default:
			return nil
		}
	}
}

func sizes(ds []inference.Dim) []int {
	out := make([]int, len(ds))
	for i, d := range ds {
		out[i] = d.Size
	}
	return out
}

// convSpatial returns the memory-order axes of slot's tensor (of shape s)
// that carry a kernel label of a convolution axis in another slot of sp,
// or nil when there are none; even lists those of them that a padded
// convolution axis reads with a window of an even span (1 + (k−1)·d for
// the axis's size k and the convolution's dilation d).
func convSpatial(sp *spec.Einsum, slot int, s inference.Shape) (axes, even []int) {
	kernel := map[string][]*spec.Conv{}
	for k := range sp.RHS {
		if k == slot {
			continue
		}
		for _, row := range sp.RHS[k].Rows {
			for _, ax := range row.Axes() {
				if ax.Kind == spec.AxisAffine && ax.Affine != nil && ax.Affine.Conv != nil {
					c := ax.Affine.Conv
					kernel[c.Kernel] = append(kernel[c.Kernel], c)
				}
			}
		}
	}
	if len(kernel) == 0 {
		return nil, nil
	}
	add := func(label string, at int, size int) {
		axes = append(axes, at)
		for _, c := range kernel[label] {
			if c.Padded && (1+(size-1)*c.Dilation)%2 == 0 {
				even = append(even, at)
				return
			}
		}
	}
	base := 0
	for _, kind := range spec.MemoryOrder {
		row := sp.RHS[slot].Rows[kind]
		dims := s.Row(kind)
		n := len(dims)
		// The leading flank is anchored at the front, the trailing one
		// (all the axes of a row without a row variable) at the back.
		for j, ax := range row.Beg {
			if ax.Kind == spec.AxisLabel && kernel[ax.Label] != nil && j < n {
				add(ax.Label, base+j, dims[j].Size)
			}
		}
		for j, ax := range row.End {
			if at := n - len(row.End) + j; ax.Kind == spec.AxisLabel && kernel[ax.Label] != nil && at >= 0 {
				add(ax.Label, base+at, dims[at].Size)
			}
		}
		base += n
	}
	return axes, even
}
