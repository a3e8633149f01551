package loopir

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/ops"
)

// aliasProgram builds, over 4x4 arrays s, t, x, u and v: a zero fill of
// t and the copy t += s, then the statements of order ("w": t += x,
// "r": u = transpose(s) * 2, "v": v = t) in that order.
func aliasProgram(order string) (*Program, map[int]bool) {
	const s, t, x, u, v = 0, 1, 2, 3, 4
	p := &Program{reached: Assigned | Looped | Padded | Checked}
	for _, n := range []string{"s", "t", "x", "u", "v"} {
		p.Tensors = append(p.Tensors, TensorInfo{Name: n, Dims: []int{4, 4}, BufDims: []int{4, 4}})
	}
	ij := []IndexExpr{{Terms: []IndexTerm{{1, 0}}}, {Terms: []IndexTerm{{1, 1}}}}
	ji := []IndexExpr{ij[1], ij[0]}
	nest := func(st *Store) Stmt { return rebuildNest([]*For{{Var: 0, Extent: 4}, {Var: 1, Extent: 4}}, st) }
	op := func(desc string, body ...Stmt) {
		p.Ops = append(p.Ops, &Operation{Desc: desc, Op: len(p.Ops), Body: body})
	}
	op("fetch s", &FetchStmt{Tensor: s})
	op("fetch x", &FetchStmt{Tensor: x})
	op("fill t", &Fill{Tensor: t})
	op("t += s", nest(&Store{Tensor: t, Index: ij, Value: &Load{Tensor: s, Index: ij}, Accum: ops.AccAdd, Accumulate: true}))
	for _, c := range order {
		switch c {
		case 'w':
			op("t += x", nest(&Store{Tensor: t, Index: ij, Value: &Load{Tensor: x, Index: ij}, Accum: ops.AccAdd, Accumulate: true}))
		case 'r':
			op("u = 2 s^T", nest(&Store{Tensor: u, Index: ij, Value: &Apply{Prim: "mul", Args: []Expr{&Const{Value: 2}, &Load{Tensor: s, Index: ji}}}}))
		case 'v':
			op("v = t", nest(&Store{Tensor: v, Index: ij, Value: &Load{Tensor: t, Index: ij}}))
		}
	}
	return p, map[int]bool{x: true, u: true, v: true}
}

// TestElideCopiesOrder: a copy whose target is written later becomes its
// source only when the source's last read comes before that write; a
// read of t alone just reads s; the elided program computes u and v
// with the same bits (interpreter, random data).
func TestElideCopiesOrder(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  int
	}{
		{"rwv", 1}, // s read, then t written: t becomes s
		{"wrv", 0}, // s read after t's write: stays
		{"rv", 1},  // t only read: it reads s
		{"vw", 1},
	} {
		p, keep := aliasProgram(tc.order)
		q, n := ElideCopies(p, keep)
		if n != tc.want {
			t.Errorf("%s: elided %d copies, want %d:\n%s", tc.order, n, tc.want, q.String())
		}
		r := rand.New(rand.NewPCG(1, uint64(len(tc.order))))
		in := map[int][]float64{}
		for _, id := range []int{0, 2} {
			in[id] = make([]float64, 16)
			for k := range in[id] {
				in[id][k] = r.Float64()*2 - 1
			}
		}
		sameBits(t, p, q, in, keys(keep), tc.order, "elided")
	}
}

// TestElideBroadcastCopy: a broadcast copy through a zero fill (t[i, j]
// += s[i, 0], a row sum's gradient spread over its row) read by two
// nests goes: both read s at their row (the same bits, interpreter,
// random data); with t written after the copy it stays.
func TestElideBroadcastCopy(t *testing.T) {
	for _, tc := range []struct {
		written bool
		want    int
	}{{false, 1}, {true, 0}} {
		const s, tt, x, u, v = 0, 1, 2, 3, 4
		p := &Program{reached: Assigned | Looped | Padded | Checked}
		p.Tensors = append(p.Tensors, TensorInfo{Name: "s", Dims: []int{4, 1}, BufDims: []int{4, 1}})
		for _, n := range []string{"t", "x", "u", "v"} {
			p.Tensors = append(p.Tensors, TensorInfo{Name: n, Dims: []int{4, 4}, BufDims: []int{4, 4}})
		}
		ij := []IndexExpr{{Terms: []IndexTerm{{1, 0}}}, {Terms: []IndexTerm{{1, 1}}}}
		i0 := []IndexExpr{ij[0], {}}
		nest := func(st *Store) Stmt { return rebuildNest([]*For{{Var: 0, Extent: 4}, {Var: 1, Extent: 4}}, st) }
		op := func(desc string, body ...Stmt) {
			p.Ops = append(p.Ops, &Operation{Desc: desc, Op: len(p.Ops), Body: body})
		}
		op("fetch s", &FetchStmt{Tensor: s})
		op("fetch x", &FetchStmt{Tensor: x})
		op("fill t", &Fill{Tensor: tt})
		op("t += s", nest(&Store{Tensor: tt, Index: ij, Value: &Load{Tensor: s, Index: i0}, Accum: ops.AccAdd, Accumulate: true}))
		op("u = t x", nest(&Store{Tensor: u, Index: ij, Value: &Apply{Prim: ops.Mul, Args: []Expr{&Load{Tensor: tt, Index: ij}, &Load{Tensor: x, Index: ij}}}}))
		if tc.written {
			op("t += x", nest(&Store{Tensor: tt, Index: ij, Value: &Load{Tensor: x, Index: ij}, Accum: ops.AccAdd, Accumulate: true}))
		}
		op("v = x - t", nest(&Store{Tensor: v, Index: ij, Value: &Apply{Prim: ops.Sub, Args: []Expr{&Load{Tensor: x, Index: ij}, &Load{Tensor: tt, Index: ij}}}}))
		keep := map[int]bool{x: true, u: true, v: true} // s is not kept: a t that became s would be caught
		q, n := ElideCopies(p, keep)
		if n != tc.want {
			t.Errorf("written %v: elided %d copies, want %d:\n%s", tc.written, n, tc.want, q.String())
		}
		r := rand.New(rand.NewPCG(5, 6))
		in := map[int][]float64{s: make([]float64, 4), x: make([]float64, 16)}
		for _, id := range []int{s, x} {
			for k := range in[id] {
				in[id][k] = r.Float64()*2 - 1
			}
		}
		sameBits(t, p, q, in, []int{u, v}, fmt.Sprintf("written %v", tc.written), "elided")
	}
}
