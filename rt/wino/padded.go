package wino

import (
	"fmt"
	"unsafe"
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
	n := 1
	for i := range dims {
		if dims[i] < 0 || pad[i] < 0 {
			panic(fmt.Sprintf("wino.Padded.Copy: dimensions %v, pads %v", dims, pad))
		}
		n *= dims[i] + 2*pad[i]
	}
	if cap(p.buf) < n {
		p.buf = make([]float32, n)
	} else if p.buf = p.buf[:n]; dims != p.dims || pad != p.pad {
		clear(p.buf) // the margins
	}
	p.buf, p.base, p.dims, p.pad = p.buf[:n], base, dims, pad
	size := dims[0] * dims[1] * dims[2] * dims[3]
	if size == 0 {
		return
	}
	// Runs: the innermost dimensions from the last padded one in.
	j := 0
	for i := 3; i >= 0; i-- {
		if pad[i] != 0 {
			j = i
			break
		}
	}
	run := 1
	for i := j; i < 4; i++ {
		run *= dims[i]
	}
	var dst, src [4]int
	ds, ss := 1, 1
	for i := 3; i >= 0; i-- {
		dst[i], src[i] = ds, ss
		ds *= dims[i] + 2*pad[i]
		ss *= dims[i]
	}
	lead := 0
	for i := range dims {
		lead += pad[i] * dst[i]
	}
	ext := [4]int{1, 1, 1, 1}
	copy(ext[:j], dims[:j])
	from := unsafe.Slice(base, size)
	for i0 := range ext[0] {
		for i1 := range ext[1] {
			for i2 := range ext[2] {
				d := lead + i0*dst[0] + i1*dst[1] + i2*dst[2]
				s := i0*src[0] + i1*src[1] + i2*src[2]
				copy(p.buf[d:d+run], from[s:s+run])
			}
		}
	}
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
	off := int(d / 4)
	idx := 0
	for i := 3; i >= 0; i-- {
		c := off % p.dims[i]
		off /= p.dims[i]
		q := c + p.pad[i] + shift[i]
		if q < 0 || q >= p.dims[i]+2*p.pad[i] {
			panic(fmt.Sprintf("wino.Padded.At: coordinate %d of dimension %d shifted out of the copy", c, i))
		}
		stride := 1
		for k := i + 1; k < 4; k++ {
			stride *= p.dims[k] + 2*p.pad[k]
		}
		idx += q * stride
	}
	return &p.buf[idx]
}
