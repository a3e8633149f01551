package schedule

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/rt"
)

// Chains of parallel nests. Consecutive operations that are each one
// parallel nest split the same way (the same number of parts of the
// same loop extent) run as one job, rt.Region.RunSeq: part j runs part
// j of each nest in order, and the nests share one barrier instead of
// one each. That is sound when part j of a later nest touches only
// cells that part j of the earlier ones wrote, or that no earlier nest
// writes: for every array one of the nests writes and another touches,
// every access in both indexes the array's first buffer axis by exactly
// the split variable (the array has that many rows), so parts touch
// disjoint rows, the same ones in every nest (Chain.Admits). Arrays only
// read may be read anyhow. A nest with partial sums combines them after
// the job: its output is written with no split index, so no other nest
// of the chain may touch it. What a nest needs before its parts (a fill
// of its output for the Go loops, an assembly kernel's pre-fill) runs
// before the chain's job, so the nest joins only when no earlier nest of
// the chain touches that output. An operation without a parallel nest
// that touches nothing the chain's nests touch (a scalar, a fill of
// gradients the forward nests do not touch) runs before the chain's job
// (Chain.Hoists); other code between the nests ends a chain. The parts
// compute what they computed as separate jobs, so the bits do not
// change, on any number of threads.

// Unit is one parallel nest (or parallel margin reset) as chaining sees
// it: how it is split and the arrays it touches.
type Unit struct {
	// Parts and Extent: the nest runs in Parts parts of a loop of Extent
	// values.
	Parts, Extent int
	// Rows holds every array the nest touches: true when each of its
	// accesses indexes the first buffer axis by exactly the split
	// variable. Writes holds the arrays the nest writes.
	Rows   map[int]bool
	Writes map[int]bool
	// PreWrites are the arrays what runs before the parts (a fill the Go
	// loops need, an assembly kernel's pre-fill) writes, as a whole: the
	// nest joins a chain only when no earlier nest of the chain touches
	// them, and that code then runs before the chain's job.
	PreWrites []int
	// Op is the index of the unit's operation in the program and Stmt
	// the index of its statement in the operation's body; Var is the
	// variable of the loop split (-1 for a margin reset, split on its
	// first buffer axis). Joined: the nest is below the size rule and
	// was split only to join the chain being formed (JoinSplit).
	// Rechained: the nest is above the size rule and is split on its
	// outermost loop to join the chain (RejoinSplit) instead of on
	// SplitLoop's choice.
	Op, Stmt, Var int
	Joined        bool
	Rechained     bool
}

// RowAccess summarizes the accesses of the nest of p storing st, split
// into parts of loop split.
func RowAccess(p *loopir.Program, st *loopir.Store, split *loopir.For, parts int) *Unit {
	u := &Unit{Parts: parts, Extent: split.Extent, Rows: map[int]bool{}, Writes: map[int]bool{st.Tensor: true}, Var: split.Var}
	note := func(t int, idx []loopir.IndexExpr) {
		rowed := len(idx) > 0 && idx[0].Offset == 0 && len(idx[0].Terms) == 1 &&
			idx[0].Terms[0] == (loopir.IndexTerm{Coeff: 1, Var: split.Var}) &&
			len(p.Tensors[t].BufDims) > 0 && p.Tensors[t].BufDims[0] == split.Extent
		if prev, seen := u.Rows[t]; seen {
			rowed = rowed && prev
		}
		u.Rows[t] = rowed
	}
	note(st.Tensor, st.Index)
	loopir.WalkLoads(st.Value, func(l *loopir.Load) { note(l.Tensor, l.Index) })
	return u
}

// Chain is a chain of parallel nests being formed, in order.
type Chain struct {
	Units []*Unit
}

// Hoists reports whether an operation touching tensors ts (and running
// no parallel nest) may move before the chain's job: no nest of the
// chain touches any of them. Nests joining the chain later run after it
// as they did, so only the earlier ones matter.
func (c *Chain) Hoists(ts map[int]bool) bool {
	if len(c.Units) == 0 {
		return false
	}
	for _, u := range c.Units {
		for t := range ts {
			if _, touched := u.Rows[t]; touched {
				return false
			}
			for _, w := range u.PreWrites {
				if w == t {
					return false
				}
			}
		}
	}
	return true
}

