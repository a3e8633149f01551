// Package dist is what generated models need for data-parallel training
// across processes and machines: a Comm, the few collectives a training
// step uses, implemented on an existing collective engine (package
// rt/dist/mpi: Open MPI, behind the mpi build tag), and the helpers a
// training loop uses (Shard, MeanGrads32/64, CheckSame).
//
// A data-parallel step on every rank is Backward on the rank's shard of
// the batch, SyncGrads (the gradients averaged across the ranks: every
// rank then holds the same bits), Update. All ranks start from rank 0's
// parameters and optimizer state (BroadcastParams), so they stay
// bit-identical. The package depends on the standard library only.
package dist

import (
	"errors"
	"fmt"
	"math"
)

// Comm is a communicator: size ranks, each a process, that run the same
// collectives in the same order. Every collective of every rank must be
// called with the same buffer lengths. A failed collective returns an
// error naming the call; after one the Comm is unusable.
//
// A collective that cannot complete because another rank failed (Fail),
// left (Close) or did not reach it in time returns an error wrapping
// ErrRankFailed, a *RankError naming those ranks; an implementation
// bounds the wait (package rt/dist/mpi: a deadline per collective), so
// that a failure never leaves the others waiting forever.
//
// AllReduceSum leaves in every rank's buf the elementwise sum of all the
// ranks' bufs, the same bits on every rank (an implementation reduces in
// one fixed order, then broadcasts the result).
type Comm interface {
	// Rank is this process's rank, 0 <= Rank < Size.
	Rank() int
	// Size is the number of ranks.
	Size() int
	// AllReduceSum32 and AllReduceSum64 sum buf across the ranks, in
	// place.
	AllReduceSum32(buf []float32) error
	AllReduceSum64(buf []float64) error
	// Broadcast32 and Broadcast64 copy root's buf into every rank's.
	Broadcast32(buf []float32, root int) error
	Broadcast64(buf []float64, root int) error
	// Barrier returns when every rank has called it.
	Barrier() error
	// Fail tells the other ranks that this one has failed with err (a
	// training loop's own error: a data file that did not load, a loss
	// that is not finite): each of their collectives that this rank did
	// not complete returns a *RankError naming this rank and err's text,
	// at once instead of waiting for it. The Comm is unusable afterwards
	// but for Close. It returns an error only when the message could not
	// be sent.
	Fail(err error) error
	// Close ends the rank's part in the communicator. Once a rank has
	// closed, a collective of the others that it did not complete
	// returns a *RankError naming it.
	Close() error
}

// ErrRankFailed is wrapped by the error of a collective that could not
// complete because another rank failed, left or did not reach it within
// the communicator's deadline; errors.As gives the *RankError.
var ErrRankFailed = errors.New("dist: another rank failed")

// RankError is a collective's error naming the ranks that made it fail.
// It wraps ErrRankFailed, and Err when not nil.
type RankError struct {
	// Call is the collective ("AllReduceSum32", "Broadcast64", ...) and
	// Seq its number among the communicator's collectives, from 1.
	Call string
	Seq  int
	// Ranks are the ranks that failed, left or did not answer, in
	// ascending order.
	Ranks []int
	// Reason is what they did: "failed: " and the error they passed to
	// Fail, "closed its communicator after 12 collectives", "did not
	// reach it within 2m0s ...".
	Reason string
	// Err is an error of this rank's transport behind the failure, if
	// any.
	Err error
}

func (e *RankError) Error() string {
	who := "rank"
	if len(e.Ranks) > 1 {
		who = "ranks"
	}
	for i, r := range e.Ranks {
		if i > 0 {
			who += ","
		}
		who += fmt.Sprintf(" %d", r)
	}
	msg := fmt.Sprintf("dist: %s (collective %d): %s %s", e.Call, e.Seq, who, e.Reason)
	if len(e.Ranks) == 0 {
		msg = fmt.Sprintf("dist: %s (collective %d): %s", e.Call, e.Seq, e.Reason)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrRankFailed, and Err when not nil.
func (e *RankError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrRankFailed, e.Err}
	}
	return []error{ErrRankFailed}
}

// Local is the communicator of a single process (Size 1): every
// collective leaves the buffers as they are, and Fail has no one to
// tell. A training loop written for
// a Comm runs unchanged without MPI.
func Local() Comm { return local{} }

type local struct{}

func (local) Rank() int                              { return 0 }
func (local) Size() int                              { return 1 }
func (local) AllReduceSum32(buf []float32) error     { return nil }
func (local) AllReduceSum64(buf []float64) error     { return nil }
func (local) Broadcast32(buf []float32, _ int) error { return nil }
func (local) Broadcast64(buf []float64, _ int) error { return nil }
func (local) Barrier() error                         { return nil }
func (local) Fail(error) error                       { return nil }
func (local) Close() error                           { return nil }

