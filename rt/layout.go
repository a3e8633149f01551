package rt

import (
	"fmt"
	"slices"
	"strings"
)

// Role is what a parameter is in its model, as the generator knows it
// from the operation that uses it. It decides how PyTorch lays out the
// equivalent nn.Module's tensor (Tensor.PyTorchPerm), which
// SafetensorsOptions.Layout converts. Generated ParamTensors set it; the
// zero value, RoleUnknown, is a tensor built by hand: no layout is
// converted for it, as before roles existed.
type Role uint8

// The roles of a parameter.
const (
	// RoleUnknown: the tensor's role is not known (hand-built tensors).
	RoleUnknown Role = iota
	// RoleLinearWeight: the weight w of w * x, an `in -> out` matrix
	// stored [out][in], as PyTorch's nn.Linear stores its weight.
	RoleLinearWeight
	// RoleConvKernel: the kernel of a convolution (an einsum with an
	// affine convolution axis such as `oh=+kh`), whose window axes are
	// Tensor.Spatial. ocannlgen's conv2d kernel `kh, kw, ic -> oc` is
	// stored [oc][kh][kw][ic]; PyTorch's nn.Conv2d stores [oc][ic][kh][kw]
	// (its window axes last).
	RoleConvKernel
	// RoleBias: a vector of output axes added to a result (a bias, a
	// norm's shift); stored in the same order by PyTorch.
	RoleBias
	// RoleNormScale: a vector of output axes multiplied pointwise with a
	// result (a norm's gamma, a scale); stored in the same order by
	// PyTorch.
	RoleNormScale
	// RoleOther: any other parameter; no layout conversion is known for
	// it.
	RoleOther
)

