package loopir

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/rt"
)

// State is the memory of an interpreted program: one buffer per tensor
// (padding margins included), in memory order.
type State[T float32 | float64] struct {
	prog    *Program
	bufs    [][]T
	strides [][]int
	env     []int
	// op is the operation being executed (for error messages).
	op *Operation
	// inputs overrides the initializers of some tensors (RunWith).
	inputs map[int][]float64
}

// accessError is the panic value of an out-of-range access.
type accessError struct {
	tensor int
	index  []int
}

// Run interprets a fully lowered program (Lower's result) with cells of
// type T: the fetches in tensor order, then the operations in program
// order, by a direct walk over the loop-IR tree. Results and targets
// start as zeros. An out-of-range access is reported as an error (the
// "check" pass rules it out beforehand).
func Run[T float32 | float64](p *Program) (*State[T], error) {
	return RunWith[T](p, nil)
}

// RunWith is Run with data for some tensors: inputs maps a tensor index
// to its cells in memory order (without margins), used instead of the
// tensor's initializer. It is how generated kernels are checked against
// the interpreter on the same random operands.
func RunWith[T float32 | float64](p *Program, inputs map[int][]float64) (*State[T], error) {
	for t, vs := range inputs {
		if t < 0 || t >= len(p.Tensors) || len(vs) != p.Tensors[t].Size() {
			return nil, fmt.Errorf("loopir: run: input for tensor %d has %d values, want %d", t, len(vs), p.Tensors[t].Size())
		}
	}
	if !p.Reached(Padded) {
		return nil, fmt.Errorf("loopir: run: the program is not fully lowered (passes run: %v)", p.Done)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	s := newState[T](p)
	s.inputs = inputs
	if err := s.execute(); err != nil {
		return nil, err
	}
	return s, nil
}

// newState allocates zeroed buffers (margins included) for p's tensors.
func newState[T float32 | float64](p *Program) *State[T] {
	s := &State[T]{prog: p, bufs: make([][]T, len(p.Tensors)), strides: make([][]int, len(p.Tensors))}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		s.bufs[i] = make([]T, prod(t.BufDims))
		strides := make([]int, len(t.BufDims))
		n := 1
		for a := len(t.BufDims) - 1; a >= 0; a-- {
			strides[a] = n
			n *= t.BufDims[a]
		}
		s.strides[i] = strides
	}
	maxVar := -1
	for _, o := range p.Ops {
		for _, b := range o.Body {
			maxVar = max(maxVar, maxLoopVar(b))
		}
	}
	s.env = make([]int, maxVar+1)
	return s
}

// execute runs every operation in order; a panic (an out-of-range access
// the static check missed, or a malformed statement) becomes an error
// naming the operation, and for an access the tensor and index.
func (s *State[T]) execute() (err error) {
	p := s.prog
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		where := "run"
		if s.op != nil {
			where = fmt.Sprintf("run: op %d (%s)", s.op.Op, s.op.Desc)
		}
		if ae, ok := r.(accessError); ok {
			err = fmt.Errorf("loopir: %s: index %v out of range for %s (buffer dims %v)", where, ae.index, p.Tensors[ae.tensor].Name, p.Tensors[ae.tensor].BufDims)
			return
		}
		err = fmt.Errorf("loopir: %s: %v", where, r)
	}()
	for _, o := range p.Ops {
		s.op = o
		for _, b := range o.Body {
			s.exec(b)
		}
	}
	s.op = nil
	return nil
}

func maxLoopVar(s Stmt) int {
	m := -1
	if f, ok := s.(*For); ok {
		m = f.Var
		for _, c := range f.Body {
			m = max(m, maxLoopVar(c))
		}
	}
	return m
}

// offset is the flat buffer offset of an access at the current loop
// variables; out-of-range indices panic with an accessError.
func (s *State[T]) offset(t int, idx []IndexExpr) int {
	dims := s.prog.Tensors[t].BufDims
	st := s.strides[t]
	off := 0
	for a := range idx {
		v := s.indexValue(&idx[a])
		if v < 0 || v >= dims[a] {
			panic(s.accessError(t, idx))
		}
		off += v * st[a]
	}
	return off
}

// indexValue evaluates one index at the current loop variables, reading
// a gathered position from its index tensor.
func (s *State[T]) indexValue(x *IndexExpr) int {
	v := x.Offset
	for _, tm := range x.Terms {
		v += tm.Coeff * s.env[tm.Var]
	}
	if d := x.Data; d != nil {
		v += int(s.bufs[d.Tensor][s.offset(d.Tensor, d.Index)])
	}
	return v
}

func (s *State[T]) accessError(t int, idx []IndexExpr) accessError {
	vals := make([]int, len(idx))
	for a := range idx {
		vals[a] = s.indexValue(&idx[a])
	}
	return accessError{tensor: t, index: vals}
}

