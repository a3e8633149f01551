package inference

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
)

// Basis names. A dimension's basis is a semantic tag: two axes with
// different bases never fuse, even when their sizes agree.
const (
	// BasisDefault is the basis of an axis the user wrote without naming one.
	BasisDefault = "default"
	// BasisBcast is the (absent) basis of the claim-free broadcast unit
	// 1_∅: size one, no claim, broadcasts to anything. Numbers, guessed and
	// collapsed dimensions carry it.
	BasisBcast = ""
	// BasisRows is the basis of a run-time rows axis, declared `<=N`
	// (docs/language.md, "Run-time batch sizes"): a size that may only
	// equal itself. No basis a program writes can be it (it has a space).
	BasisRows = "run-time rows"
)

type dimKind uint8

const (
	dVar dimKind = iota
	dConst
	dAffine
	dConcat
)

// dim is a dimension term: a variable, a ground dimension n_b, an affine
// (strided / convolution) input dimension, or a concatenation.
type dim struct {
	k     dimKind
	v     int32  // dVar: variable id
	n     int    // dConst: size
	basis string // dConst: basis (BasisBcast only with n == 1)
	aff   *affineDim
	parts []dim // dConcat
}

// affineDim is the size relation of an operand axis indexed by
// stride*over (+ dilation*kernel): see spec.Affine.
type affineDim struct {
	stride   int
	over     dim
	conv     bool
	padded   bool
	dilation int
	kernel   dim
	offset   int
}

func dvar(v int32) dim { return dim{k: dVar, v: v} }

func dconst(n int, basis string) dim { return dim{k: dConst, n: n, basis: basis} }

var bcastUnit = dim{k: dConst, n: 1, basis: BasisBcast}

func (d dim) isBcast() bool { return d.k == dConst && d.n == 1 && d.basis == BasisBcast }

// isAtom reports a ground dimension other than the broadcast unit.
func (d dim) isAtom() bool { return d.k == dConst && !d.isBcast() }

func (d dim) String() string {
	switch d.k {
	case dVar:
		return fmt.Sprintf("$%d", d.v)
	case dConst:
		return formatConst(d.n, d.basis)
	case dAffine:
		a := d.aff
		var b strings.Builder
		if a.stride != 1 {
			fmt.Fprintf(&b, "%d*", a.stride)
		}
		b.WriteString(a.over.String())
		if a.conv {
			if a.padded {
				b.WriteString("=+")
			} else {
				b.WriteString("<+")
			}
			if a.dilation != 1 {
				fmt.Fprintf(&b, "%d*", a.dilation)
			}
			b.WriteString(a.kernel.String())
		}
		if a.offset != 0 {
			fmt.Fprintf(&b, "+%d", a.offset)
		}
		return b.String()
	case dConcat:
		s := make([]string, len(d.parts))
		for i, p := range d.parts {
			s[i] = p.String()
		}
		return strings.Join(s, "^")
	}
	return "?"
}

func formatConst(n int, basis string) string {
	switch basis {
	case BasisBcast, BasisDefault:
		return strconv.Itoa(n)
	case BasisRows:
		return "<=" + strconv.Itoa(n) // as declared
	}
	return fmt.Sprintf("%d:%s", n, basis)
}

// row is a row term l·⟨ρ⟩·r (open, v >= 0) or l·◇·r (closed, v < 0).
type row struct {
	beg []dim
	v   int32 // row variable, or -1 when closed
	end []dim
}

func closedRow(dims ...dim) row { return row{v: -1, end: dims} }

func openRow(v int32) row { return row{v: v} }

func (r row) open() bool { return r.v >= 0 }

func (r row) flanks() int { return len(r.beg) + len(r.end) }

// flat returns the row's axes (beg then end); for open rows the variable's
// content is omitted.
func (r row) flat() []dim {
	out := make([]dim, 0, r.flanks())
	out = append(out, r.beg...)
	return append(out, r.end...)
}

func (r row) String() string {
	var beg, end []string
	for _, d := range r.beg {
		beg = append(beg, d.String())
	}
	mid := ""
	if r.open() {
		mid = fmt.Sprintf("..$%d..", r.v)
	}
	for _, d := range r.end {
		end = append(end, d.String())
	}
	return rowText(beg, mid, end)
}

// rowText prints the axes of a row for a message: beg, then mid (an open
// row's variable; "" for a closed row), then end. Each list keeps its
// first 8 and last 4 axes when it is longer, with the number of the
// others between, and each axis is shortened like quoted input
// (spec.Clip), so that a row of 300,000 axes (from a spec that long)
// prints in a few hundred bytes.
func rowText(beg []string, mid string, end []string) string {
	elide := func(parts []string) []string {
		const head, tail = 8, 4
		if len(parts) > head+tail+1 {
			parts = slices.Concat(parts[:head:head], []string{fmt.Sprintf("(%d more)", len(parts)-head-tail)}, parts[len(parts)-tail:])
		}
		for i, p := range parts {
			parts[i] = spec.Clip(p)
		}
		return parts
	}
	parts := elide(slices.Clone(beg))
	if mid != "" {
		parts = append(parts, mid)
	}
	return "[" + strings.Join(append(parts, elide(slices.Clone(end))...), ", ") + "]"
}
