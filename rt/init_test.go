package rt

import (
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

func TestParamKeyIsFNV1a64(t *testing.T) {
	// Published FNV-1a 64-bit test vectors.
	for _, c := range []struct {
		s string
		h uint64
	}{{"", 0xcbf29ce484222325}, {"a", 0xaf63dc4c8601ec8c}, {"foobar", 0x85944171f73967e8}} {
		want := [4]uint32{uint32(c.h), uint32(c.h >> 32), 1, 0}
		if got := ParamKey(c.s); got != want {
			t.Errorf("ParamKey(%q) = %#x, want %#x", c.s, got, want)
		}
	}
	// And the standard library's implementation on parameter-like names.
	for _, s := range []string{"Model.w1", "layer1/w", "mlp.layers[3].b", "ünïcode/θ"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		v := h.Sum64()
		if got, want := ParamKey(s), [4]uint32{uint32(v), uint32(v >> 32), KeySchemeVersion, 0}; got != want {
			t.Errorf("ParamKey(%q) = %#x, want %#x", s, got, want)
		}
	}
}

func TestSubKeyCountersAreNotCellCounters(t *testing.T) {
	// A SubKey counter {i, 0, 0, 0} would collide with a cell counter only
	// if words 1..3 of Uint32ToUint4x32(k) were all zero; word 1 is zero
	// only for k = 0x9E3779B9, whose word 2 is not.
	for _, k := range []uint32{0, 1, 2, 0x9E3779B9, 0x6C078965, 0xFFFFFFFF} {
		c := Uint32ToUint4x32(k)
		if c[1] == 0 && c[2] == 0 && c[3] == 0 {
			t.Errorf("cell counter %d has the shape of a SubKey counter", k)
		}
	}
	in := digestInner
	if SubKey(in, 1) == SubKey(in, 2) || SubKey(in, 1) == in {
		t.Error("SubKey streams coincide")
	}
	if got, want := SubKey(in, 5), specThreefry(in, [4]uint32{5, 0, 0, 0}, false); got != want {
		t.Errorf("SubKey(inner, 5) = %v, want light threefry(inner, {5,0,0,0}) = %v", got, want)
	}
}

func TestUniformReferenceCells(t *testing.T) {
	d := make([]float32, 6)
	Uniform(d, digestInner, 0, 1)
	for k, w := range digestUniform {
		if math.Float32bits(d[k]) != math.Float32bits(float32(w)) {
			t.Errorf("Uniform float32 cell %d = %.9g, want %v", k, d[k], float32(w))
		}
	}
	Uniform(d, digestInner, -1, 3)
	for k, w := range digestUniform {
		if math.Abs(float64(d[k])-(-1+4*w)) > 1e-6 {
			t.Errorf("Uniform[-1,3) float32 cell %d = %v, want %v", k, d[k], -1+4*w)
		}
	}
	// float64 cells use the double conversion of the same 128-bit draws,
	// whose high bits come from word 1: they are unrelated to the float32
	// values.
	e := make([]float64, 6)
	Uniform(e, digestInner, 0, 1)
	for k := range e {
		x := specThreefry(digestInner, Uint32ToUint4x32(uint32(k)), false)
		if want := math.Ldexp(float64(x[1])*0x1p32+float64(x[0]), -64); e[k] != want {
			t.Errorf("Uniform float64 cell %d = %v, want %v", k, e[k], want)
		}
	}
}

func TestDefaultInitReference(t *testing.T) {
	d := make([]float32, 6)
	DefaultInit(d, digestInner)
	for k, w := range digestUniform {
		if math.Abs(float64(d[k])-0.5*(w-0.5)) > 1e-7 {
			t.Errorf("DefaultInit float32 cell %d = %v, want %v", k, d[k], 0.5*(w-0.5))
		}
		// Exact: float32(w) is the cell's uniform number (a multiple of
		// 2^-24), and 0.5*(u - 0.5) is exact in float32.
		if want := 0.5 * (float32(w) - 0.5); math.Float32bits(d[k]) != math.Float32bits(want) {
			t.Errorf("DefaultInit float32 cell %d = %.9g, want exactly %.9g", k, d[k], want)
		}
	}
	e := make([]float64, 6)
	DefaultInit(e, digestInner)
	for k := range e {
		x := specThreefry(digestInner, Uint32ToUint4x32(uint32(k)), false)
		u := math.Ldexp(float64(x[1])*0x1p32+float64(x[0]), -64)
		if e[k] != 0.5*(u-0.5) {
			t.Errorf("DefaultInit float64 cell %d = %v, want %v", k, e[k], 0.5*(u-0.5))
		}
	}
}

// moments returns the mean and the (population) variance of xs.
func moments[T Float](xs []T) (mean, variance float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, variance / float64(len(xs))
}

const nStat = 100000

func TestUniformStatistics(t *testing.T) {
	key := InnerKey(ParamKey("stats/uniform"), DefaultSeed, false)
	d32 := make([]float32, nStat)
	d64 := make([]float64, nStat)
	Uniform(d32, key, -2, 6)
	Uniform(d64, key, -2, 6)
	check := func(name string, mean, v, lo, hi float64) {
		t.Helper()
		// Uniform on [-2, 6): mean 2, variance 64/12.
		if math.Abs(mean-2) > 0.05 || math.Abs(v-64.0/12) > 0.1 {
			t.Errorf("%s: mean %v variance %v, want 2 and %v", name, mean, v, 64.0/12)
		}
		if lo < -2 || hi >= 6 || lo > -1.99 || hi < 5.99 {
			t.Errorf("%s: range [%v, %v], want within [-2, 6) and covering it", name, lo, hi)
		}
	}
	m, v := moments(d32)
	check("float32", m, v, float64(slices.Min(d32)), float64(slices.Max(d32)))
	m, v = moments(d64)
	check("float64", m, v, slices.Min(d64), slices.Max(d64))

	// DefaultInit: uniform on [-0.25, 0.25).
	DefaultInit(d32, key)
	m, v = moments(d32)
	if math.Abs(m) > 0.005 || math.Abs(v-0.25/12) > 0.001 || slices.Min(d32) < -0.25 || slices.Max(d32) >= 0.25 {
		t.Errorf("DefaultInit: mean %v variance %v range [%v, %v], want 0, %v, [-0.25, 0.25)", m, v, slices.Min(d32), slices.Max(d32), 0.25/12)
	}
}

func TestUniformStaysBelowHi(t *testing.T) {
	// With hi the successor of lo, every draw u >= 0.5 rounds to hi; each
	// such cell must be clamped back to lo.
	key := InnerKey(ParamKey("clamp"), DefaultSeed, false)
	d32 := make([]float32, 1000)
	hi32 := math.Nextafter32(1, 2)
	Uniform(d32, key, 1, hi32)
	for k, x := range d32 {
		if x != 1 {
			t.Fatalf("float32 cell %d = %v, want 1 (in [1, %v))", k, x, hi32)
		}
	}
	d64 := make([]float64, 1000)
	hi64 := math.Nextafter(1, 2)
	Uniform(d64, key, 1, hi64)
	for k, x := range d64 {
		if x != 1 {
			t.Fatalf("float64 cell %d = %v, want 1", k, x)
		}
	}
	Uniform(d64, key, 3, 3)
	if slices.Min(d64) != 3 || slices.Max(d64) != 3 {
		t.Errorf("Uniform with lo == hi == 3 gave [%v, %v]", slices.Min(d64), slices.Max(d64))
	}
	defer func() {
		if recover() == nil {
			t.Error("Uniform with hi < lo did not panic")
		}
	}()
	Uniform(d64, key, 1, 0)
}

func TestNormalStatistics(t *testing.T) {
	key := InnerKey(ParamKey("stats/normal"), DefaultSeed, false)
	for _, f32 := range []bool{true, false} {
		xs := make([]float64, nStat)
		if f32 {
			d := make([]float32, nStat)
			Normal(d, key)
			for i, x := range d {
				xs[i] = float64(x)
			}
		} else {
			Normal(xs, key)
		}
		m, v := moments(xs)
		within := 0
		for _, x := range xs {
			if math.Abs(x) < 1 {
				within++
			}
		}
		frac := float64(within) / nStat
		if math.Abs(m) > 0.02 || math.Abs(v-1) > 0.03 || math.Abs(frac-0.6827) > 0.01 {
			t.Errorf("Normal (float32 %v): mean %v variance %v P(|x|<1) %v, want 0, 1, 0.6827", f32, m, v, frac)
		}
		if slices.Max(xs) > 5.8 || slices.Min(xs) < -5.8 {
			t.Errorf("Normal: |x| up to %v, Box–Muller with the 2^-24 floor bounds it by 5.77", max(slices.Max(xs), -slices.Min(xs)))
		}
	}
	// Cell 0 by the formula, from the two sub-key streams.
	d := make([]float64, 1)
	Normal(d, digestInner)
	u1 := Float64FromUint4x32(specThreefry(SubKey(digestInner, 1), Uint32ToUint4x32(0), false))
	u2 := Float64FromUint4x32(specThreefry(SubKey(digestInner, 2), Uint32ToUint4x32(0), false))
	if want := math.Sqrt(-2*math.Log(u1+0x1p-24*(1-u1))) * math.Cos(2*math.Pi*u2); d[0] != want {
		t.Errorf("Normal cell 0 = %v, want %v", d[0], want)
	}
}

// initParam is how generated code initializes a parameter: the key
// depends only on its name.
func initParam(name string, n int, seed uint64) []float32 {
	d := make([]float32, n)
	DefaultInit(d, InnerKey(ParamKey(name), seed, false))
	return d
}

func TestDeterminismByIdentity(t *testing.T) {
	a := initParam("Model.w1", 64, DefaultSeed)
	if b := initParam("Model.w1", 64, DefaultSeed); !slices.Equal(a, b) {
		t.Error("same identity and seed gave different values")
	}
	if b := initParam("Model.w2", 64, DefaultSeed); slices.Equal(a, b) {
		t.Error("different identities gave the same values")
	}
	if b := initParam("Model.w1", 64, 43); slices.Equal(a, b) {
		t.Error("different seeds gave the same values")
	}
	// A larger tensor with the same identity extends the smaller one
	// (cells are numbered by offset).
	if b := initParam("Model.w1", 100, DefaultSeed); !slices.Equal(a, b[:64]) {
		t.Error("cells depend on the tensor size")
	}

	// A model, then the same model with one parameter added at the front
	// and the declarations reordered: the original parameters keep their
	// values, because each key is a function of its own name only.
	type param struct {
		name string
		n    int
	}
	initModel := func(ps []param) map[string][]float32 {
		m := map[string][]float32{}
		for _, p := range ps {
			m[p.name] = initParam(p.name, p.n, DefaultSeed)
		}
		return m
	}
	before := initModel([]param{{"Model.w1", 6}, {"Model.b1", 2}, {"Model.w2", 4}})
	after := initModel([]param{{"Model.w0", 8}, {"Model.w2", 4}, {"Model.b1", 2}, {"Model.w1", 6}})
	for name, v := range before {
		if !slices.Equal(v, after[name]) {
			t.Errorf("%s changed when another parameter was added: %v -> %v", name, v, after[name])
		}
	}
	if slices.Equal(after["Model.w0"][:6], after["Model.w1"]) {
		t.Error("the new parameter repeats an old one's values")
	}
}

func TestKaimingXavier(t *testing.T) {
	key := InnerKey(ParamKey("Model.w"), DefaultSeed, false)
	raw := make([]float64, 10000)
	DefaultInit(raw, key)
	check := func(name string, d []float64, bound float64) {
		t.Helper()
		lo, hi := slices.Min(d), slices.Max(d)
		if lo < -bound || hi >= bound || hi < 0.99*bound || lo > -0.99*bound {
			t.Errorf("%s: range [%v, %v], want within and covering [-%v, %v)", name, lo, hi, bound, bound)
		}
		s := bound / 0.25
		for k := range d {
			if math.Abs(d[k]-raw[k]*s) > 1e-15 {
				t.Fatalf("%s cell %d = %v, want raw %v * %v", name, k, d[k], raw[k], s)
			}
		}
	}
	d := make([]float64, len(raw))
	Kaiming(d, key, 50, DefaultScaleSq)
	check("Kaiming(fanIn 50)", d, 0.25*math.Sqrt(6.0/50))
	Xavier(d, key, 50, 14, DefaultScaleSq)
	check("Xavier(50, 14)", d, 0.25*math.Sqrt(6.0/64))
	Kaiming(d, key, 3, 2)
	check("Kaiming(fanIn 3, scale_sq 2)", d, 0.25*math.Sqrt(2.0/3))

	f := make([]float32, 1000)
	Kaiming(f, key, 8, DefaultScaleSq)
	for _, x := range f {
		if math.Abs(float64(x)) > 0.25*math.Sqrt(6.0/8)+1e-7 {
			t.Fatalf("float32 Kaiming value %v beyond the bound", x)
		}
	}
	for _, bad := range []func(){
		func() { Kaiming(d, key, 0, 6) },
		func() { Xavier(d, key, 0, 0, 6) },
		func() { Xavier(d, key, -3, 5, 6) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a non-positive fan did not panic")
				}
			}()
			bad()
		}()
	}
}

