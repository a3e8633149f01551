package gocode

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// Chained parallel nests: the rule is schedule.Chain's (see
// emit/schedule/chain.go); the Go emitter applies it to the operations
// as it renders them, and rewrites the code of a chain's nests as one
// rt.Region.RunSeq job (flushSeq).

// parUnit is one parallel nest as parRunDoc emits it: its access
// summary for chaining and its code.
type parUnit struct {
	*schedule.Unit
	// rec is the task record's variable; code the statements parRunDoc
	// returned, code[run] the Region.Run call.
	rec  string
	code []jen.Code
	run  int
	// pre is what runs before the parts (a fill the Go loops need, an
	// assembly kernel's pre-fill): it writes only Unit.PreWrites, as a
	// whole, and runs before the chain's job.
	pre []jen.Code
}

// rowAccess summarizes the accesses of the nest storing st, split into
// parts of loop split.
func (k *kgen) rowAccess(st *loopir.Store, split *loopir.For, parts int) *parUnit {
	return &parUnit{Unit: schedule.RowAccess(k.p, st, split, parts)}
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
	schedule.Chain
	units []*parUnit // Chain.Units with their code
	start int        // the body index of the first operation's comment
	descs []jen.Code // each operation's description comment
	// hoisted is the code of the operations without a parallel nest met
	// while the chain was open that touch nothing its nests touch: it
	// runs before the chain's job (schedule.Chain.Hoists).
	hoisted []jen.Code
}

// admitsAll reports whether the nests us, in order, may all join the
// chain (an empty chain starts with the first).
func (c *seqChain) admitsAll(us []*parUnit) bool {
	if len(us) == 0 {
		return false
	}
	su := make([]*schedule.Unit, len(us))
	for i, u := range us {
		su[i] = u.Unit
	}
	return c.AdmitsAll(su)
}

// add appends u, whose operation's code starts at body index at with
// comment desc.
func (c *seqChain) add(u *parUnit, at int, desc jen.Code) {
	if len(c.units) == 0 {
		c.start = at
	}
	c.units = append(c.units, u)
	c.Units = append(c.Units, u.Unit)
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
	k.chains = append(k.chains, schedule.Chain{Units: c.Units})
	out := body[:c.start:c.start]
	for _, h := range c.hoisted {
		out = append(out, h, jen.Line())
	}
	args := []jen.Code{jen.Lit(c.units[0].Parts)}
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
