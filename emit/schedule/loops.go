package schedule

import (
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// Mode is how the Go loops of a perfect nest run.
type Mode int

// The modes (docs/design.md, "Loop nests").
const (
	// Plain: the loops in order, the store in the innermost one.
	Plain Mode = iota
	// Acc: the trailing reduction loops accumulate in a local variable,
	// loaded from (or initialized to the pre-fill value of) the cell and
	// stored once.
	Acc
	// Jam: the innermost loop is a non-reduction, unit-stride loop and
	// the loop around it a reduction; that reduction loop is unrolled
	// (fully when at most Loops.JamFull long, else by Loops.JamUnroll
	// with a remainder loop) and its copies jammed into the innermost
	// loop, each cell going through a local variable that receives the
	// copies' updates in the original order.
	Jam
)

// String names the mode as the schedule prints it.
func (m Mode) String() string {
	switch m {
	case Acc:
		return "accumulate"
	case Jam:
		return "unroll-and-jam"
	}
	return "plain"
}

// LoopPlan is how the Go loops of a perfect nest run: their order and
// mode, and what the decision learned of the nest.
type LoopPlan struct {
	// Orig are the nest's loops as lowered, Loops in emission order,
	// outermost first; St is the nest's store.
	Orig, Loops []*loopir.For
	St          *loopir.Store
	// Red: loop variable -> reduction loop (the store does not index it).
	Red map[int]bool
	// Safe: the store's index maps the non-reduction loop variables
	// injectively and the value does not read the stored tensor (Reads
	// false), so the nest may be reordered and jammed.
	Safe, Reads bool
	// Bijective: additionally every buffer cell is written at exactly
	// one point of the non-reduction loops (the nest covers the whole,
	// unpadded tensor).
	Bijective bool
	// Mode is the emission mode; AccFrom the first loop of Acc's
	// accumulated suffix; Full: Jam unrolls its reduction completely.
	Mode    Mode
	AccFrom int
	Full    bool
	// CoversAll: every reduction loop runs inside one register
	// accumulation, so a pre-fill can become the accumulator's initial
	// value.
	CoversAll bool
	// Reordered: Loops differ from Orig (unit stride innermost).
	Reordered bool
}

// Loops decides the loop order and the mode in which the Go loops run
// the perfect nest loops (storing st) of p; free are variables bound
// outside the nest (a parallel part's number), lt the target's tuning.
func Loops(p *loopir.Program, loops []*loopir.For, st *loopir.Store, free map[int]bool, lt target.Loops) *LoopPlan {
	pl := &LoopPlan{Orig: loops, Loops: append([]*loopir.For(nil), loops...), St: st, Red: map[int]bool{}}
	inChain := map[int]*loopir.For{}
	for _, l := range loops {
		inChain[l.Var] = l
		pl.Red[l.Var] = true
	}
	for _, x := range st.Index {
		for _, t := range x.Terms {
			if t.Coeff != 0 {
				delete(pl.Red, t.Var)
			}
		}
	}
	pl.Reads = loopir.Reads(st.Value, st.Tensor)
	// Injectivity over the chain's non-reduction variables.
	inj := true
	seen := map[int]bool{}
	ti := &p.Tensors[st.Tensor]
	bij := !ti.Padded() && len(st.Index) == len(ti.BufDims)
	for a, x := range st.Index {
		n := 0
		for _, t := range x.Terms {
			if t.Coeff == 0 || inChain[t.Var] == nil {
				continue
			}
			n++
			if seen[t.Var] {
				inj = false
			}
			seen[t.Var] = true
		}
		if n > 1 {
			inj = false
		}
		if !bij {
			continue
		}
		switch {
		case len(x.Terms) == 0:
			bij = x.Offset == 0 && ti.BufDims[a] == 1
		case len(x.Terms) == 1:
			t := x.Terms[0]
			bij = t.Coeff == 1 && x.Offset == 0 && inChain[t.Var] != nil && inChain[t.Var].Extent == ti.BufDims[a]
		default:
			bij = false
		}
	}
	pl.Safe = inj && !pl.Reads
	pl.Bijective = pl.Safe && bij
	nred := 0
	var lastRed *loopir.For
	for _, l := range loops {
		if pl.Red[l.Var] {
			nred++
			lastRed = l
		}
	}
	// Unit stride innermost: move the loop driving the LHS's last axis
	// (with unit coefficient, also driving the last axis of an operand)
	// inside the reduction loops, when it is the last non-reduction loop.
	if pl.Safe && nred > 0 && len(st.Index) > 0 {
		last := st.Index[len(st.Index)-1]
		if free != nil {
			// A parallel part's number is a constant offset here.
			var ts []loopir.IndexTerm
			for _, t := range last.Terms {
				if !free[t.Var] {
					ts = append(ts, t)
				}
			}
			last.Terms = ts
		}
		if len(last.Terms) == 1 && last.Terms[0].Coeff == 1 && inChain[last.Terms[0].Var] != nil && !pl.Red[last.Terms[0].Var] {
			v := last.Terms[0].Var
			unit := false
			loopir.WalkLoads(st.Value, func(l *loopir.Load) {
				if n := len(l.Index); n > 0 {
					for _, t := range l.Index[n-1].Terms {
						unit = unit || (t.Var == v && t.Coeff == 1)
					}
				}
			})
			vpos := -1
			for i, l := range loops {
				if l.Var == v {
					vpos = i
				}
			}
			lastN := true
			for _, l := range loops[vpos+1:] {
				lastN = lastN && pl.Red[l.Var]
			}
			ext := inChain[v].Extent
			if unit && lastN && vpos < len(loops)-1 && (ext >= 4 || ext >= lastRed.Extent) {
				order := append([]*loopir.For(nil), loops[:vpos]...)
				order = append(order, loops[vpos+1:]...)
				pl.Loops = append(order, inChain[v])
				pl.Reordered = true
			}
		}
	}
	n := len(pl.Loops)
	suffix := 0
	for suffix < n && pl.Red[pl.Loops[n-1-suffix].Var] {
		suffix++
	}
	switch {
	case suffix > 0 && st.Accumulate && !pl.Reads:
		pl.Mode, pl.AccFrom = Acc, n-suffix
		pl.CoversAll = suffix == nred
	case pl.Safe && st.Accumulate && n >= 2 && !pl.Red[pl.Loops[n-1].Var] && pl.Red[pl.Loops[n-2].Var]:
		pl.Mode = Jam
		pl.Full = pl.Loops[n-2].Extent <= lt.JamFull
		pl.CoversAll = pl.Full && nred == 1
	}
	return pl
}
