package wino

import (
	"fmt"
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt/internal/padgrid"
)

// Padded is a copy of a float32 tensor of up to four dimensions with
// zero margins around them: the input of a convolution's input gradient
// run as a convolution (the output's gradient, padded by the kernel's
// extent less one). The buffer is allocated on the first Copy and kept.
type Padded struct {
	buf       []float32
	base      *float32
	dims, pad [4]int
}

// Copy copies the dims[0] x ... x dims[3] row-major values at base into
// the middle of p's buffer, pad[i] zeros before and after each
// coordinate along dimension i.
func (p *Padded) Copy(base *float32, dims, pad [4]int) {
	g := padgrid.Grid{Dims: dims, Pad: pad}
	if !g.Valid() {
		panic(fmt.Sprintf("wino.Padded.Copy: dimensions %v, pads %v", dims, pad))
	}
	n := g.Len()
	if cap(p.buf) < n {
		p.buf = make([]float32, n)
	} else if p.buf = p.buf[:n]; dims != p.dims || pad != p.pad {
		clear(p.buf) // the margins
	}
	p.buf, p.base, p.dims, p.pad = p.buf[:n], base, dims, pad
	if g.Size() == 0 {
		return
	}
	from := unsafe.Slice(base, g.Size())
	g.Runs(func(d, s, run int) { copy(p.buf[d:d+run], from[s:s+run]) })
}

// At is the element of the copy at the source element x (a pointer into
// the values Copy copied) moved by shift cells along each dimension
// (into the margins when negative).
func (p *Padded) At(x *float32, shift [4]int) *float32 {
	size := p.dims[0] * p.dims[1] * p.dims[2] * p.dims[3]
	d := uintptr(unsafe.Pointer(x)) - uintptr(unsafe.Pointer(p.base))
	if p.base == nil || d%4 != 0 || d/4 >= uintptr(size) {
		panic(fmt.Sprintf("wino.Padded.At: %p is not in the %d values copied from %p", x, size, p.base))
	}
	idx, ok := padgrid.Grid{Dims: p.dims, Pad: p.pad}.Index(int(d/4), shift)
	if !ok {
		panic(fmt.Sprintf("wino.Padded.At: %p moved by %v leaves the padded copy (dimensions %v, pads %v)", x, shift, p.dims, p.pad))
	}
	return &p.buf[idx]
}
