package inference

import (
	"fmt"
	"strings"
)

// IndexKind tells which form an axis index takes in a projection.
type IndexKind int

// Index forms (seed documents 2–4).
const (
	// IdxFixed reads or writes the axis at the constant position Index.Offset.
	IdxFixed IndexKind = iota
	// IdxIter drives the axis by iterator Index.Iter.
	IdxIter
	// IdxAffine indexes the axis at sum(Coeff*iter) + Offset (strides,
	// convolutions). The offset already includes minus the left padding;
	// the value may be negative or past the end only on padded axes.
	IdxAffine
	// IdxConcat indexes a concatenated axis: exactly one part is active at
	// a time, and the axis position is the active part's iterator plus the
	// sizes of the parts before it.
	IdxConcat
	// IdxData indexes the axis at a position read from data: the value of
	// the index tensor Index.Data (an index input, graph tensor id) at its
	// own index map Index.DataIndex (IdxFixed or IdxIter entries). Only a
	// gather (`@@`) makes one, on the gathered axis of its first operand.
	IdxData
)

// Term is coeff*iterator.
type Term struct {
	Coeff int
	Iter  int
}

// ConcatPart is one component of a concatenated index: an iterator
// (Iter >= 0) covering Size positions, or a constant block (Iter < 0) of Size
// positions that this operation never addresses (an integer component such
// as the 3 of "3^a").
type ConcatPart struct {
	Iter int
	Size int
}

// Index is the index of one tensor axis as a function of the iterators.
type Index struct {
	Kind   IndexKind
	Iter   int
	Terms  []Term
	Offset int
	Parts  []ConcatPart
	// Data and DataIndex describe an IdxData index.
	Data      int
	DataIndex []Index
}

// Iters returns the iterators the index mentions.
func (x Index) Iters() []int {
	switch x.Kind {
	case IdxIter:
		return []int{x.Iter}
	case IdxAffine:
		out := make([]int, len(x.Terms))
		for i, t := range x.Terms {
			out[i] = t.Iter
		}
		return out
	case IdxConcat:
		var out []int
		for _, p := range x.Parts {
			if p.Iter >= 0 {
				out = append(out, p.Iter)
			}
		}
		return out
	case IdxData:
		var out []int
		for _, d := range x.DataIndex {
			out = append(out, d.Iters()...)
		}
		return out
	}
	return nil
}

// String prints the index as `ocannlgen infer --loops --json` does:
// "i3", "0", "2*i0+i1-1", "concat(i1,i2)".
func (x Index) String() string {
	switch x.Kind {
	case IdxFixed:
		return fmt.Sprint(x.Offset)
	case IdxIter:
		return fmt.Sprintf("i%d", x.Iter)
	case IdxAffine:
		var b strings.Builder
		for i, t := range x.Terms {
			if i > 0 {
				b.WriteString("+")
			}
			if t.Coeff != 1 {
				fmt.Fprintf(&b, "%d*", t.Coeff)
			}
			fmt.Fprintf(&b, "i%d", t.Iter)
		}
		if x.Offset > 0 {
			fmt.Fprintf(&b, "+%d", x.Offset)
		} else if x.Offset < 0 {
			fmt.Fprintf(&b, "%d", x.Offset)
		}
		return b.String()
	case IdxConcat:
		p := make([]string, len(x.Parts))
		for i, c := range x.Parts {
			if c.Iter >= 0 {
				p[i] = fmt.Sprintf("i%d", c.Iter)
			} else {
				p[i] = fmt.Sprint(c.Size)
			}
		}
		return "concat(" + strings.Join(p, ",") + ")"
	case IdxData:
		p := make([]string, len(x.DataIndex))
		for i, d := range x.DataIndex {
			p[i] = d.String()
		}
		return fmt.Sprintf("t%d[%s]", x.Data, strings.Join(p, ","))
	}
	return "?"
}

// Factor is one entry of the product space: a single loop (one iterator)
// or, for concatenation, a coupled factor whose iterators run one after
// another (Iters[k] ranges over 0..Extents[k]-1).
type Factor struct {
	Iters   []int
	Extents []int
}

// Projections is the projection record of one operation (seed document
// 2): the product space (loop nest, outermost first) and the index map of
// every tensor axis, in memory order (batch, output, input).
type Projections struct {
	Product  []Factor
	NumIters int
	// Extent[i] is iterator i's range.
	Extent  []int
	LHS     []Index
	RHS     [][]Index
	LHSDims []int
	RHSDims [][]int
	// Injective: no LHS cell is written twice. Surjective: every LHS cell
	// is written.
	Injective, Surjective bool
	// ZeroInit: the LHS is pre-filled with the accumulator's neutral element
	// (initialize-neutral and not both surjective and injective).
	ZeroInit bool
	// Accumulate: the store reads back the LHS and combines (otherwise a
	// plain store).
	Accumulate bool
}

// Padding is a tensor axis's margin: positions before and after the data.
type Padding struct {
	Left, Right int
}
