package program

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/spec"
)

// stripPos zeroes every Pos in the tree rooted at v (a pointer) and turns
// empty slices into nil, so that trees can be compared ignoring positions.
func stripPos(v any) {
	stripValue(reflect.ValueOf(v))
}

var posType = reflect.TypeOf(spec.Pos{})

func stripValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stripValue(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.Zero(posType))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			stripValue(v.Field(i))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			stripValue(v.Index(i))
		}
	}
}

// sameProgram reports whether a and b are equal ignoring positions. It
// modifies both.
func sameProgram(a, b *Program) bool {
	stripPos(a)
	stripPos(b)
	return reflect.DeepEqual(a, b)
}

// mustParse parses src or fails the test.
func mustParse(t *testing.T, src string) *Program {
	t.Helper()
	p, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return p
}

// mustExpr parses an expression or fails the test.
func mustExpr(t *testing.T, src string) Expr {
	t.Helper()
	e, err := ParseExpr(src)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", src, err)
	}
	return e
}

// checkRoundTrip checks that p prints to text that parses back to p.
func checkRoundTrip(t *testing.T, name string, p *Program) {
	t.Helper()
	text := p.String()
	q, err := Parse(text)
	if err != nil {
		t.Errorf("%s: re-parsing the printed program failed: %v\nprinted:\n%s", name, err, text)
		return
	}
	if !sameProgram(p, q) {
		t.Errorf("%s: round trip changed the program\nprinted:\n%s\nre-printed:\n%s", name, text, q.String())
	}
}

// checkErrorPos checks that err is an *Error whose position lies inside src
// (or just past its end), as does every position it cites, each cited
// within the message and before the error's own position.
func checkErrorPos(t *testing.T, src string, err error) *Error {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *Error", err, err)
	}
	lines := strings.Split(src, "\n")
	inside := func(p spec.Pos) bool {
		return p.Line >= 1 && p.Line <= len(lines) && p.Col >= 1 && p.Col <= len(lines[p.Line-1])+1
	}
	if !inside(pe.Pos) {
		t.Fatalf("error %v: position %v outside the source", err, pe.Pos)
	}
	if pe.Msg == "" {
		t.Fatalf("error at %v has an empty message", pe.Pos)
	}
	for _, r := range pe.Related {
		before := r.Pos.Line < pe.Pos.Line || r.Pos.Line == pe.Pos.Line && r.Pos.Col < pe.Pos.Col
		if !inside(r.Pos) || !before || r.Off < 0 || r.Off > len(pe.Msg) || r.Msg == "" {
			t.Fatalf("error %v: bad related position %+v", err, r)
		}
	}
	return pe
}
