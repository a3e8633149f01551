package rt

import (
	"fmt"
	"math/bits"
)

// Batches draws the mini-batches of a training loop over a dataset of N
// examples, by epochs: each epoch is a permutation of 0..N-1 cut into
// consecutive batches of Size examples. The permutation of epoch e is a
// Fisher-Yates shuffle whose random draws are Threefry-4x32 (the 20-round
// crypto variant: the light one's draws, for consecutive seeds, put the
// examples in some positions half again as often as others) of the
// counter {i, e, e>>32, 0} under a key derived from the seed alone, so it depends only on (seed, e): the same on every machine
// and Go version, and any step can be reached directly (Seek) when a
// checkpointed run resumes. Next does not allocate.
//
// The last batch of an epoch holds the N mod Size examples left over,
// unless DropLast was asked for (every batch then has Size examples, and
// the left-over ones are skipped that epoch): a model entry with
// run-time rows (`<=N`) takes the short batch, a fixed-size one needs
// DropLast.
type Batches struct {
	n, size  int
	dropLast bool
	key      [4]uint32
	perm     []int
	// epoch is the epoch perm holds; pos the index in perm of the next
	// batch's first example.
	epoch, pos int
}

// NewBatches returns the batches of size examples of a dataset of n
// examples, shuffled by seed (dropLast: see Batches). It allocates the
// permutation, once.
func NewBatches(n, size int, seed uint64, dropLast bool) (*Batches, error) {
	switch {
	case n <= 0:
		return nil, fmt.Errorf("rt: batches of an empty dataset (%d examples)", n)
	case size <= 0:
		return nil, fmt.Errorf("rt: batches of %d examples: the batch size must be positive", size)
	case dropLast && size > n:
		return nil, fmt.Errorf("rt: batches of %d examples dropping the last short one, from %d examples: no batch is left", size, n)
	}
	b := &Batches{n: n, size: size, dropLast: dropLast, key: InnerKey(ParamKey("rt.Batches"), seed, true), perm: make([]int, n)}
	b.shuffle(0)
	return b, nil
}

// PerEpoch is the number of batches of an epoch.
func (b *Batches) PerEpoch() int {
	if b.dropLast {
		return b.n / b.size
	}
	return (b.n + b.size - 1) / b.size
}

// Next returns the example indices of the next batch, in the order the
// batch holds them (a view of the epoch's permutation, valid until the
// next call of Next or Seek), and its epoch (0 first).
func (b *Batches) Next() (idx []int, epoch int) {
	end := b.pos + b.size
	if end > b.n && (b.dropLast || b.pos >= b.n) {
		b.shuffle(b.epoch + 1)
		end = b.size
	}
	end = min(end, b.n)
	idx, epoch = b.perm[b.pos:end:end], b.epoch
	b.pos = end
	return idx, epoch
}

// Seek makes the next batch the one of training step step (0 first: the
// batch the step-th call of Next on new Batches returns), so that a run
// resumed from a checkpoint at step s draws what the uninterrupted run
// would have. A negative step counts as 0.
func (b *Batches) Seek(step int) {
	step = max(step, 0)
	per := b.PerEpoch()
	b.shuffle(step / per)
	b.pos = step % per * b.size
}

// shuffle sets perm to the permutation of epoch e and the position to
// its start.
func (b *Batches) shuffle(e int) {
	for i := range b.perm {
		b.perm[i] = i
	}
	for i := b.n - 1; i > 0; i-- {
		r := Threefry4x32Crypto(b.key, [4]uint32{uint32(i), uint32(e), uint32(uint64(e) >> 32), 0})
		hi, _ := bits.Mul64(uint64(r[0])|uint64(r[1])<<32, uint64(i)+1) // uniform in [0, i], bias below 2^-32
		b.perm[i], b.perm[hi] = b.perm[hi], b.perm[i]
	}
	b.epoch, b.pos = e, 0
}

// Gather copies rows idx of src, in order, into dst (row i of dst gets
// src[idx[i]]) and returns the number copied, len(idx): a batch of the
// dataset's rows (an image, a feature vector, a one-hot label: any row
// type) into a model input's array, x[:] of a *[B]R input. It panics when
// dst is shorter than idx, as a slice copy would. It does not allocate.
func Gather[R any](dst, src []R, idx []int) int {
	_ = dst[:len(idx)]
	for i, k := range idx {
		dst[i] = src[k]
	}
	return len(idx)
}