// Admits reports whether u may join the chain (see the rule above); an
// empty chain admits nothing (a chain starts with its first unit).
func (c *Chain) Admits(u *Unit) bool {
	if len(c.Units) == 0 || len(c.Units) >= rt.MaxSeq {
		return false
	}
	if u.Parts != c.Units[0].Parts || u.Extent != c.Units[0].Extent {
		return false
	}
	for _, v := range c.Units {
		for _, t := range u.PreWrites {
			if _, touched := v.Rows[t]; touched {
				return false
			}
		}
		for t, uRows := range u.Rows {
			vRows, shared := v.Rows[t]
			if shared && (u.Writes[t] || v.Writes[t]) && !(uRows && vRows) {
				return false
			}
		}
	}
	return true
}

// AdmitsAll reports whether the units us, in order, may all join the
// chain (an empty chain starts with the first).
func (c *Chain) AdmitsAll(us []*Unit) bool {
	if len(us) == 0 {
		return false
	}
	d := Chain{Units: append([]*Unit(nil), c.Units...)}
	for _, u := range us {
		if len(d.Units) > 0 && !d.Admits(u) || len(d.Units) >= rt.MaxSeq {
			return false
		}
		d.Units = append(d.Units, u)
	}
	return true
}

// JoinSplit splits a perfect nest of p below the size rule when it can
// join chain c: on a loop of the chain's extent into the chain's parts,
// when the chain admits the nest's accesses. In the chain its parts cost
// no barrier of their own (the batch-256 attention step's layer-norm
// statistics, 2048-cell maps over the batch rows, broke its chains and
// ran serially). pl is the nest's Go loop plan, n0 its contraction
// kernel (nil: none); pre: the nest may need a fill of its output before
// its parts, so no earlier nest of the chain may touch that output.
func JoinSplit(pt target.Parallel, c *Chain, p *loopir.Program, loops []*loopir.For, st *loopir.Store, pl *LoopPlan, n0 *asm.Nest, pre bool) (*loopir.For, int) {
	if c == nil || len(c.Units) == 0 {
		return nil, 0
	}
	parts, extent := c.Units[0].Parts, c.Units[0].Extent
	outer := map[int]bool{}
	if n0 != nil {
		if n0.Spec.Kind == asm.Broadcast {
			return nil, 0 // its split is on n, in slivers of whole vectors
		}
		for _, l := range n0.Outer {
			outer[l.Var] = true
		}
	}
	for _, l := range loops[:len(loops)-1] {
		if l.Extent != extent || Parts(pt, l.Extent) != parts || pl.Red[l.Var] || !loopir.OwnsAxis(l.Var, st.Index) ||
			l.Var == pl.Loops[len(pl.Loops)-1].Var || n0 != nil && n0.Spec.Kind == asm.MVec && !outer[l.Var] {
			continue
		}
		u := RowAccess(p, st, l, parts)
		if pre {
			u.PreWrites = []int{st.Tensor}
		}
		if c.Admits(u) {
			return l, parts
		}
	}
	return nil, 0
}

// RejoinSplit is JoinSplit for a map or reduction nest above the size
// rule (no contraction kernel) that SplitLoop splits on a loop the
// chain c does not admit: its outermost loop instead, when that joins
// c with the same parts (nil otherwise). The attention's masked scores,
// their maxima, exponentials, sums and quotients split on the query
// positions (the longest loop) broke the chain of its batch-split
// products into five jobs, each pass over its 3 MB arrays in memory;
// split on the batch, each part's softmax runs on the rows its products
// just wrote. The parts compute what the whole nest does (no loop of
// theirs is a reduction), so the bits do not change.
func RejoinSplit(pt target.Parallel, c *Chain, p *loopir.Program, loops []*loopir.For, st *loopir.Store, pl *LoopPlan, split *loopir.For, parts int, pre bool) *loopir.For {
	if c == nil || len(c.Units) == 0 || split == nil || split == loops[0] || parts != c.Units[0].Parts {
		return nil
	}
	u := RowAccess(p, st, split, parts)
	if pre {
		u.PreWrites = []int{st.Tensor}
	}
	if c.Admits(u) {
		return nil // it joins as split
	}
	l, n := JoinSplit(pt, c, p, loops[:min(2, len(loops))], st, pl, nil, pre)
	if l != loops[0] || n != parts {
		return nil
	}
	return l
}

