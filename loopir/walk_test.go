package loopir

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/ops"
)

func term(v, c int) IndexTerm { return IndexTerm{Var: v, Coeff: c} }

// TestFlatStrides: a variable's stride sums its terms over the axes,
// each times the axis's row-major stride; a rank mismatch is refused.
func TestFlatStrides(t *testing.T) {
	// [i0, 2*i1 + i2, 3] in a 4x10x5 buffer: strides 50, 10 and 5.
	idx := []IndexExpr{{Terms: []IndexTerm{term(0, 1)}}, {Terms: []IndexTerm{term(1, 2), term(2, 1)}}, {Offset: 3}}
	st, ok := FlatStrides(idx, []int{4, 10, 5})
	if !ok || st[0] != 50 || st[1] != 10 || st[2] != 5 || len(st) != 3 {
		t.Errorf("FlatStrides = %v, %v", st, ok)
	}
	if _, ok := FlatStrides(idx, []int{4, 10}); ok {
		t.Errorf("a rank mismatch was accepted")
	}
}

// TestProductOf: only c += a * b of two loads matches.
func TestProductOf(t *testing.T) {
	a, b := &Load{Tensor: 1}, &Load{Tensor: 2}
	prod := &Apply{Prim: ops.Mul, Args: []Expr{a, b}}
	if x, y, ok := ProductOf(&Store{Tensor: 0, Value: prod, Accumulate: true, Accum: ops.AccAdd}); !ok || x != a || y != b {
		t.Errorf("c += a * b not matched")
	}
	for _, st := range []*Store{
		{Value: prod}, // c = a * b
		{Value: prod, Accumulate: true, Accum: ops.AccMax}, // c max= a * b
		{Value: &Apply{Prim: ops.Add, Args: []Expr{a, b}}, Accumulate: true, Accum: ops.AccAdd},
		{Value: &Apply{Prim: ops.Mul, Args: []Expr{a, &Const{Value: 2}}}, Accumulate: true, Accum: ops.AccAdd},
	} {
		if _, _, ok := ProductOf(st); ok {
			t.Errorf("matched %+v", st)
		}
	}
}

// TestOwnsFirstAxis: the CUDA rule agrees with OwnsAxis on plain
// indices and is stricter where documented (a term of coefficient 0).
func TestOwnsFirstAxis(t *testing.T) {
	plain := []IndexExpr{{Terms: []IndexTerm{term(0, 1)}}, {Terms: []IndexTerm{term(1, 1)}}}
	for v, want := range map[int]bool{0: true, 1: true, 2: false} {
		if OwnsFirstAxis(v, plain) != want || OwnsAxis(v, plain) != want {
			t.Errorf("v%d: OwnsFirstAxis %v OwnsAxis %v, want %v", v, OwnsFirstAxis(v, plain), OwnsAxis(v, plain), want)
		}
	}
	zeroTerm := []IndexExpr{{Terms: []IndexTerm{term(0, 1), term(3, 0)}}}
	if OwnsFirstAxis(0, zeroTerm) || !OwnsAxis(0, zeroTerm) {
		t.Errorf("a term of coefficient 0: OwnsFirstAxis %v (want false) OwnsAxis %v (want true)", OwnsFirstAxis(0, zeroTerm), OwnsAxis(0, zeroTerm))
	}
	other := []IndexExpr{{Terms: []IndexTerm{term(0, 2)}}, {}}
	if OwnsFirstAxis(0, plain, other) {
		t.Errorf("v0 with different coefficients in two indices")
	}
	if OwnsFirstAxis(0) {
		t.Errorf("no index")
	}
}
