package gocode

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/rt"
)

// Chained parallel nests. Consecutive operations that are each one
// parallel nest split the same way (the same number of parts of the
// same loop extent) run as one job, rt.Region.RunSeq: part j runs part
// j of each nest in order, and the nests share one barrier instead of
// one each. That is sound when part j of a later nest touches only
// cells that part j of the earlier ones wrote, or that no earlier nest
// writes: for every array one of the nests writes and another touches,
// every access in both indexes the array's first buffer axis by exactly
// the split variable (the array has that many rows), so parts touch
// disjoint rows, the same ones in every nest. Arrays only read may be
// read anyhow. A nest with partial sums combines them after the job:
// its output is written with no split index, so no other nest of the
// chain may touch it. What a nest needs before its parts (a fill of its
// output for the Go loops, an assembly kernel's pre-fill) runs before
// the chain's job, so the nest joins only when no earlier nest of the
// chain touches that output. An operation without a parallel nest that
// touches nothing the chain's nests touch (a scalar, a fill of gradients
// the forward nests do not touch) runs before the chain's job; other
// code between the nests ends a chain. The parts compute what they computed as
// separate jobs, so the bits do not change, on any number of threads.

// parUnit is one parallel nest as parRunDoc emits it, with the accesses
// chaining needs.
type parUnit struct {
	// parts and extent: the nest runs in parts parts of a loop of extent
	// values.
	parts, extent int
	// rows holds every array the nest touches: true when each of its
	// accesses indexes the first buffer axis by exactly the split
	// variable. writes holds the arrays the nest writes.
	rows   map[int]bool
	writes map[int]bool
	// rec is the task record's variable; code the statements parRunDoc
	// returned, code[run] the Region.Run call.
	rec  string
	code []jen.Code
	run  int
	// pre is what runs before the parts (a fill the Go loops need, an
	// assembly kernel's pre-fill): it writes only preWrites, as a whole,
	// so the nest joins a chain only when no earlier nest of the chain
	// touches them, and pre then runs before the chain's job.
	pre       []jen.Code
	preWrites []int
}

// rowAccess summarizes the accesses of the nest storing st, split into
// parts of loop split.
func (k *kgen) rowAccess(st *loopir.Store, split *loopir.For, parts int) *parUnit {
	u := &parUnit{parts: parts, extent: split.Extent, rows: map[int]bool{}, writes: map[int]bool{st.Tensor: true}}
	note := func(t int, idx []loopir.IndexExpr) {
		rowed := len(idx) > 0 && idx[0].Offset == 0 && len(idx[0].Terms) == 1 &&
			idx[0].Terms[0] == (loopir.IndexTerm{Coeff: 1, Var: split.Var}) &&
			len(k.p.Tensors[t].BufDims) > 0 && k.p.Tensors[t].BufDims[0] == split.Extent
		if prev, seen := u.rows[t]; seen {
			rowed = rowed && prev
		}
		u.rows[t] = rowed
	}
	note(st.Tensor, st.Index)
	loopir.WalkLoads(st.Value, func(l *loopir.Load) { note(l.Tensor, l.Index) })
	return u
}

// pureUnits returns the parallel nests an operation's code consists of
// (its description comment, then each nest's statements, what runs
// before its parts included, in order), or nil.
func pureUnits(code []jen.Code, units []*parUnit) []*parUnit {
	if len(units) == 0 {
		return nil
	}
	i := 1
	for _, u := range units {
		if len(u.code) == 0 {
			return nil
		}
		for _, c := range u.pre {
			if i >= len(code) || code[i] != c {
				return nil
			}
			i++
		}
		if i+len(u.code) > len(code) || code[i] != u.code[0] {
			return nil
		}
		i += len(u.code)
	}
	if i != len(code) {
		return nil
	}
	return units
}

// seqChain is the chain being built: its nests and where each one's
// operation starts in the kernel body.
type seqChain struct {
	units []*parUnit
	start int        // the body index of the first operation's comment
	descs []jen.Code // each operation's description comment
	// hoisted is the code of the operations without a parallel nest met
	// while the chain was open that touch nothing its nests touch: it
	// runs before the chain's job (see hoists).
	hoisted []jen.Code
}

// hoists reports whether an operation touching tensors ts (and running
// no parallel nest) may move before the chain's job: no nest of the
// chain touches any of them. Nests joining the chain later run after it
// as they did, so only the earlier ones matter.
func (c *seqChain) hoists(ts map[int]bool) bool {
	if len(c.units) == 0 {
		return false
	}
	for _, u := range c.units {
		for t := range ts {
			if _, touched := u.rows[t]; touched {
				return false
			}
			for _, w := range u.preWrites {
				if w == t {
					return false
				}
			}
		}
	}
	return true
}

// admits reports whether u may join the chain (see the rule above).
func (c *seqChain) admits(u *parUnit) bool {
	if len(c.units) == 0 || len(c.units) >= rt.MaxSeq {
		return false
	}
	if u.parts != c.units[0].parts || u.extent != c.units[0].extent {
		return false
	}
	for _, v := range c.units {
		for _, t := range u.preWrites {
			if _, touched := v.rows[t]; touched {
				return false
			}
		}
		for t, uRows := range u.rows {
			vRows, shared := v.rows[t]
			if shared && (u.writes[t] || v.writes[t]) && !(uRows && vRows) {
				return false
			}
		}
	}
	return true
}

// admitsAll reports whether the nests us, in order, may all join the
// chain (an empty chain starts with the first).
func (c *seqChain) admitsAll(us []*parUnit) bool {
	if len(us) == 0 {
		return false
	}
	d := seqChain{units: append([]*parUnit(nil), c.units...)}
	for _, u := range us {
		if len(d.units) > 0 && !d.admits(u) || len(d.units) >= rt.MaxSeq {
			return false
		}
		d.units = append(d.units, u)
	}
	return true
}

// add appends u, whose operation's code starts at body index at with
// comment desc.
func (c *seqChain) add(u *parUnit, at int, desc jen.Code) {
	if len(c.units) == 0 {
		c.start = at
	}
	c.units = append(c.units, u)
	c.descs = append(c.descs, desc)
}

// flushSeq ends the chain: two or more nests are rewritten in body as
// one RunSeq job (every record filled, the job, then every record's
// combination and release, in order); it returns the body.
func (k *kgen) flushSeq(c *seqChain, body []jen.Code) []jen.Code {
	defer func() { *c = seqChain{} }()
	if len(c.units) < 2 {
		// The operations moved out of the way of a chain that did not
		// form run where they were: after the one nest.
		for i, h := range c.hoisted {
			if i > 0 || len(body) > 0 {
				body = append(body, jen.Line())
			}
			body = append(body, h)
		}
		return body
	}
	out := body[:c.start:c.start]
	for _, h := range c.hoisted {
		out = append(out, h, jen.Line())
	}
	args := []jen.Code{jen.Lit(c.units[0].parts)}
	for i, u := range c.units {
		if i > 0 {
			out = append(out, jen.Line())
		}
		out = append(out, c.descs[i])
		out = append(out, u.pre...)
		out = append(out, u.code[:u.run]...)
		args = append(args, jen.Id(u.rec))
	}
	out = append(out, jen.Line(),
		jen.Comment(fmt.Sprintf("// The %d nests above as one job: part j runs part j of each, in order (their", len(c.units))),
		jen.Comment("// parts touch the same rows of the arrays they share; see rt.Region.RunSeq)."),
		jen.Id(k.region).Dot("RunSeq").Call(args...))
	for _, u := range c.units {
		out = append(out, u.code[u.run+1:]...)
	}
	return out
}
