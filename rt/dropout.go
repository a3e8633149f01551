package rt

import "math"

// DropoutKey is the Threefry key of one training step's dropout mask of
// the tensor whose identity key is key (ParamKey of the mask's name):
// Threefry4x32Crypto(key, {seed, step}) with seed and step split into
// 32-bit words, low word first. Every (mask, seed, step) has its own
// stream; it does not depend on anything else.
func DropoutKey(key [4]uint32, seed uint64, step int) [4]uint32 {
	s := uint64(step)
	return Threefry4x32Crypto(key, [4]uint32{uint32(seed), uint32(seed >> 32), uint32(s), uint32(s >> 32)})
}

// DropoutMask fills dst with a dropout mask of probability p (0 <= p < 1)
// for one training step. Cells 8j to 8j+7 take the eight 16-bit halves h
// of the words of Threefry4x32Crypto(DropoutKey(key, seed, step), {j, 0,
// 0, 0}), low half first (the 20-round variant: the light one's words are
// biased for consecutive counters). A cell is 0 when h < round(p * 2^16)
// (so p is drawn to within 2^-17) and 1/(1-p), rounded to T, otherwise:
// x * mask keeps x's expectation, as PyTorch's dropout. The mask depends
// only on key, seed, step and the cell: the same bits on every thread
// count and CPU. It panics on p outside [0, 1) and does not allocate.
func DropoutMask[T Float](dst []T, p float64, key [4]uint32, seed uint64, step int) {
	if !(p >= 0 && p < 1) {
		panic("rt: DropoutMask needs 0 <= p < 1")
	}
	checkCells(len(dst))
	inner := DropoutKey(key, seed, step)
	keep := T(1 / (1 - p))
	limit := uint32(math.Round(p * (1 << 16)))
	for j := 0; 8*j < len(dst); j++ {
		w := Threefry4x32Crypto(inner, [4]uint32{uint32(j), 0, 0, 0})
		cells := dst[8*j : min(8*j+8, len(dst))]
		for i := range cells {
			h := (w[i/2] >> (16 * (i % 2))) & 0xffff
			if h < limit {
				cells[i] = 0
			} else {
				cells[i] = keep
			}
		}
	}
}

// RunningUpdate moves a running statistic towards a batch's, as PyTorch's
// BatchNorm does in training: state[i] = (1-momentum)*state[i] +
// momentum*stat[i], computed in float64 and rounded to T. The lengths
// must agree. It does not allocate.
func RunningUpdate[T Float](state, stat []T, momentum float64) {
	if len(state) != len(stat) {
		panic("rt: RunningUpdate: lengths differ")
	}
	for i := range state {
		state[i] = T((1-momentum)*float64(state[i]) + momentum*float64(stat[i]))
	}
}
