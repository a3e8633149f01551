// Package padgrid is the layout rt/bf16.Padded and rt/wino.Padded
// share: a row-major array of up to four dimensions copied into the
// middle of a larger one, with zero margins before and after each
// coordinate.
package padgrid

// Grid is an array's dimensions (outermost first, leading 1s for fewer)
// and the margins each gets on both sides.
type Grid struct {
	Dims, Pad [4]int
}

// Valid reports whether no dimension or margin is negative.
func (g Grid) Valid() bool {
	for i := range g.Dims {
		if g.Dims[i] < 0 || g.Pad[i] < 0 {
			return false
		}
	}
	return true
}

// Size is the number of the array's values.
func (g Grid) Size() int { return g.Dims[0] * g.Dims[1] * g.Dims[2] * g.Dims[3] }

// Len is the number of the padded copy's values.
func (g Grid) Len() int {
	n := 1
	for i := range g.Dims {
		n *= g.Dims[i] + 2*g.Pad[i]
	}
	return n
}

// Runs calls f for each run of the array's values that stays contiguous
// in the copy, with the run's first index in the copy and in the array
// and its length: axis j, the innermost with margins, and the axes
// inside it are contiguous in both, so there is one run for each index
// of the axes outside it.
func (g Grid) Runs(f func(dst, src, n int)) {
	if g.Size() == 0 {
		return
	}
	j := 0
	for i := 3; i >= 0; i-- {
		if g.Pad[i] != 0 {
			j = i
			break
		}
	}
	run := 1
	for i := j; i < 4; i++ {
		run *= g.Dims[i]
	}
	var dst, src [4]int // element strides
	ds, ss := 1, 1
	for i := 3; i >= 0; i-- {
		dst[i], src[i] = ds, ss
		ds *= g.Dims[i] + 2*g.Pad[i]
		ss *= g.Dims[i]
	}
	lead := 0
	for i := range g.Dims {
		lead += g.Pad[i] * dst[i]
	}
	ext := [4]int{1, 1, 1, 1}
	copy(ext[:j], g.Dims[:j])
	for i0 := range ext[0] {
		for i1 := range ext[1] {
			for i2 := range ext[2] {
				for i3 := range ext[3] {
					f(lead+i0*dst[0]+i1*dst[1]+i2*dst[2]+i3*dst[3], i0*src[0]+i1*src[1]+i2*src[2]+i3*src[3], run)
				}
			}
		}
	}
}

// Index is the copy's index of the array's value at index off moved by
// shift[i] cells along each axis i; ok is false when that cell is
// outside the copy (off must be below Size).
func (g Grid) Index(off int, shift [4]int) (idx int, ok bool) {
	st := 1
	for i := 3; i >= 0; i-- {
		c := off%g.Dims[i] + g.Pad[i] + shift[i]
		off /= g.Dims[i]
		if c < 0 || c >= g.Dims[i]+2*g.Pad[i] {
			return 0, false
		}
		idx += c * st
		st *= g.Dims[i] + 2*g.Pad[i]
	}
	return idx, true
}
