package loopir

import (
	"fmt"
	"math"
	"testing"

	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/rt"
)

// TestRandomInitMatchesRT checks that the interpreter initializes a
// random parameter exactly as generated model code does,
// rt.DefaultInit(dst, rt.InnerKey(rt.ParamKey(name), seed, false)), bit
// for bit at both element types.
func TestRandomInitMatchesRT(t *testing.T) {
	b := newG()
	random := inference.TensorInit{Kind: inference.InitRandom}
	b.tensor("w", inference.Param, random, 2, 3)
	b.tensor("layer1/b", inference.Param, random, 5)
	b.tensor("s", inference.Param, random)
	p, err := Lower(b.g)
	if err != nil {
		t.Fatal(err)
	}
	s32, err := Run[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	s64, err := Run[float64](p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"w", "layer1/b", "s"} {
		id := p.Lookup(name)
		var f *Fetch
		for _, o := range p.Ops {
			if a, ok := o.Assignment.(*Fetch); ok && a.Tensor == id {
				f = a
			}
		}
		if f == nil || f.Kind != FetchRandom || f.Key != rt.ParamKey(name) || f.Seed != rt.DefaultSeed {
			t.Fatalf("%s: fetch %+v, want FetchRandom keyed by rt.ParamKey(%q) and seed %d", name, f, name, rt.DefaultSeed)
		}
		inner := rt.InnerKey(rt.ParamKey(name), rt.DefaultSeed, false)
		n := p.Tensors[id].Size()
		want32, want64 := make([]float32, n), make([]float64, n)
		rt.DefaultInit(want32, inner)
		rt.DefaultInit(want64, inner)
		got32, got64 := s32.Values(id), s64.Values(id)
		for k := range n {
			if math.Float32bits(float32(got32[k])) != math.Float32bits(want32[k]) || got32[k] != float64(want32[k]) {
				t.Errorf("%s[%d] float32 = %v, rt.DefaultInit %v", name, k, got32[k], want32[k])
			}
			if math.Float64bits(got64[k]) != math.Float64bits(want64[k]) {
				t.Errorf("%s[%d] float64 = %v, rt.DefaultInit %v", name, k, got64[k], want64[k])
			}
		}
		// The shared helper is that call too.
		h32, h64 := make([]float32, n), make([]float64, n)
		RandomInit(h32, f.Key, f.Seed)
		RandomInit(h64, f.Key, f.Seed)
		for k := range n {
			if math.Float32bits(h32[k]) != math.Float32bits(want32[k]) || math.Float64bits(h64[k]) != math.Float64bits(want64[k]) {
				t.Errorf("%s[%d]: RandomInit %v / %v, rt.DefaultInit %v / %v", name, k, h32[k], h64[k], want32[k], want64[k])
			}
		}
	}
	// The dump names the key and the seed.
	expectContains(t, p.String(), fmt.Sprintf("init w: 0.5 * (uniform(threefry(threefry(key=%#x, seed=42), offset)) - 0.5)", rt.ParamKey("w")))
}

// TestRandomInitDigestReference feeds the digest §7.3 reference key
// ({2, 0, 0, 0}, OCANNL's embed_self_id of the first uniform1) through
// the interpreter's random fetch: float32 cells are 0.5*(u - 0.5) for the
// digest's six uniform values.
func TestRandomInitDigestReference(t *testing.T) {
	b := newG()
	w := b.tensor("w", inference.Param, inference.TensorInit{Kind: inference.InitRandom}, 2, 3)
	p, err := Lower(b.g)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range p.Ops {
		for _, st := range o.Body {
			if f, ok := st.(*FetchStmt); ok && f.Tensor == w {
				f.Key = [4]uint32{2, 0, 0, 0}
			}
		}
	}
	s, err := Run[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Values(w)
	for k, u := range []float64{0.44999605, 0.39591426, 0.69485641, 0.64083511, 0.18663669, 0.24397457} {
		if want := 0.5 * (float64(float32(u)) - 0.5); got[k] != want {
			t.Errorf("w[%d] = %.9g, want 0.5*(%v - 0.5) = %.9g", k, got[k], u, want)
		}
	}
}
