package schedule

import (
	"math"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// ConstLeaves are the tensors of p the emitted code holds as constants
// rather than arrays, with their value: leaves fetched (not in bound,
// the tensors bound to the kernel's parameters), never stored to or
// filled, not padded, whose cells all hold one value (at elem
// precision). Kernels cannot take them as operands; map kernels fold
// them into their expression (FoldConsts).
func ConstLeaves(p *loopir.Program, bound map[int]bool, elem string) map[int]float64 {
	fetch := map[int]*loopir.FetchStmt{}
	written := loopir.Written(p)
	for _, o := range p.Ops {
		loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
			if f, ok := s.(*loopir.FetchStmt); ok {
				fetch[f.Tensor] = f
			}
		})
	}
	out := map[int]float64{}
	for t, f := range fetch {
		if bound[t] || written[t] || p.Tensors[t].Padded() {
			continue
		}
		if v, ok := uniform(f, p.Tensors[t].Size(), elem); ok {
			out[t] = v
		}
	}
	return out
}

// FoldConsts returns e with the loads of constants (value reports them)
// replaced by their value; e itself when it loads none.
func FoldConsts(e loopir.Expr, value func(t int) (float64, bool)) loopir.Expr {
	switch e := e.(type) {
	case *loopir.Load:
		if v, ok := value(e.Tensor); ok {
			return &loopir.Const{Value: v}
		}
	case *loopir.Apply:
		var args []loopir.Expr
		for i, a := range e.Args {
			if f := FoldConsts(a, value); f != a && args == nil {
				args = append([]loopir.Expr(nil), e.Args...)
				args[i] = f
			} else if args != nil {
				args[i] = f
			}
		}
		if args != nil {
			return &loopir.Apply{Prim: e.Prim, Args: args}
		}
	}
	return e
}

// uniform reports whether the n cells of fetch f all hold one value (bit
// for bit: -0 is not 0), and which, without materializing a constant, a
// range or literal values (a leaf may have more cells than memory holds).
func uniform(f *loopir.FetchStmt, n int, elem string) (float64, bool) {
	if n == 0 {
		return 0, true
	}
	switch f.Kind {
	case loopir.FetchZero:
		return 0, true
	case loopir.FetchConst:
		return f.Value, true
	case loopir.FetchRange:
		return 0, n <= 1
	case loopir.FetchValues:
		if len(f.Values) == 0 {
			return 0, true
		}
		v := f.Values[0]
		for _, x := range f.Values[:min(n, len(f.Values))] {
			if math.Float64bits(x) != math.Float64bits(v) {
				return 0, false
			}
		}
		return v, true
	}
	if n > 1<<20 {
		return 0, false // random cells: not all equal
	}
	vs := loopir.FetchCells(f, n, elem)
	v := 0.0
	if len(vs) > 0 {
		v = vs[0]
	}
	for _, x := range vs {
		if math.Float64bits(x) != math.Float64bits(v) {
			return 0, false
		}
	}
	return v, true
}