func TestConstant(t *testing.T) {
	d := []float32{1, 2, 3}
	Constant(d, 0.5)
	if !slices.Equal(d, []float32{0.5, 0.5, 0.5}) {
		t.Errorf("Constant = %v", d)
	}
}

func TestNoAllocations(t *testing.T) {
	key := digestInner
	f32 := make([]float32, 256)
	f64 := make([]float64, 256)
	g32, b32 := make([]float32, 256), make([]float32, 256)
	g64, b64 := make([]float64, 256), make([]float64, 256)
	for name, f := range map[string]func(){
		"Uniform32":     func() { Uniform(f32, key, -1, 1) },
		"Uniform64":     func() { Uniform(f64, key, -1, 1) },
		"DefaultInit32": func() { DefaultInit(f32, key) },
		"DefaultInit64": func() { DefaultInit(f64, key) },
		"Normal32":      func() { Normal(f32, key) },
		"Kaiming32":     func() { Kaiming(f32, key, 16, DefaultScaleSq) },
		"Xavier64":      func() { Xavier(f64, key, 16, 4, DefaultScaleSq) },
		"Constant32":    func() { Constant(f32, 1) },
		"SGD32":         func() { SGD(f32, g32, b32, 0.1, 0.9, 1e-4, true) },
		"SGD64":         func() { SGD(f64, g64, b64, 0.1, 0.9, 1e-4, false) },
		"SGD32plain":    func() { SGD(f32, g32, nil, 0.1, 0, 0, false) },
		"ParamKey":      func() { key = InnerKey(ParamKey("Model.w1"), DefaultSeed, true) },
	} {
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Errorf("%s allocates %v times per run", name, n)
		}
	}
}

func BenchmarkDefaultInit32(b *testing.B) {
	d := make([]float32, 1<<16)
	b.SetBytes(int64(4 * len(d)))
	for b.Loop() {
		DefaultInit(d, digestInner)
	}
}

func BenchmarkThreefryCrypto(b *testing.B) {
	var x [4]uint32
	for b.Loop() {
		x = Threefry4x32Crypto(digestInner, x)
	}
}