func (s *State[T]) exec(st Stmt) {
	switch st := st.(type) {
	case *For:
		for v := 0; v < st.Extent; v++ {
			s.env[st.Var] = v
			for _, c := range st.Body {
				s.exec(c)
			}
		}
	case *Store:
		v := s.eval(st.Value)
		buf := s.bufs[st.Tensor]
		off := s.offset(st.Tensor, st.Index)
		if st.Accumulate {
			v = accumulate(st.Accum, float64(buf[off]), v)
		}
		buf[off] = T(v)
	case *Fill:
		buf := s.bufs[st.Tensor]
		v := T(st.Value)
		for i := range buf {
			buf[i] = v
		}
	case *ResetPadding:
		s.resetPadding(st.Tensor, T(st.Value))
	case *FetchStmt:
		s.fetch(st)
	default:
		panic(fmt.Sprintf("unknown statement %T", st))
	}
}

func (s *State[T]) eval(e Expr) float64 {
	switch e := e.(type) {
	case *Const:
		return e.Value
	case *Load:
		return float64(s.bufs[e.Tensor][s.offset(e.Tensor, e.Index)])
	case *Apply:
		var args [3]float64
		for i, a := range e.Args {
			args[i] = s.eval(a)
		}
		return applyPrim(e.Prim, &args)
	}
	panic(fmt.Sprintf("unknown expression %T", e))
}

// interior calls f with the memory-order offset k and buffer offset of
// every unpadded cell of tensor t, in memory order.
func (s *State[T]) interior(t int, f func(k, off int)) {
	ti := &s.prog.Tensors[t]
	n := ti.Size()
	if n == 0 {
		return
	}
	st := s.strides[t]
	idx := make([]int, len(ti.Dims))
	base := 0
	for a, m := range ti.Padding {
		base += m.Left * st[a]
	}
	for k := 0; k < n; k++ {
		off := base
		for a, i := range idx {
			off += i * st[a]
		}
		f(k, off)
		for a := len(idx) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < ti.Dims[a] {
				break
			}
			idx[a] = 0
		}
	}
}

// resetPadding sets every buffer cell outside the interior to v.
func (s *State[T]) resetPadding(t int, v T) {
	ti := &s.prog.Tensors[t]
	if !ti.Padded() {
		return
	}
	buf := s.bufs[t]
	idx := make([]int, len(ti.BufDims))
	for off := range buf {
		margin := false
		for a, i := range idx {
			if i < ti.Padding[a].Left || i >= ti.Padding[a].Left+ti.Dims[a] {
				margin = true
				break
			}
		}
		if margin {
			buf[off] = v
		}
		for a := len(idx) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < ti.BufDims[a] {
				break
			}
			idx[a] = 0
		}
	}
}

func (s *State[T]) fetch(f *FetchStmt) {
	buf := s.bufs[f.Tensor]
	if vs, ok := s.inputs[f.Tensor]; ok {
		s.interior(f.Tensor, func(k, off int) { buf[off] = T(vs[k]) })
		return
	}
	switch f.Kind {
	case FetchZero, FetchConst, FetchRange, FetchValues, FetchRandom, FetchDropout:
		var zero T
		elem := "float64"
		if _, f32 := any(zero).(float32); f32 {
			elem = "float32"
		}
		vs := FetchCells(f, s.prog.Tensors[f.Tensor].Size(), elem)
		s.interior(f.Tensor, func(k, off int) { buf[off] = T(vs[k]) })
	default:
		panic(fmt.Sprintf("unknown fetch kind %d", f.Kind))
	}
}

// RandomInit fills dst with the cells (memory order, unpadded) of a
// FetchRandom keyed by key and seed: rt.DefaultInit(dst,
// rt.InnerKey(key, seed, false)), the very call generated model code
// makes, so the interpreter, the emitter's literals and generated code
// agree bit for bit at the same element type. (float32 and float64 cells
// differ: each uses rt's conversion at its own precision, as OCANNL does.)
func RandomInit[T float32 | float64](dst []T, key [4]uint32, seed uint64) {
	rt.DefaultInit(dst, rt.InnerKey(key, seed, false))
}

// Values returns tensor t's cells in memory order, without the padding
// margins.
func (s *State[T]) Values(t int) []float64 {
	out := make([]float64, s.prog.Tensors[t].Size())
	buf := s.bufs[t]
	s.interior(t, func(k, off int) { out[k] = float64(buf[off]) })
	return out
}

// Lookup returns the index of the tensor named name, or -1.
func (p *Program) Lookup(name string) int {
	for i, t := range p.Tensors {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// Summary prints every tensor's dims and values (for debugging).
func (s *State[T]) Summary() string {
	var b strings.Builder
	for i, t := range s.prog.Tensors {
		fmt.Fprintf(&b, "%s %v: %v\n", t.Name, t.Dims, s.Values(i))
	}
	return b.String()
}
