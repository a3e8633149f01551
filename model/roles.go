package model

import (
	"github.com/ocannlgen/ocannlgen/inference"
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
			if old, ok := roles[name]; !ok || got.Kind > old.Kind {
				roles[name] = got
			}
		}
	}
	return roles
}

// paramRole is the role of parameter tensor id in graph g.
func paramRole(g *inference.Graph, id int) Role {
	t := g.Tensors[id]
	vector := len(t.Shape.Input) == 0 && len(t.Shape.Batch) == 0 && len(t.Shape.Output) > 0
	role := Role{Kind: RoleOther}
	raise := func(r Role) {
		if r.Kind > role.Kind {
			role = r
		}
	}
	for _, op := range g.Ops {
		for slot, in := range op.RHS {
			if in != id {
				continue
			}
			switch {
			case op.Kind == inference.OpEinsum && op.Spec != nil:
				if sp := convSpatial(op.Spec, slot, t.Shape); sp != nil {
					raise(Role{Kind: RoleConvKernel, Spatial: sp})
				} else if vector {
					raise(Role{Kind: RoleBias})
				}
			case op.Kind == inference.OpCompose && slot == 0 && len(t.Shape.Input) > 0:
				raise(Role{Kind: RoleLinearWeight})
			case vector && op.Kind == inference.OpPointwise && op.Prim == "mul":
				raise(Role{Kind: RoleNormScale})
			case vector:
				raise(Role{Kind: RoleBias})
			}
		}
	}
	return role
}

// convSpatial returns the memory-order axes of slot's tensor (of shape s)
// that carry a kernel label of a convolution axis in another slot of sp,
// or nil when there are none.
func convSpatial(sp *spec.Einsum, slot int, s inference.Shape) []int {
	kernel := map[string]bool{}
	for k := range sp.RHS {
		if k == slot {
			continue
		}
		for _, row := range sp.RHS[k].Rows {
			for _, ax := range row.Axes() {
				if ax.Kind == spec.AxisAffine && ax.Affine != nil && ax.Affine.Conv != nil {
					kernel[ax.Affine.Conv.Kernel] = true
				}
			}
		}
	}
	if len(kernel) == 0 {
		return nil
	}
	var axes []int
	base := 0
	for _, kind := range spec.MemoryOrder {
		row := sp.RHS[slot].Rows[kind]
		n := len(s.Row(kind))
		// The leading flank is anchored at the front, the trailing one
		// (all the axes of a row without a row variable) at the back.
		for j, ax := range row.Beg {
			if ax.Kind == spec.AxisLabel && kernel[ax.Label] && j < n {
				axes = append(axes, base+j)
			}
		}
		for j, ax := range row.End {
			if at := n - len(row.End) + j; ax.Kind == spec.AxisLabel && kernel[ax.Label] && at >= 0 {
				axes = append(axes, base+at)
			}
		}
		base += n
	}
	return axes
}
