package loopir

import (
	"fmt"

	"github.com/ocannlgen/ocannlgen/ops"
)

// passPad applies the padding margins (digest §4.5–4.6): a padded
// tensor's buffer has dims+left+right per axis, every access to it is
// shifted by the left margins, and each operation that reads it first
// resets its margins to the operation's neutral element.
func passPad(p *Program) error {
	if !p.Reached(Looped) {
		return &Error{Pass: "pad", Op: -1, Msg: `the "loops" pass has not run`}
	}
	if p.Reached(Padded) {
		return &Error{Pass: "pad", Op: -1, Msg: "the margins are already applied"}
	}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		t.BufDims = append([]int(nil), t.Dims...)
		for a, m := range t.Padding {
			t.BufDims[a] += m.Left + m.Right
		}
	}
	for _, o := range p.Ops {
		for _, s := range o.Body {
			p.shiftStmt(s)
		}
		var reads []int
		seen := map[int]bool{}
		for _, s := range o.Body {
			WalkStoreLoads(s, func(l *Load) {
				if p.Tensors[l.Tensor].Padded() && !seen[l.Tensor] {
					seen[l.Tensor] = true
					reads = append(reads, l.Tensor)
				}
			})
		}
		if len(reads) == 0 {
			continue
		}
		v := Neutral(opAccum(o.Assignment))
		var pre []Stmt
		for _, t := range reads {
			pre = append(pre, &ResetPadding{Tensor: t, Value: v})
		}
		o.Body = append(pre, o.Body...)
	}
	patchPadding(p)
	return nil
}

// opAccum is the accumulation operator of an assignment.
func opAccum(a Assignment) ops.AccumName {
	switch a := a.(type) {
	case *AccumOp:
		return a.Accum
	case *Block:
		return ops.AccAdd
	}
	return ops.NoAccum
}

func (p *Program) shiftIndex(t int, idx []IndexExpr) {
	ti := &p.Tensors[t]
	if !ti.Padded() {
		return
	}
	for a := range idx {
		if a < len(ti.Padding) {
			idx[a].Offset += ti.Padding[a].Left
		}
	}
}

func (p *Program) shiftStmt(s Stmt) {
	switch s := s.(type) {
	case *For:
		for _, c := range s.Body {
			p.shiftStmt(c)
		}
	case *Store:
		p.shiftIndex(s.Tensor, s.Index)
		p.shiftExpr(s.Value)
	}
}

func (p *Program) shiftExpr(e Expr) {
	switch e := e.(type) {
	case *Load:
		p.shiftIndex(e.Tensor, e.Index)
	case *Apply:
		for _, a := range e.Args {
			p.shiftExpr(a)
		}
	}
}

// passCheck verifies statically that every access of the lowered program
// stays inside its tensor's buffer: an affine index over loop variables
// ranging over boxes attains its extremes at the box corners, so the
// interpreter can never index out of range.
func passCheck(p *Program) error {
	if !p.Reached(Padded) {
		return &Error{Pass: "check", Op: -1, Msg: `the "pad" pass has not run`}
	}
	return p.check()
}

func (p *Program) check() error {
	for _, o := range p.Ops {
		ext := map[int]int{}
		for _, s := range o.Body {
			if err := p.checkStmt(o, s, ext); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Program) checkStmt(o *Operation, s Stmt, ext map[int]int) error {
	switch s := s.(type) {
	case *For:
		if s.Extent <= 0 {
			return nil
		}
		if _, had := ext[s.Var]; had {
			return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: fmt.Sprintf("loop variable i%d is rebound inside its own loop", s.Var)}
		}
		ext[s.Var] = s.Extent
		for _, c := range s.Body {
			if err := p.checkStmt(o, c, ext); err != nil {
				return err
			}
		}
		delete(ext, s.Var)
	case *Store:
		if err := p.checkAccess(o, s.Tensor, s.Index, ext); err != nil {
			return err
		}
		return p.checkExpr(o, s.Value, ext)
	case *Fill:
		return p.checkTensor(o, s.Tensor)
	case *ResetPadding:
		return p.checkTensor(o, s.Tensor)
	case *FetchStmt:
		if err := p.checkTensor(o, s.Tensor); err != nil {
			return err
		}
		if s.Kind == FetchValues && len(s.Values) == 0 && p.Tensors[s.Tensor].Size() > 0 {
			return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: fmt.Sprintf("no values to initialize %s", p.Tensors[s.Tensor].Name)}
		}
	case nil:
		return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: "nil statement"}
	}
	return nil
}

func (p *Program) checkTensor(o *Operation, t int) error {
	if t < 0 || t >= len(p.Tensors) {
		return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: fmt.Sprintf("tensor %d does not exist", t)}
	}
	return nil
}

func (p *Program) checkExpr(o *Operation, e Expr, ext map[int]int) error {
	switch e := e.(type) {
	case *Load:
		return p.checkAccess(o, e.Tensor, e.Index, ext)
	case *Apply:
		if n := Arity(e.Prim); n == 0 || n != len(e.Args) {
			return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: fmt.Sprintf("primitive %q applied to %d operand(s)", e.Prim, len(e.Args))}
		}
		for _, a := range e.Args {
			if err := p.checkExpr(o, a, ext); err != nil {
				return err
			}
		}
	case *Const:
	default:
		return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: fmt.Sprintf("unknown expression %T", e)}
	}
	return nil
}

func (p *Program) checkAccess(o *Operation, t int, idx []IndexExpr, ext map[int]int) error {
	if err := p.checkTensor(o, t); err != nil {
		return err
	}
	ti := &p.Tensors[t]
	fail := func(format string, args ...any) error {
		return &Error{Pass: "check", Op: o.Op, Desc: o.Desc, Msg: fmt.Sprintf("access %s: ", formatAccess(ti.Name, idx)) + fmt.Sprintf(format, args...)}
	}
	if len(idx) != len(ti.BufDims) {
		return fail("%d indices for %d axes", len(idx), len(ti.BufDims))
	}
	for a, x := range idx {
		lo, hi := x.Offset, x.Offset
		for _, tm := range x.Terms {
			e, ok := ext[tm.Var]
			if !ok {
				return fail("loop variable i%d is not bound", tm.Var)
			}
			v := tm.Coeff * (e - 1)
			if v < 0 {
				lo += v
			} else {
				hi += v
			}
		}
		if lo < 0 || hi >= ti.BufDims[a] {
			return fail("axis %d ranges over %d..%d, outside the buffer's 0..%d", a, lo, hi, ti.BufDims[a]-1)
		}
	}
	return nil
}