// String names the role for messages ("conv kernel").
func (r Role) String() string {
	switch r {
	case RoleUnknown:
		return "unknown role"
	case RoleLinearWeight:
		return "linear weight"
	case RoleConvKernel:
		return "conv kernel"
	case RoleBias:
		return "bias"
	case RoleNormScale:
		return "norm scale"
	case RoleOther:
		return "other"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Layout is the axis order of the tensors of a safetensors file
// (SafetensorsOptions.Layout).
type Layout uint8

// The layouts of a safetensors file.
const (
	// LayoutAuto, the zero value: LoadSafetensors reads a file written by
	// SaveSafetensors in the layout the file records (its "__metadata__"
	// entry LayoutMetadataKey), and any other file in ocannlgen's order,
	// but refuses a tensor whose layout its shape cannot tell (see
	// ErrAmbiguousLayout). SaveSafetensors writes ocannlgen's order.
	LayoutAuto Layout = iota
	// LayoutNative: ocannlgen's order, each tensor in the memory order of
	// its parameter (batch, output, input axes).
	LayoutNative
	// LayoutPyTorch: the order of the equivalent PyTorch nn.Module's
	// state_dict: each tensor permuted by its role's Tensor.PyTorchPerm
	// (a conv kernel [oc][ic][kh][kw]; a linear weight, a bias and a norm
	// scale as in ocannlgen's order; tensors of unknown role unchanged).
	LayoutPyTorch
)

// String is the layout's name as LayoutMetadataKey records it ("native",
// "pytorch"), or "auto".
func (l Layout) String() string {
	switch l {
	case LayoutAuto:
		return "auto"
	case LayoutNative:
		return "native"
	case LayoutPyTorch:
		return "pytorch"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// goName is the layout's Go spelling for messages.
func (l Layout) goName() string {
	switch l {
	case LayoutNative:
		return "rt.LayoutNative"
	case LayoutPyTorch:
		return "rt.LayoutPyTorch"
	}
	return "rt.LayoutAuto"
}

// words names the layout in messages.
func (l Layout) words() string {
	if l == LayoutPyTorch {
		return "PyTorch's layout"
	}
	return "ocannlgen's order"
}

// Metadata keys SaveSafetensors writes into a file's "__metadata__" (and
// LoadSafetensors reads with LayoutAuto).
const (
	// LayoutMetadataKey records the layout the file was written in:
	// "native" or "pytorch" (Layout.String).
	LayoutMetadataKey = "ocannlgen.layout"
	// PermutedMetadataKey lists, as a JSON array of file tensor names,
	// the tensors written with a SafetensorsOptions.Permute entry other
	// than the recorded layout's permutation: the file does not vouch for
	// their layout, so loading them takes a Permute entry again (or
	// Layout), unless their shape tells the layout.
	PermutedMetadataKey = "ocannlgen.permuted"
)

// ErrAmbiguousLayout: a tensor's layout in a safetensors file cannot be
// told from its shape (ocannlgen's order and PyTorch's order have the
// same shape, as a 3x3 conv kernel with 3 input channels has) and nothing
// says which it is: LoadSafetensors refuses it rather than guess.
const ErrAmbiguousLayout = Error("ambiguous tensor layout")

// ErrLayoutConflict: SafetensorsOptions.Layout contradicts the layout the
// file records for a tensor (LoadSafetensors).
const ErrLayoutConflict = Error("layout option contradicts the file's recorded layout")

// ErrEvenKernelPadding: LoadSafetensors with LayoutPyTorch (or a Permute
// entry of the kernel's PyTorch permutation, TorchConv2d) refuses a conv
// kernel whose padded convolution (`=+`) has a window spanning an even
// number of cells (Tensor.EvenPadded), unless
// SafetensorsOptions.AllowEvenKernelPadding confirms it. ocannlgen pads
// the extra cell of an even window on the left, as seed 002 prescribes
// (a window of k cells reads k/2 cells before the output position and
// k/2−1 after it); PyTorch's padding='same' (and TensorFlow's "SAME")
// pads it on the right (k/2−1 before, k/2 after). Weights trained with
// padding='same' would compute an output shifted by one cell along each
// such axis.
const ErrEvenKernelPadding = Error("even kernel padded unlike PyTorch's padding='same'")

// evenKernelPadding is the error for conv kernel t (file tensor fn),
// loaded in PyTorch's layout, whose padded convolution has even windows.
func evenKernelPadding(t *Tensor, fn string) error {
	names := t.axisNames()
	axes := make([]string, len(t.EvenPadded))
	for i, a := range t.EvenPadded {
		axes[i] = fmt.Sprintf("axis %d", a)
		if a < len(names) {
			axes[i] = names[a]
		}
	}
	word := "axis"
	if len(axes) > 1 {
		word = "axes"
	}
	return fmt.Errorf("rt: safetensors: tensor %q (%s, file tensor %q): its padded convolution (=+) has an even window on %s %s: "+
		"ocannlgen pads the extra cell of an even window on the left (seed 002's rule: a window spanning k cells reads k/2 cells before the output position and k/2-1 after), "+
		"PyTorch's padding='same' pads it on the right (k/2-1 before, k/2 after), so weights trained with padding='same' would compute an output shifted by one cell along each such axis; "+
		"set SafetensorsOptions.AllowEvenKernelPadding to load them anyway (right for weights trained with the input padded explicitly, k/2 cells before and k/2-1 after, and padding=0), "+
		"or use an odd kernel: %w",
		t.Name, t.Role, fn, word, strings.Join(axes, ", "), ErrEvenKernelPadding)
}

// convSpatial returns the window axes of a conv kernel: t.Spatial, or
// for a rank-4 kernel without it axes 1 and 2 (ocannlgen's conv2d,
// [oc][kh][kw][ic]); nil when there are none.
func (t *Tensor) convSpatial() []int {
	if t.Role != RoleConvKernel {
		return nil
	}
	if t.Spatial != nil {
		return t.Spatial
	}
	if len(t.Dims) == 4 {
		return []int{1, 2}
	}
	return nil
}

// PyTorchPerm returns the axis permutation (as SafetensorsOptions.Permute:
// axis k of t is axis p[k] of the file's tensor) from the order PyTorch
// stores a tensor of t's role in to t's memory order, or nil when the two
// orders agree. PyTorch puts a conv kernel's window axes (Spatial) last,
// after the other axes in their order: [oc][ic][kh][kw] for nn.Conv2d,
// so a rank-4 kernel of ocannlgen's conv2d has TorchConv2d(). Every other
// role (and RoleUnknown) gives nil.
func (t *Tensor) PyTorchPerm() []int {
	sp := t.convSpatial()
	if len(sp) == 0 {
		return nil
	}
	spatial := make([]bool, len(t.Dims))
	for _, a := range sp {
		if a < 0 || a >= len(t.Dims) {
			return nil
		}
		spatial[a] = true
	}
	perm := make([]int, len(t.Dims))
	j := 0
	for k, s := range spatial {
		if !s {
			perm[k] = j
			j++
		}
	}
	for k, s := range spatial {
		if s {
			perm[k] = j
			j++
		}
	}
	if isIdentity(perm) {
		return nil
	}
	return perm
}

// checkRole validates t's Role, Spatial, EvenPadded and Flattened.
func (t *Tensor) checkRole(op string) error {
	if t.Role > RoleOther {
		return fmt.Errorf("rt: %s: tensor %q: unknown role %d: %w", op, t.Name, t.Role, ErrInvalid)
	}
	if err := t.checkFlattened(op); err != nil {
		return err
	}
	if t.Spatial == nil {
		return t.checkEvenPadded(op)
	}
	if t.Role != RoleConvKernel {
		return fmt.Errorf("rt: %s: tensor %q: Spatial %v set on a tensor of role %s (only a conv kernel has window axes): %w", op, t.Name, t.Spatial, t.Role, ErrInvalid)
	}
	for i, a := range t.Spatial {
		if a < 0 || a >= len(t.Dims) || i > 0 && a <= t.Spatial[i-1] {
			return fmt.Errorf("rt: %s: tensor %q: Spatial %v must be increasing axes of dims %v: %w", op, t.Name, t.Spatial, t.Dims, ErrInvalid)
		}
	}
	return t.checkEvenPadded(op)
}

// checkEvenPadded validates t's EvenPadded: increasing window axes of a
// conv kernel.
func (t *Tensor) checkEvenPadded(op string) error {
	if t.EvenPadded == nil {
		return nil
	}
	if t.Role != RoleConvKernel {
		return fmt.Errorf("rt: %s: tensor %q: EvenPadded %v set on a tensor of role %s (only a conv kernel has window axes): %w", op, t.Name, t.EvenPadded, t.Role, ErrInvalid)
	}
	sp := t.convSpatial()
	for i, a := range t.EvenPadded {
		if !slices.Contains(sp, a) || i > 0 && a <= t.EvenPadded[i-1] {
			return fmt.Errorf("rt: %s: tensor %q: EvenPadded %v must be increasing window axes (Spatial %v) of dims %v: %w", op, t.Name, t.EvenPadded, sp, t.Dims, ErrInvalid)
		}
	}
	return nil
}

// checkFlattened validates t's Flattened: on a linear weight, at least
// two positive sizes whose product is the last axis of t's dims.
func (t *Tensor) checkFlattened(op string) error {
	if t.Flattened == nil {
		return nil
	}
	if t.Role != RoleLinearWeight {
		return fmt.Errorf("rt: %s: tensor %q: Flattened %v set on a tensor of role %s (only a linear weight's input axis is flattened): %w", op, t.Name, t.Flattened, t.Role, ErrInvalid)
	}
	n := 1
	for _, d := range t.Flattened {
		if d <= 0 || overflowsInt(n, d) {
			n = -1
			break
		}
		n *= d
	}
	if len(t.Flattened) < 2 || len(t.Dims) == 0 || n != t.Dims[len(t.Dims)-1] {
		return fmt.Errorf("rt: %s: tensor %q: Flattened %v must be at least two positive sizes whose product is the last axis of dims %v: %w", op, t.Name, t.Flattened, t.Dims, ErrInvalid)
	}
	return nil
}

// flattenAmbiguous is the error for a linear weight after a flatten
// (t.Flattened) that nothing says how to read or write in PyTorch's order.
func flattenAmbiguous(t *Tensor, fn string, save bool) error {
	f := t.Flattened
	c, hw := f[len(f)-1], 1
	for _, d := range f[:len(f)-1] {
		hw *= d
	}
	h, w := hw, 1
	if len(f) == 3 {
		h, w = f[0], f[1]
	}
	what := "the file's shape cannot tell in which order the file holds them"
	how := fmt.Sprintf("Permute[%q] = nil (or Layout rt.LayoutNative) for the order of ocannlgen's flatten", t.Name)
	if save {
		what = "PyTorch's layout does not say in which order to write them"
		how = fmt.Sprintf("Permute[%q] = nil for the order of ocannlgen's flatten", t.Name)
	}
	return fmt.Errorf("rt: safetensors: tensor %q (%s, file tensor %q, dims %v): its input axis is a flatten of axes %v, and %s: "+
		"PyTorch's x.flatten(1) of NCHW activations puts the channels first, ocannlgen's flatten of channels-last ones last, with the same shape; "+
		"set SafetensorsOptions.Views[%q] = rt.TorchFlattenLinear(%d, %d, %d) for a PyTorch CNN's flatten(1) of NCHW, or %s: %w",
		t.Name, t.Role, fn, t.Dims, f, what, t.Name, c, h, w, how, ErrAmbiguousLayout)
}

// isIdentity reports whether perm is nil or the identity.
func isIdentity(perm []int) bool {
	for k, p := range perm {
		if p != k {
			return false
		}
	}
	return true
}

// samePerm reports whether two permutations are equal, nil being the
// identity.
func samePerm(a, b []int) bool {
	if isIdentity(a) && isIdentity(b) {
		return true
	}
	return slices.Equal(a, b)
}

// axisNames names t's axes in memory order for messages: a conv kernel's
// window axes kh, kw (k for one, kd, kh, kw for three, k1... otherwise),
// the axes before them out and the others in; a tensor of unknown role is
// named as ocannlgen's conv2d kernel (out, kh, kw, in) when it has rank 4.
func (t *Tensor) axisNames() []string {
	sp := t.convSpatial()
	if sp == nil && t.Role == RoleUnknown && len(t.Dims) == 4 {
		sp = []int{1, 2}
	}
	if len(sp) == 0 {
		return nil
	}
	var win []string
	switch len(sp) {
	case 1:
		win = []string{"k"}
	case 2:
		win = []string{"kh", "kw"}
	case 3:
		win = []string{"kd", "kh", "kw"}
	default:
		for i := range sp {
			win = append(win, fmt.Sprintf("k%d", i+1))
		}
	}
	names := make([]string, len(t.Dims))
	w := 0
	for k := range names {
		switch {
		case w < len(sp) && sp[w] == k:
			names[k] = win[w]
			w++
		case w == 0:
			names[k] = "out"
		default:
			names[k] = "in"
		}
	}
	return names
}

// layoutText renders an axis order such as [out][kh][kw][in] from names
// in memory order placed by perm (nil: memory order).
func layoutText(names []string, perm []int) string {
	if names == nil {
		return ""
	}
	placed := slices.Clone(names)
	if perm != nil {
		for k, p := range perm {
			placed[p] = names[k]
		}
	}
	return "[" + strings.Join(placed, "][") + "]"
}

// permGo renders a permutation as Go code: rt.TorchConv2d() when it is
// that one, else a slice literal.
func permGo(perm []int) string {
	if slices.Equal(perm, TorchConv2d()) {
		return "rt.TorchConv2d()"
	}
	s := make([]string, len(perm))
	for i, p := range perm {
		s[i] = fmt.Sprint(p)
	}
	return "[]int{" + strings.Join(s, ", ") + "}"
}

// sameMultiset reports whether b is a reordering of a.
func sameMultiset(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// torchExplains returns the PyTorch permutation that makes the file's
// shape file out of t's dims: the role's PyTorchPerm, or for a tensor of
// unknown role of rank 4, TorchConv2d(); nil when neither does.
func (t *Tensor) torchExplains(file []int) []int {
	perm := t.PyTorchPerm()
	if perm == nil && t.Role == RoleUnknown && len(t.Dims) == 4 {
		perm = TorchConv2d()
	}
	if perm != nil && !slices.Equal(file, t.Dims) && slices.Equal(file, permuted(t.Dims, perm)) {
		return perm
	}
	return nil
}

// what names the tensor's kind for hints: "conv kernel", or "tensor" for
// an unknown role.
func (t *Tensor) what() string {
	if t.Role == RoleUnknown {
		return "tensor"
	}
	return t.Role.String()
}
