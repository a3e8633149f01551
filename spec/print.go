package spec

import (
	"strconv"
	"strings"
)

// The printer writes the canonical multichar form of a spec: axes and the
// row variable separated by ", ", rows joined by " | " and " -> " (an empty
// batch or input row is omitted), slots joined by "; " and " => ".
// Pure striding always shows its stride (`1*i+1`); a convolution shows its
// stride and dilation only when they are not 1 and puts the offset before
// the kernel (`2*o=+1+3*k`), the order OCANNL's own parser accepts. When the
// text would otherwise be read in single-char mode although it holds a name
// longer than one character, a trailing ',' is added to force multichar
// mode.

// String returns the canonical multichar form of the spec, e.g.
// "b | i -> o; i -> h => b | h". It parses back to an equal spec.
func (e *Einsum) String() string {
	slots := make([][3]string, 0, len(e.RHS)+1)
	long := false
	for i := range e.RHS {
		slots = append(slots, slotRows(&e.RHS[i]))
		long = long || e.RHS[i].hasLongName()
	}
	slots = append(slots, slotRows(&e.LHS))
	long = long || e.LHS.hasLongName()
	if long {
		forceMultichar(slots)
	}
	parts := make([]string, len(e.RHS))
	for i := range e.RHS {
		parts[i] = joinSlot(slots[i])
	}
	rhs := strings.Join(parts, "; ")
	lhs := joinSlot(slots[len(slots)-1])
	return strings.TrimSpace(strings.TrimSpace(rhs) + " => " + lhs)
}

// String returns the canonical multichar form of the slot, e.g.
// "b | i -> o" or "..v.., a". A slot with no axes and no row variables
// prints as "->" so that the text still parses with ParseSlot.
func (s *Slot) String() string {
	rows := [][3]string{slotRows(s)}
	if s.hasLongName() {
		forceMultichar(rows)
	}
	out := joinSlot(rows[0])
	if out == "" {
		return "->"
	}
	return out
}

// slotRows prints the three rows of a slot, in batch, input, output order.
func slotRows(s *Slot) [3]string {
	var out [3]string
	for k := range s.Rows {
		out[k] = rowString(&s.Rows[k])
	}
	return out
}

// joinSlot joins printed rows with the row separators, omitting an empty
// batch or input row.
func joinSlot(rows [3]string) string {
	var b strings.Builder
	if rows[Batch] != "" {
		b.WriteString(rows[Batch])
		b.WriteString(" | ")
	}
	if rows[Input] != "" {
		b.WriteString(rows[Input])
		b.WriteString(" -> ")
	}
	b.WriteString(rows[Output])
	return strings.TrimSpace(b.String())
}

// forceMultichar appends a ',' to the last non-empty row unless the printed
// rows already contain a multichar trigger.
func forceMultichar(slots [][3]string) {
	var all strings.Builder
	for _, rows := range slots {
		for _, r := range rows {
			all.WriteString(r)
		}
	}
	if IsMultichar(all.String()) {
		return
	}
	order := [3]Kind{Output, Input, Batch}
	for i := len(slots) - 1; i >= 0; i-- {
		for _, k := range order {
			if slots[i][k] != "" {
				slots[i][k] += ","
				return
			}
		}
	}
}

// rowString prints a row's items separated by ", ".
func rowString(r *Row) string {
	items := make([]string, 0, len(r.Beg)+len(r.End)+1)
	for i := range r.Beg {
		items = append(items, r.Beg[i].String())
	}
	if r.HasVar {
		if r.Ellipsis {
			items = append(items, "...")
		} else {
			items = append(items, ".."+r.Var+"..")
		}
	}
	for i := range r.End {
		items = append(items, r.End[i].String())
	}
	return strings.Join(items, ", ")
}

// String returns the axis in multichar syntax: "i", "0", "2*o<+3*k" or
// "a^b^3".
func (a Axis) String() string {
	switch a.Kind {
	case AxisLabel:
		return a.Label
	case AxisFixed:
		return strconv.Itoa(a.Fixed)
	case AxisAffine:
		if a.Affine == nil {
			return "<nil affine>"
		}
		return a.Affine.String()
	case AxisConcat:
		parts := make([]string, len(a.Concat))
		for i, c := range a.Concat {
			if c.Label != "" {
				parts[i] = c.Label
			} else {
				parts[i] = strconv.Itoa(c.Size)
			}
		}
		return strings.Join(parts, "^")
	}
	return "<bad axis>"
}

// String returns the affine expression in multichar syntax, e.g. "2*i+1",
// "o=+k" or "2*o<+1+3*k".
func (f *Affine) String() string {
	var b strings.Builder
	if f.Stride != 1 || f.Conv == nil {
		b.WriteString(strconv.Itoa(f.Stride))
		b.WriteByte('*')
	}
	b.WriteString(f.Over)
	if f.Conv == nil {
		if f.Offset != 0 {
			b.WriteByte('+')
			b.WriteString(strconv.Itoa(f.Offset))
		}
		return b.String()
	}
	if f.Conv.Padded {
		b.WriteString("=+")
	} else {
		b.WriteString("<+")
	}
	if f.Offset != 0 {
		b.WriteString(strconv.Itoa(f.Offset))
		b.WriteByte('+')
	}
	if f.Conv.Dilation != 1 {
		b.WriteString(strconv.Itoa(f.Conv.Dilation))
		b.WriteByte('*')
	}
	b.WriteString(f.Conv.Kernel)
	return b.String()
}

// hasLongName reports whether the slot uses a name longer than one
// character, which only multichar mode can express.
func (s *Slot) hasLongName() bool {
	for k := range s.Rows {
		r := &s.Rows[k]
		if r.HasVar && !r.Ellipsis && len(r.Var) > 1 {
			return true
		}
		for _, a := range r.Axes() {
			if a.Kind == AxisLabel && len(a.Label) > 1 {
				return true
			}
		}
	}
	return false
}