// Chainable reports whether a perfect nest below the size rule might
// join a chain (JoinSplit): its first stored axis is a loop that could
// be split. A model's kernel keeps the arrays of such nests in its
// scratch, where the pool's goroutines can share them.
func Chainable(pt target.Parallel, loops []*loopir.For, st *loopir.Store) bool {
	if len(loops) < 2 || len(st.Index) == 0 || loopir.Reads(st.Value, st.Tensor) {
		return false
	}
	x := st.Index[0]
	if x.Offset != 0 || len(x.Terms) != 1 || x.Terms[0].Coeff != 1 {
		return false
	}
	for _, l := range loops[:len(loops)-1] {
		if l.Var == x.Terms[0].Var {
			return Parts(pt, l.Extent) > 0
		}
	}
	return false
}

// AttachWinograd records, for each nest at forms' key (its operation and
// statement), how the Winograd tiers run it (Nest.Winograd).
func (s *Schedule) AttachWinograd(forms map[[2]int]string) {
	for i := range s.Nests {
		n := &s.Nests[i]
		n.Winograd = forms[[2]int{n.Op, n.Stmt}]
	}
}

// AttachMaskBlocks records, for each nest (by operation and statement),
// how the assembly tiers run it when its mask is causal
// (Nest.MaskBlocks).
func (s *Schedule) AttachMaskBlocks(forms map[[2]int]string) {
	for i := range s.Nests {
		n := &s.Nests[i]
		n.MaskBlocks = forms[[2]int{n.Op, n.Stmt}]
	}
}

// Attach records what the Go emitter decided while rendering the
// schedule's program (with the same options): units are the parallel
// nests and margin resets it split, chains the chains it formed of them.
// A nest split only to join a chain (Unit.Joined) gets that split. The
// error lists the units whose split differs from the schedule's, and the
// nests the schedule splits that the emitter kept serial (none: the
// schedule and the rendered code agree); the emitter's splits are kept,
// since they are what runs.
func (s *Schedule) Attach(units []*Unit, chains []Chain) error {
	at := map[[2]int]int{}
	for i := range s.Nests {
		at[[2]int{s.Nests[i].Op, s.Nests[i].Stmt}] = i
	}
	var bad []string
	split := map[int]bool{}
	for _, u := range units {
		i, ok := at[[2]int{u.Op, u.Stmt}]
		if u.Var < 0 {
			continue // a margin reset
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("operation %d statement %d: split, but no nest of the schedule", u.Op, u.Stmt))
			continue
		}
		n := &s.Nests[i]
		split[i] = true
		var l *loopir.For
		for _, f := range n.Loops {
			if f.Var == u.Var {
				l = f
			}
		}
		if l == nil {
			bad = append(bad, fmt.Sprintf("%s: split on i%d, not a loop of the nest", n.Desc, u.Var))
			continue
		}
		if u.Joined != (n.Split == nil) || n.Split != nil && (n.Split.Var != u.Var || n.Parts != u.Parts) && !u.Rechained {
			bad = append(bad, fmt.Sprintf("%s: the Go code splits i%d into %d parts, the schedule %s", n.Desc, u.Var, u.Parts, n.splitText()))
		}
		n.Split, n.Parts, n.Joined = l, u.Parts, u.Joined
	}
	for i := range s.Nests {
		if n := &s.Nests[i]; n.Split != nil && !split[i] {
			bad = append(bad, fmt.Sprintf("%s: the schedule %s, the Go code keeps it serial", n.Desc, n.splitText()))
			n.Split, n.Parts, n.Partial = nil, 0, false
		}
	}
	s.Chains = chains
	for c, ch := range chains {
		for _, u := range ch.Units {
			if i, ok := at[[2]int{u.Op, u.Stmt}]; ok && u.Var >= 0 {
				s.Nests[i].Chain = c + 1
			}
		}
	}
	s.Attached = true
	if len(bad) > 0 {
		return fmt.Errorf("the schedule differs from the Go code: %s", strings.Join(bad, "; "))
	}
	return nil
}

// splitText says how the schedule splits n.
func (n *Nest) splitText() string {
	if n.Split == nil {
		return "keeps it serial"
	}
	return fmt.Sprintf("splits i%d into %d parts", n.Split.Var, n.Parts)
}
