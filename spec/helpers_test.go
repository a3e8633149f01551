package spec

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// dumpEinsum renders a parsed einsum in a debug notation that does not use
// the package's printer: slots as "b[...] i[...] o[...]" with empty rows
// omitted, labels bare, fixed indices as "#n", '...' as "...(kind)",
// '..v..' as "..v..", affine axes as "A(s*over+off)" or
// "A(s*over+off =+ d*kernel)", concatenations as "C[a b 3]".
func dumpEinsum(e *Einsum) string {
	parts := make([]string, len(e.RHS))
	for i := range e.RHS {
		parts[i] = dumpSlot(&e.RHS[i])
	}
	return strings.Join(parts, " ; ") + " => " + dumpSlot(&e.LHS)
}

func dumpSlot(s *Slot) string {
	var out []string
	for k, name := range [3]string{"b", "i", "o"} {
		r := &s.Rows[k]
		if !r.HasVar && len(r.Beg) == 0 && len(r.End) == 0 {
			continue
		}
		var items []string
		for _, a := range r.Beg {
			items = append(items, dumpAxis(a))
		}
		if r.HasVar {
			if r.Ellipsis {
				items = append(items, "...("+r.Var+")")
			} else {
				items = append(items, ".."+r.Var+"..")
			}
		}
		for _, a := range r.End {
			items = append(items, dumpAxis(a))
		}
		out = append(out, name+"["+strings.Join(items, " ")+"]")
	}
	return strings.Join(out, " ")
}

func dumpAxis(a Axis) string {
	switch a.Kind {
	case AxisLabel:
		return a.Label
	case AxisFixed:
		return fmt.Sprintf("#%d", a.Fixed)
	case AxisAffine:
		f := a.Affine
		s := fmt.Sprintf("A(%d*%s+%d", f.Stride, f.Over, f.Offset)
		if f.Conv != nil {
			mode := "<+"
			if f.Conv.Padded {
				mode = "=+"
			}
			s += fmt.Sprintf(" %s %d*%s", mode, f.Conv.Dilation, f.Conv.Kernel)
		}
		return s + ")"
	case AxisConcat:
		var ps []string
		for _, c := range a.Concat {
			if c.Label != "" {
				ps = append(ps, c.Label)
			} else {
				ps = append(ps, fmt.Sprintf("%d", c.Size))
			}
		}
		return "C[" + strings.Join(ps, " ") + "]"
	}
	return "?"
}

// stripEinsum returns a deep copy of e with every column, Src and
// Multichar zeroed and empty slices normalised to nil, so that
// reflect.DeepEqual compares only the structure.
func stripEinsum(e *Einsum) *Einsum {
	out := &Einsum{RHS: make([]Slot, len(e.RHS))}
	for i := range e.RHS {
		out.RHS[i] = *stripSlot(&e.RHS[i])
	}
	out.LHS = *stripSlot(&e.LHS)
	return out
}

func stripSlot(s *Slot) *Slot {
	out := &Slot{}
	for k := range s.Rows {
		r := s.Rows[k]
		out.Rows[k] = Row{
			Beg:      stripAxes(r.Beg),
			HasVar:   r.HasVar,
			Var:      r.Var,
			Ellipsis: r.Ellipsis,
			End:      stripAxes(r.End),
		}
	}
	return out
}

func stripAxes(as []Axis) []Axis {
	if len(as) == 0 {
		return nil
	}
	out := make([]Axis, len(as))
	for i, a := range as {
		b := Axis{Kind: a.Kind, Label: a.Label, Fixed: a.Fixed}
		if a.Affine != nil {
			f := *a.Affine
			f.OverCol = 0
			if f.Conv != nil {
				c := *f.Conv
				c.KernelCol = 0
				f.Conv = &c
			}
			b.Affine = &f
		}
		for _, c := range a.Concat {
			c.Col = 0
			b.Concat = append(b.Concat, c)
		}
		out[i] = b
	}
	return out
}

// equalEinsum reports whether two einsums are equal ignoring columns, Src
// and Multichar.
func equalEinsum(a, b *Einsum) bool {
	return reflect.DeepEqual(stripEinsum(a), stripEinsum(b))
}

// equalSlot reports whether two slots are equal ignoring columns.
func equalSlot(a, b *Slot) bool {
	return reflect.DeepEqual(stripSlot(a), stripSlot(b))
}

// checkSpecError verifies that err is a *Error for src with a column inside
// [1, len(src)+1] and a non-empty message, and returns it.
func checkSpecError(t testing.TB, src string, err error) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("spec %q: error %v (%T) is not a *spec.Error", src, err, err)
	}
	if se.Col < 1 || se.Col > len(src)+1 {
		t.Fatalf("spec %q: error column %d outside [1, %d]: %v", src, se.Col, len(src)+1, se)
	}
	if se.Spec != src {
		t.Fatalf("spec %q: error carries spec %q", src, se.Spec)
	}
	if se.Msg == "" {
		t.Fatalf("spec %q: empty error message", src)
	}
	return se
}

