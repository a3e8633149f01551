// Package inference implements OCANNL's shape inference for ocannlgen:
// a program is elaborated into a tensor graph whose operations emit
// equality and broadcast-inequality constraints over dimension and row
// variables; the solver computes the principal partial solution and the
// staged closing policy commits the remaining variables. See
// docs/design.md for the map from the seed documents' rules to files.
package inference

import (
	"fmt"
	"io"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// InferSource parses src as a program and infers its shapes.
func InferSource(src string) (*Graph, error) {
	p, err := program.Parse(src)
	if err != nil {
		return nil, ParseError(err)
	}
	return Infer(p)
}

// ParseError converts an error of program.Parse into an *Error of kind
// parse, keeping the position of a *program.Error.
func ParseError(err error) error {
	if pe, ok := err.(*program.Error); ok {
		return &Error{Kind: KindParse, Pos: pe.Pos, Msg: pe.Msg, Related: pe.Related, Err: err}
	}
	return &Error{Kind: KindParse, Msg: err.Error(), Err: err}
}

// Infer elaborates a parsed program into a graph and infers every
// tensor's shape. On failure the error is an *Error.
func Infer(p *program.Program) (*Graph, error) {
	return InferObserved(p, nil)
}

// Stages returns the names of the stages of shape inference, in the
// order Infer runs them: "elaborate" (stage 1, online), the stages of
// the closing policy (docs/design.md, "Closing"), and "shapes" (the
// solved shapes read back into the graph).
func Stages() []string {
	var out []string
	for _, st := range stages(nil) {
		out = append(out, st.name)
	}
	return out
}

// InferObserved is Infer calling observe (when not nil) after each stage
// with the stage's name and a function printing the inference state
// (every tensor's rows as far as they are solved, and the open
// variables and deferred constraints). An error from observe stops
// inference and is returned as is, with the graph when it was the last
// stage (the shapes are complete).
func InferObserved(p *program.Program, observe func(stage string, dump func(io.Writer)) error) (*Graph, error) {
	b := newBuilder()
	sts := stages(p)
	for i, st := range sts {
		b.s.stage = int8(i)
		if err := st.run(b); err != nil {
			return nil, b.explainOperand(err)
		}
		if observe != nil {
			if err := observe(st.name, b.dump); err != nil {
				if i == len(sts)-1 {
					return b.g, err
				}
				return nil, err
			}
		}
	}
	b.g.prov = &provSource{s: b.s, stages: Stages()}
	return b.g, nil
}

// finish reads the solved shapes back into the graph.
func (b *builder) finish() error {
	s := b.s
	for _, t := range b.g.Tensors {
		for k := range 3 {
			r := s.resolveRow(t.rows[k])
			if r.open() {
				return &Error{Kind: KindRankCycle, Pos: t.Pos, Msg: fmt.Sprintf("internal error: row %d of %s is unresolved", k, t.Name)}
			}
			var dims []Dim
			for _, d := range r.flat() {
				d = s.resolve(d)
				if s.conflict != nil {
					// A concatenation or convolution fusing axes with
					// different named bases: its size cannot carry a basis.
					o := int32(0)
					if v := t.rows[k].v; v >= 0 {
						o = s.rows[v].origin
					}
					e := s.wrap(s.conflict, o).(*Error)
					if t.Op >= 0 {
						op := b.g.Ops[t.Op]
						e.Pos, e.Op = op.Pos, op.Desc
					}
					return e
				}
				if d.k != dConst {
					return &Error{Kind: KindRankCycle, Pos: t.Pos, Msg: fmt.Sprintf("internal error: an axis of %s is unresolved: %v", t.Name, d)}
				}
				dims = append(dims, Dim{Size: d.n, Basis: d.basis})
			}
			switch k {
			case 0:
				t.Shape.Batch = dims
			case 1:
				t.Shape.Input = dims
			case 2:
				t.Shape.Output = dims
			}
		}
	}
	for _, t := range b.g.Tensors {
		if err := checkSize(t); err != nil {
			return err
		}
		for k := range 3 {
			t.Split[k] = len(s.resolveRow(t.rows[k]).beg)
		}
	}
	for _, op := range b.g.Ops {
		if op.env == nil {
			continue
		}
		op.Labels = map[string]int{}
		for name, d := range op.env.labels {
			op.Labels[name] = s.resolve(d).n
		}
	}
	for _, id := range b.dimRefs {
		t := b.g.Tensors[id]
		c, ok := b.captures[t.DimName]
		if t.dimCap != nil {
			c, ok = *t.dimCap, true
		}
		if !ok {
			return errAt(KindName, t.Pos, "dim %s: no spec captures a label or row variable named %s", spec.Clip(t.DimName), spec.Quote(t.DimName))
		}
		if c.isRow {
			r := s.resolveRow(openRow(c.rv))
			n := 1
			for _, d := range r.flat() {
				d = s.resolve(d)
				n *= d.n
				t.DimRows = t.DimRows || d.basis == BasisRows
			}
			t.DimValue = n
		} else {
			d := s.resolve(c.d)
			t.DimValue, t.DimRows = d.n, d.basis == BasisRows
		}
	}
	return nil
}
