package bf16

import (
	"fmt"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt/internal/padgrid"
)

// Padded is a bf16 copy of a float32 array with zero margins: the
// output gradient of a convolution whose input gradient the generated
// code runs as a gather (the flipped kernel over the padded output
// gradient, one call per part) instead of as the transposed
// convolution's scatter (thousands of small calls, whose cells
// overlap). The array has up to four axes, outermost first (row-major,
// leading axes of extent 1 for fewer); axis i gets pad[i] zero cells
// before and after. Its buffer grows on the first Convert and is kept
// (the margins stay zero while the dimensions do), so that later ones
// allocate nothing.
type Padded struct {
	h         []uint16
	base      *float32
	dims, pad [4]int
}

// Convert sets p to the padded bf16 copy of the float32 array at base
// with dimensions dims, rounded as Gemm packs its operands.
func (p *Padded) Convert(base *float32, dims, pad [4]int) { p.convert(best, base, dims, pad) }

// ConvertTier is Convert for GemmOpsTier(t, ...).
func (p *Padded) ConvertTier(t Tier, base *float32, dims, pad [4]int) {
	p.convert(usable(t), base, dims, pad)
}

// convert is Convert in tier t (Convert skips Available: cpu.Supported
// parses feature names).
func (p *Padded) convert(t Tier, base *float32, dims, pad [4]int) {
	g := padgrid.Grid{Dims: dims, Pad: pad}
	if !g.Valid() {
		panic(fmt.Sprintf("bf16.Padded.Convert: dimensions %v, pads %v", dims, pad))
	}
	n := g.Len()
	if cap(p.h) < n {
		p.h = make([]uint16, n)
	} else if p.h = p.h[:n]; dims != p.dims || pad != p.pad {
		clear(p.h) // the margins
	}
	p.h, p.base, p.dims, p.pad = p.h[:n], base, dims, pad
	if n == 0 || g.Size() == 0 {
		return
	}
	from := unsafe.Slice(base, g.Size())
	g.Runs(func(d, s, run int) { convertTier(t, &p.h[d], &from[s], run) })
}

// At is the operand at element x of the array p was converted from,
// moved by shift[i] cells along each axis i of the padded copy
// (-pad[i] <= coordinate + shift[i] < dims[i] + pad[i]). It panics when
// x is outside the array or the cell outside the copy.
func (p *Padded) At(x *float32, shift [4]int) Operand {
	size := p.dims[0] * p.dims[1] * p.dims[2] * p.dims[3]
	d := uintptr(unsafe.Pointer(x)) - uintptr(unsafe.Pointer(p.base))
	if p.base == nil || d%4 != 0 || d/4 >= uintptr(size) {
		panic(fmt.Sprintf("bf16.Padded.At: %p is not in the %d values converted from %p", x, size, p.base))
	}
	off, ok := padgrid.Grid{Dims: p.dims, Pad: p.pad}.Index(int(d/4), shift)
	if !ok {
		panic(fmt.Sprintf("bf16.Padded.At: %p moved by %v leaves the padded copy (dimensions %v, pads %v)", x, shift, p.dims, p.pad))
	}
	return Operand{H: &p.h[off]}
}
