package inference

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// provSizeText is how the provenance prints a size (provSource.sizeText).
func provSizeText(d Dim) string {
	switch d.Basis {
	case BasisBcast:
		return "1 (broadcast)"
	case BasisDefault:
		return strconv.Itoa(d.Size)
	}
	return strconv.Itoa(d.Size) + ":" + d.Basis
}

// TestProvenanceEndsAtTheSize checks Graph.Provenance on every example
// program and shared case that infers: each row's provenance has the
// row's axes; an axis's chain of bindings ends in the size inference
// gave it (or the axis was created with it); a row's chain ends closed.
func TestProvenanceEndsAtTheSize(t *testing.T) {
	files, _ := filepath.Glob("../examples/programs/*.ocl")
	cases, _ := filepath.Glob("../../shared/cases/*.ocl")
	files = append(files, cases...)
	if len(files) < 3 {
		t.Fatalf("found %d programs", len(files))
	}
	checked, chained := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := InferSource(string(src))
		if err != nil {
			continue // errors and model files
		}
		for _, tn := range g.Tensors {
			prov, ok := g.Provenance(tn.ID)
			if !ok {
				t.Fatalf("%s: no provenance for %s", f, tn.Name)
			}
			for k, dims := range [3][]Dim{tn.Shape.Batch, tn.Shape.Input, tn.Shape.Output} {
				p := prov[k]
				if len(p.Axes) != len(dims) {
					t.Errorf("%s: %s row %d: %d axes in the provenance, %d in the shape", f, tn.Name, k, len(p.Axes), len(dims))
					continue
				}
				if n := len(p.Steps); n > 0 && !p.Steps[n-1].Final {
					t.Errorf("%s: %s row %d: the row's chain ends open: %v", f, tn.Name, k, p.Steps[n-1])
				}
				for i, a := range p.Axes {
					want := provSizeText(dims[i])
					checked++
					if st, ok := a.Fixed(); ok {
						chained++
						if !st.Final {
							t.Errorf("%s: %s row %d axis %d: the chain ends open at %v", f, tn.Name, k, i, st)
						} else if st.Value != want && !strings.ContainsAny(st.Value, "*+^") {
							t.Errorf("%s: %s row %d axis %d: the chain ends at %s, the axis is %s", f, tn.Name, k, i, st.Value, want)
						}
						if st.Op == "" || st.Stage == "" {
							t.Errorf("%s: %s row %d axis %d: a step without its operation or stage: %+v", f, tn.Name, k, i, st)
						}
					} else if a.Given != want && !strings.ContainsAny(a.Given, "*+^") {
						t.Errorf("%s: %s row %d axis %d: created as %q, the axis is %s", f, tn.Name, k, i, a.Given, want)
					}
				}
			}
		}
	}
	if chained < 100 || checked < 200 {
		t.Fatalf("only %d axes checked, %d with a chain", checked, chained)
	}
}

// TestProvenanceNamesTheSource checks what the provenance says of
// examples/programs/mlp.ocl: w1's input axis gets 2 from points through
// the matrix product at 7:21; its output axis takes h1's 16 at closing
// stage 4 (a leaf axis takes its cap); b1's 16 is given by `o=[16]`;
// h2's batch axis is tied through every operation back to points.
func TestProvenanceNamesTheSource(t *testing.T) {
	src, err := os.ReadFile("../examples/programs/mlp.ocl")
	if err != nil {
		t.Fatal(err)
	}
	g, err := InferSource(string(src))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]int{}
	for _, n := range g.Named {
		named[n.Name] = n.Tensor
	}
	prov := func(name string) [3]RowProv {
		p, _ := g.Provenance(named[name])
		return p
	}
	w1 := prov("w1")
	st, _ := w1[1].Axes[0].Fixed()
	if st.Value != "2" || st.Op != `compose "*" of w1, points` || st.Pos.Line != 7 || st.Pos.Col != 21 || st.Stage != "elaborate" {
		t.Errorf("w1 input axis: %v", st)
	}
	st, _ = w1[2].Axes[0].Fixed()
	if st.Value != "16" || st.Stage != "stage4" {
		t.Errorf("w1 output axis: %v", st)
	}
	if b1 := prov("b1"); b1[2].Axes[0].Given != "16" || len(b1[2].Axes[0].Steps) != 0 {
		t.Errorf("b1 output axis: %+v", b1[2].Axes[0])
	}
	h2 := prov("h2")[0].Axes[0]
	if len(h2.Steps) < 4 {
		t.Fatalf("h2 batch axis: %d steps: %v", len(h2.Steps), h2.Steps)
	}
	if first, last := h2.Steps[0], h2.Steps[len(h2.Steps)-1]; !strings.Contains(first.Op, "relu of _h2.2") || last.Op != `compose "*" of w1, points` || last.Value != "32" {
		t.Errorf("h2 batch axis: first %v, last %v", first, last)
	}
}

// TestConflictSides checks the failing constraint an error reports: a
// broadcast of 3 against 4, with each side's provenance.
func TestConflictSides(t *testing.T) {
	_, err := InferSource("input x : 3\ninput y : 4\nlet z = x + y\n")
	e, ok := AsError(err)
	if !ok || e.Conflict == nil {
		t.Fatalf("error %v has no conflict", err)
	}
	c := e.Conflict
	if c.Relation != "⊑" || !strings.Contains(c.Constraint, "3") || !strings.Contains(c.Constraint, "4") {
		t.Errorf("constraint %q (%s)", c.Constraint, c.Relation)
	}
	if c.Sides[1].Text != "[4]" || len(c.Sides[1].Row.Axes) != 1 || c.Sides[1].Row.Axes[0].Given != "4" {
		t.Errorf("operand side %+v", c.Sides[1])
	}
	if st, ok := c.Sides[0].Row.Axes[0].Fixed(); !ok || st.Value != "3" || !strings.Contains(st.Op, `pointwise "+" of x, y`) {
		t.Errorf("result side %+v", c.Sides[0])
	}
}