// checkSlotInvariants verifies structural invariants of a parsed slot.
func checkSlotInvariants(t testing.TB, src string, s *Slot) {
	t.Helper()
	inRange := func(what string, col int) {
		if col < 1 || col > len(src)+1 {
			t.Fatalf("spec %q: %s column %d out of range", src, what, col)
		}
	}
	inRange("slot", s.Col)
	for k := range s.Rows {
		r := &s.Rows[k]
		if !r.HasVar {
			if len(r.Beg) != 0 || r.Var != "" || r.Ellipsis {
				t.Fatalf("spec %q: row %v without a row variable has Beg/Var/Ellipsis set", src, Kind(k))
			}
		} else {
			inRange("row variable", r.VarCol)
			if r.Var == "" {
				t.Fatalf("spec %q: empty row variable name", src)
			}
			if r.Ellipsis && r.Var != Kind(k).String() {
				t.Fatalf("spec %q: '...' in row %v named %q", src, Kind(k), r.Var)
			}
		}
		for _, a := range r.Axes() {
			inRange("axis", a.Col)
			switch a.Kind {
			case AxisLabel:
				if a.Label == "" {
					t.Fatalf("spec %q: empty label", src)
				}
			case AxisFixed:
				if a.Fixed < 0 || a.Fixed > maxInt {
					t.Fatalf("spec %q: fixed index %d out of range", src, a.Fixed)
				}
			case AxisAffine:
				f := a.Affine
				if f == nil || f.Stride < 1 || f.Offset < 0 || f.Over == "" {
					t.Fatalf("spec %q: bad affine %+v", src, f)
				}
				inRange("over", f.OverCol)
				if f.Conv != nil {
					if f.Conv.Dilation < 1 || f.Conv.Kernel == "" {
						t.Fatalf("spec %q: bad conv %+v", src, f.Conv)
					}
					inRange("kernel", f.Conv.KernelCol)
				}
			case AxisConcat:
				if len(a.Concat) < 2 {
					t.Fatalf("spec %q: concatenation with %d parts", src, len(a.Concat))
				}
				for _, c := range a.Concat {
					inRange("concat part", c.Col)
					if (c.Label == "") == (c.Size == 0) || c.Size < 0 {
						t.Fatalf("spec %q: bad concat part %+v", src, c)
					}
				}
			default:
				t.Fatalf("spec %q: bad axis kind %d", src, a.Kind)
			}
		}
	}
}

// checkEinsumRoundTrip parses src with ParseEinsum; on success it checks
// invariants and that String() re-parses to an equal einsum whose String()
// is the same. On failure it checks the error's form. It returns the parse
// error, if any.
func checkEinsumRoundTrip(t testing.TB, src string) error {
	t.Helper()
	e, err := ParseEinsum(src)
	if err != nil {
		if e != nil {
			t.Fatalf("spec %q: non-nil result with error", src)
		}
		checkSpecError(t, src, err)
		return err
	}
	if e.Src != src || e.Multichar != IsMultichar(src) {
		t.Fatalf("spec %q: Src %q / Multichar %v wrong", src, e.Src, e.Multichar)
	}
	if len(e.RHS) < 1 {
		t.Fatalf("spec %q: no RHS slots", src)
	}
	for i := range e.RHS {
		checkSlotInvariants(t, src, &e.RHS[i])
	}
	checkSlotInvariants(t, src, &e.LHS)
	printed := e.String()
	e2, err := ParseEinsum(printed)
	if err != nil {
		t.Fatalf("spec %q printed as %q does not re-parse: %v", src, printed, err)
	}
	if !equalEinsum(e, e2) {
		t.Fatalf("spec %q printed as %q re-parses differently:\n got  %s\n want %s", src, printed, dumpEinsum(e2), dumpEinsum(e))
	}
	if again := e2.String(); again != printed {
		t.Fatalf("spec %q: printing is not idempotent: %q then %q", src, printed, again)
	}
	return nil
}

// checkSlotRoundTrip is checkEinsumRoundTrip for ParseSlot.
func checkSlotRoundTrip(t testing.TB, src string) error {
	t.Helper()
	s, err := ParseSlot(src)
	if err != nil {
		if s != nil {
			t.Fatalf("spec %q: non-nil result with error", src)
		}
		checkSpecError(t, src, err)
		return err
	}
	checkSlotInvariants(t, src, s)
	printed := s.String()
	s2, err := ParseSlot(printed)
	if err != nil {
		t.Fatalf("slot %q printed as %q does not re-parse: %v", src, printed, err)
	}
	if !equalSlot(s, s2) {
		t.Fatalf("slot %q printed as %q re-parses differently:\n got  %s\n want %s", src, printed, dumpSlot(s2), dumpSlot(s))
	}
	if again := s2.String(); again != printed {
		t.Fatalf("slot %q: printing is not idempotent: %q then %q", src, printed, again)
	}
	return nil
}