// Shard is rank's part [lo, hi) of n examples split between size ranks:
// consecutive, as equal as possible, the first n%size ranks one longer.
func Shard(n, rank, size int) (lo, hi int) {
	if size <= 0 || rank < 0 || rank >= size || n < 0 {
		return 0, 0
	}
	q, r := n/size, n%size
	lo = rank*q + min(rank, r)
	hi = lo + q
	if rank < r {
		hi++
	}
	return lo, hi
}

// ErrMismatch is wrapped by CheckSame's error when the ranks hold
// different models.
var ErrMismatch = errors.New("dist: the ranks run different models")

// CheckSame returns an error wrapping ErrMismatch on every rank unless
// all ranks passed the same fingerprint (a model's element type,
// parameter count and shapes, see Fingerprint): rank 0's fingerprint is
// broadcast, each rank compares it with its own, and the number of ranks
// that differ is summed. Its collectives have fixed sizes, so ranks
// holding models of different sizes learn it before any collective of
// their parameters, whose lengths would differ. scratch, of at least 2
// values, holds what the collectives exchange (a generated model passes
// a field of its own, so that the check does not allocate); nil
// allocates it.
func CheckSame(c Comm, fingerprint uint32, scratch []float64) error {
	if len(scratch) < 2 {
		scratch = make([]float64, 2)
	}
	root, bad := scratch[0:1], scratch[1:2]
	root[0], bad[0] = float64(fingerprint), 0
	if err := c.Broadcast64(root, 0); err != nil {
		return err
	}
	if root[0] != float64(fingerprint) {
		bad[0] = 1
	}
	if err := c.AllReduceSum64(bad); err != nil {
		return err
	}
	switch {
	case root[0] != float64(fingerprint):
		return fmt.Errorf("%w: rank %d's model (fingerprint %#x) differs from rank 0's (%#x): every rank must run the same model, with the same element type and parameter shapes", ErrMismatch, c.Rank(), fingerprint, uint32(root[0]))
	case bad[0] > 0:
		return fmt.Errorf("%w: %g of %d ranks run a model that differs from rank 0's (fingerprint %#x)", ErrMismatch, bad[0], c.Size(), fingerprint)
	}
	return nil
}

// MeanGrads32 replaces each buffer by its mean across the ranks: an
// AllReduceSum32 per buffer, then a division by Size (exact for a power
// of two; otherwise rounded once, the same on every rank).
func MeanGrads32(c Comm, bufs ...[]float32) error {
	n := c.Size()
	for _, b := range bufs {
		if err := c.AllReduceSum32(b); err != nil {
			return err
		}
		if n > 1 {
			d := float32(n)
			for i := range b {
				b[i] /= d
			}
		}
	}
	return nil
}

// MeanGrads64 is MeanGrads32 for float64 buffers. (The two stay separate
// functions: a generic one taking the sum as a method value allocates a
// closure per call, and SyncGrads must not allocate.)
func MeanGrads64(c Comm, bufs ...[]float64) error {
	n := c.Size()
	for _, b := range bufs {
		if err := c.AllReduceSum64(b); err != nil {
			return err
		}
		if n > 1 {
			d := float64(n)
			for i := range b {
				b[i] /= d
			}
		}
	}
	return nil
}

// Fingerprint hashes a model's element type ("float32" or "float64") and
// parameter dims (FNV-1a over the type, then the dims of each parameter
// in order, with a separator): two models with the same element type,
// parameter count and shapes get the same fingerprint (31 bits).
func Fingerprint(elem string, dims ...[]int) uint32 {
	h := uint64(1469598103934665603)
	mix := func(v uint64) {
		for i := 0; i < 8; i++ {
			h ^= v & 0xff
			h *= 1099511628211
			v >>= 8
		}
	}
	for i := 0; i < len(elem); i++ {
		mix(uint64(elem[i]))
	}
	mix(math.MaxUint64)
	for _, d := range dims {
		for _, x := range d {
			mix(uint64(x))
		}
		mix(math.MaxUint64)
	}
	return uint32(h) & 0x7fffffff
}

// BroadcastAll32 copies root's buffers into every rank's, one Broadcast32
// each.
func BroadcastAll32(c Comm, root int, bufs ...[]float32) error {
	for _, b := range bufs {
		if err := c.Broadcast32(b, root); err != nil {
			return err
		}
	}
	return nil
}

// BroadcastAll64 is BroadcastAll32 for float64 buffers.
func BroadcastAll64(c Comm, root int, bufs ...[]float64) error {
	for _, b := range bufs {
		if err := c.Broadcast64(b, root); err != nil {
			return err
		}
	}
	return nil
}

// BroadcastStep copies root's optimizer step count into every rank's.
func BroadcastStep(c Comm, root int, step *int) error {
	s := [1]float64{float64(*step)}
	if err := c.Broadcast64(s[:], root); err != nil {
		return err
	}
	*step = int(s[0])
	return nil
}
