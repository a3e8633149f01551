package inference

import "github.com/ocannlgen/ocannlgen/spec/program"

// Order is an order in which inference processes its constraints, for
// the property tests of the formal core's order-independence statements
// (internal/formal, docs/formal.md): canonicity of projections (Thm.
// 7.4), of padding margins (Prop. 8.1), and the determinacy experiments
// of Conjectures 8.2 and 8.3. The zero Order is the order Infer and
// DeriveProjections use; the hook changes no result by itself, only the
// order of processing.
type Order struct {
	// Perm, when not nil, is called with the number n of constraints
	// about to be processed together and returns a permutation of
	// 0..n-1: perm[i] is the constraint processed i-th. Shape inference
	// calls it for each round of its queue (the constraints queued when
	// the round starts) and for each retry of its deferred constraints;
	// projection inference for the list of operations and for each
	// operation's projection equations. It must be a permutation.
	Perm func(n int) []int
	// Batch makes elaboration queue every operation's constraints
	// instead of solving after each operation (stage 1 "online"), so
	// that Perm also mixes the constraints of different operations:
	// they are all solved together, before the closing stages. Errors
	// then name the constraint that failed first in that order.
	Batch bool
}

// InferOrdered is Infer processing constraints in the order o gives.
func InferOrdered(p *program.Program, o Order) (*Graph, error) {
	b := newBuilder()
	b.s.perm = o.Perm
	for i, st := range stages(p) {
		run := st.run
		if i == 0 && o.Batch {
			run = func(b *builder) error {
				b.s.hold = true
				defer func() { b.s.hold = false }()
				return st.run(b)
			}
		}
		if err := run(b); err != nil {
			return nil, b.explainOperand(err)
		}
	}
	return b.g, nil
}

// DeriveProjectionsOrdered is DeriveProjections processing the
// operations, and each operation's projection equations, in the order o
// gives (o.Batch does not apply).
func DeriveProjectionsOrdered(g *Graph, o Order) error {
	return deriveProjections(g, o)
}

// ops returns the operations in the order o gives.
func (o Order) ops(ops []*Op) []*Op { return permuted(o, ops) }

// apply returns the projection equations in the order o gives.
func (o Order) apply(eqs []peq) []peq { return permuted(o, eqs) }

// permuted returns xs reordered by o.Perm (xs itself without one).
func permuted[T any](o Order, xs []T) []T {
	if o.Perm == nil || len(xs) < 2 {
		return xs
	}
	out := make([]T, len(xs))
	for i, j := range o.Perm(len(xs)) {
		out[i] = xs[j]
	}
	return out
}
