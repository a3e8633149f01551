package gocode

import (
	"testing"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/loopir"
)

// TestBF16ReuseInvalidate: a packing kept for reuse (bf16Reuse) is
// dropped once an operation stores to the storage it packed, by a store
// in a loop or a fill, and is neither reused nor kept while the
// operation storing there is emitted; the other storages' packings stay.
// (internal/bf16check's TestBF16Emitted checks that the decoder's x is
// packed once for its three weight gradients, and its gradient and
// thread tests run that code.)
func TestBF16ReuseInvalidate(t *testing.T) {
	k := &kgen{ts: make([]ktensor, 3), scratch: "scratch", free: map[int]bool{}, freeParts: 4}
	for i, name := range []string{"xs", "ys", "xs"} { // tensors 0 and 2 share a storage
		k.ts[i].st.name = name
	}
	n := &asm.Nest{A: 1, B: 0, C: 1, Zero: map[int][]loopir.IndexExpr{0: nil, 1: nil, 2: nil}}
	shape := func() jen.Code { return jen.Lit(1) }
	key := func(t int) string {
		s, _ := k.bf16PackKey(n, t, nil, shape)
		return s
	}
	stores := func(st loopir.Stmt) *loopir.Operation { return &loopir.Operation{Body: []loopir.Stmt{st}} }
	for _, c := range []struct {
		name        string
		op          *loopir.Operation
		gone, goneY bool
	}{
		{"store to another storage", stores(&loopir.For{Var: 0, Extent: 2, Body: []loopir.Stmt{&loopir.Store{Tensor: 1}}}), false, true},
		{"store in a loop to a tensor sharing the storage", stores(&loopir.For{Var: 0, Extent: 2, Body: []loopir.Stmt{&loopir.Store{Tensor: 2}}}), true, false},
		{"fill", stores(&loopir.Fill{Tensor: 0}), true, false},
		{"padding reset", stores(&loopir.ResetPadding{Tensor: 2}), true, false},
	} {
		k.bf16Stored = nil
		kx := key(0)
		ky := key(1)
		if kx == "" || ky == "" {
			t.Fatalf("%s: packings before parts not reusable", c.name)
		}
		k.bf16Reuse = map[string]string{kx: "xsBF16", ky: "ysBF16"}
		k.bf16Invalidate(c.op)
		if _, ok := k.bf16Reuse[kx]; ok == c.gone {
			t.Errorf("%s: x's packing kept %v, want %v", c.name, ok, !c.gone)
		}
		if _, ok := k.bf16Reuse[ky]; ok == c.goneY {
			t.Errorf("%s: y's packing kept %v, want %v", c.name, ok, !c.goneY)
		}
		if _, ok := k.bf16PackKey(n, 0, nil, shape); ok == c.gone {
			t.Errorf("%s: x reusable while the operation is emitted: %v, want %v", c.name, ok, !c.gone)
		}
	}
	// Inside a loop, or with one part, nothing is kept.
	k.bf16Stored = nil
	k.inLoop = 1
	if _, ok := k.bf16PackKey(n, 0, nil, shape); ok {
		t.Error("a packing inside a loop is reusable")
	}
	k.inLoop, k.freeParts = 0, 1
	if _, ok := k.bf16PackKey(n, 0, nil, shape); ok {
		t.Error("a packing without parts is reusable")
	}
}
