package model

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestInitializers: Init fills each parameter exactly as the rt call for
// its initializer, keyed by the parameter's identity.
func TestInitializers(t *testing.T) {
	var m Inits
	m.Init(7)
	key := func(id string) [4]uint32 { return rt.InnerKey(rt.ParamKey(id), 7, false) }
	var k [12]float32
	rt.Kaiming(k[:], key("k"), 3, rt.DefaultScaleSq)
	var xa [16]float32
	rt.Xavier(xa[:], key("xa"), 4, 4, rt.DefaultScaleSq)
	var n, u [4]float32
	rt.Normal(n[:], key("n"))
	rt.DefaultInit(u[:], key("u"))
	if m.Params.K != k || m.Params.Xa != xa || m.Params.N != n || m.Params.U != u {
		t.Errorf("random initializers differ from rt:\n%v\n%v", m.Params, [4]any{k, xa, n, u})
	}
	if m.Params.C != [4]float32{0.5, 0.5, 0.5, 0.5} || m.Params.Lit != [4]float32{1, 2, 3, 4} {
		t.Errorf("constant initializers: %v %v", m.Params.C, m.Params.Lit)
	}
}
