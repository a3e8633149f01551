package rt

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// View is a layout conversion that regroups a tensor's axes as well as
// permuting them (SafetensorsOptions.Views), for a file tensor whose
// cells are the parameter's in another order that no permutation of the
// parameter's own axes gives: the weight of a PyTorch nn.Linear fed by
// x.flatten(1) of NCHW activations, whose input index is c*H*W + h*W + w
// where ocannlgen's `flatten` of `h, w, c` gives h*W*C + w*C + c
// (TorchFlattenLinear).
//
// The parameter's cells, in its memory order, are viewed row-major with
// the dims Dims; axis k of that view is axis Perm[k] of the file's view
// (as for SafetensorsOptions.Permute); and the file's view is stored
// row-major with the dims File, the shape the file's header gives. One
// entry of Dims and one of File may be -1: the size the other entries
// leave of the tensor's cells (the output width of a Linear weight, say).
type View struct {
	Dims []int `json:"dims"`
	Perm []int `json:"perm"`
	File []int `json:"file"`
}

// TorchFlattenLinear returns the View (for SafetensorsOptions.Views) of
// the weight w : n -> o of a linear layer applied to `flatten x`, where
// x's output axes are h, w, c (channels last, ocannlgen's images), as
// the PyTorch nn.Linear(c*h*w, o) applied to x.flatten(1) of the same
// activations in NCHW order stores it: [o][c*h*w] with c slowest. So a
// PyTorch CNN's `conv -> flatten(1) -> Linear` state_dict loads (with
// Layout LayoutPyTorch for the conv kernels) and saves back with no
// reshaping in Python. The parameter is viewed as [o][h][w][c] and the
// file tensor as [o][c][h][w], stored [o][c*h*w]. Only c and the
// product h*w matter: either order flattens the spatial cells alike.
func TorchFlattenLinear(c, h, w int) View {
	return View{Dims: []int{-1, h, w, c}, Perm: []int{0, 2, 3, 1}, File: []int{-1, c * h * w}}
}

// ViewsMetadataKey is the metadata key under which SaveSafetensors records
// the tensors it wrote through a View, as a JSON object mapping each file
// tensor name to its View with the sizes resolved; LoadSafetensors reads
// such a tensor through that View unless a Permute or Views entry says
// otherwise, so a file written with Views reads back without options.
const ViewsMetadataKey = "ocannlgen.views"

// maxViewAxes bounds a View's axes (a recorded View comes from the file:
// its rank sets the work per cell of the conversion).
const maxViewAxes = 16

// resolveDims replaces the -1 of dims by the size that the other entries
// leave of n cells.
func resolveDims(dims []int, n int) ([]int, bool) {
	out := slices.Clone(dims)
	free, prod := -1, 1
	for i, d := range dims {
		switch {
		case d == -1 && free < 0:
			free = i
		case d <= 0:
			return nil, false
		default:
			if overflowsInt(prod, d) {
				return nil, false
			}
			prod *= d
		}
	}
	if free >= 0 {
		if prod == 0 || n%prod != 0 || n/prod == 0 {
			return nil, false
		}
		out[free] = n / prod
		prod = n
	}
	return out, prod == n
}

func overflowsInt(a, b int) bool { return b != 0 && a > (math.MaxInt>>1)/b }

// resolve checks v against a tensor of n cells and returns it with its
// sizes resolved: Perm must permute Dims's axes, and Dims and File must
// both hold n cells, with the file view's dims (Dims permuted by Perm)
// regrouping into File in order (checked by cells only: any row-major
// regrouping of the same cells is one).
func (v View) resolve(name string, n int) (View, error) {
	if len(v.Dims) > maxViewAxes || len(v.File) > maxViewAxes {
		return View{}, fmt.Errorf("rt: safetensors: tensor %q: a View has at most %d axes (dims %d, file %d): %w", name, maxViewAxes, len(v.Dims), len(v.File), ErrInvalid)
	}
	dims, ok := resolveDims(v.Dims, n)
	if !ok {
		return View{}, fmt.Errorf("rt: safetensors: tensor %q: View dims %v do not hold its %d cells (positive sizes and at most one -1): %w", name, v.Dims, n, ErrInvalid)
	}
	file, ok := resolveDims(v.File, n)
	if !ok {
		return View{}, fmt.Errorf("rt: safetensors: tensor %q: View file dims %v do not hold its %d cells (positive sizes and at most one -1): %w", name, v.File, n, ErrInvalid)
	}
	if v.Perm == nil {
		return View{}, fmt.Errorf("rt: safetensors: tensor %q: View has no Perm (use the identity %v to regroup only): %w", name, identityPerm(len(dims)), ErrInvalid)
	}
	if err := checkPerm(name, v.Perm, len(dims)); err != nil {
		return View{}, err
	}
	return View{Dims: dims, Perm: slices.Clone(v.Perm), File: file}, nil
}

func identityPerm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func (o *SafetensorsOptions) explicitView(name string) (View, bool) {
	if o == nil {
		return View{}, false
	}
	v, ok := o.Views[name]
	return v, ok
}

// recordedViews reads the views a file written by SaveSafetensors records
// (ViewsMetadataKey), by file tensor name.
func recordedViews(md map[string]string) (map[string]View, error) {
	s, ok := md[ViewsMetadataKey]
	if !ok {
		return nil, nil
	}
	var vs map[string]View
	if err := json.Unmarshal([]byte(s), &vs); err != nil {
		return nil, fmt.Errorf("rt: safetensors: __metadata__ %q must be a JSON object of views: %w: %w", ViewsMetadataKey, ErrSafetensors, err)
	}
	return vs, nil
}

// cells is the number of the tensor's elements.
func (t *Tensor) cells() int { return len(t.Data32) + len(t.Data64) }
