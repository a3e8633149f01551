package rt

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// digestInner is digest §7.3's inner key for self_id 2 and seed 42.
var digestInner = [4]uint32{2147486645, 1313756091, 374868912, 2620303246}

// digestUniform are digest §7.3's first six uniform1 values under
// digestInner (a Python port of OCANNL's builtins, matching OCANNL's
// test_param_shape_error.expected).
var digestUniform = []float64{0.44999605, 0.39591426, 0.69485641, 0.64083511, 0.18663669, 0.24397457}

// digestUniformText are the same values as the digest prints them.
var digestUniformText = []string{"0.44999605", "0.39591426", "0.69485641", "0.64083511", "0.18663669", "0.24397457"}

func TestDigestReference(t *testing.T) {
	inner := Threefry4x32Light([4]uint32{2, 0, 0, 0}, Int64ToUint4x32(42))
	if inner != digestInner {
		t.Fatalf("light threefry({2,0,0,0}, seed 42) = %v, want %v", inner, digestInner)
	}
	if got := InnerKey([4]uint32{2, 0, 0, 0}, DefaultSeed, false); got != digestInner {
		t.Errorf("InnerKey = %v, want %v", got, digestInner)
	}
	for k, w := range digestUniform {
		u := Float32FromUint4x32(Threefry4x32Light(inner, Uint32ToUint4x32(uint32(k))))
		if math.Float32bits(u) != math.Float32bits(float32(w)) {
			t.Errorf("cell %d: uniform = %.9g (bits %#x), want float32(%v) (bits %#x)",
				k, u, math.Float32bits(u), w, math.Float32bits(float32(w)))
		}
		if math.Abs(float64(u)-w) > 1e-8 {
			t.Errorf("cell %d: uniform = %.10f, want %.8f within 1e-8", k, u, w)
		}
		// Exactly the digest's printed digits.
		if got, want := strconv.FormatFloat(float64(u), 'f', 8, 64), digestUniformText[k]; got != want {
			t.Errorf("cell %d: uniform prints as %s, digest %s", k, got, want)
		}
	}
	// OCANNL's test_param_shape_error.expected shows them truncated to
	// three significant digits.
	var shown []string
	for k := range digestUniform {
		u := Float32FromUint4x32(Threefry4x32Light(inner, Uint32ToUint4x32(uint32(k))))
		d := int(float64(u) * 1000) // truncation, not rounding: 0.6948... shows as 6.94e-1
		shown = append(shown, fmt.Sprintf("%d.%02de-1", d/100, d%100))
	}
	if got, want := strings.Join(shown, " "), "4.49e-1 3.95e-1 6.94e-1 6.40e-1 1.86e-1 2.43e-1"; got != want {
		t.Errorf("truncated uniforms %q, OCANNL prints %q", got, want)
	}
	// The lone-param default init prints as -2.50e-2.
	var v [1]float32
	DefaultInit(v[:], inner)
	if math.Abs(float64(v[0])-0.5*(0.44999605-0.5)) > 1e-7 || math.Abs(float64(v[0])+0.025) > 1e-4 {
		t.Errorf("default init of the lone param = %v, want 0.5*(0.44999605-0.5) ≈ -0.025", v[0])
	}
}

// specThreefry is an independent, table-driven transcription of digest
// §7.3: blocks of rotation-table rounds, each followed by the listed
// injection.
func specThreefry(key, ctr [4]uint32, crypto bool) [4]uint32 {
	R := [2][4]int{{13, 15, 26, 6}, {17, 29, 16, 24}}
	ks := [5]uint32{key[0], key[1], key[2], key[3], key[0] ^ key[1] ^ key[2] ^ key[3] ^ 0x1BD11BDA}
	var x [4]uint32
	for i := range x {
		x[i] = ctr[i] + ks[i]
	}
	round := func(r [4]int) {
		for half := 0; half < 2; half++ {
			x[0] += x[1]
			x[1] = bits.RotateLeft32(x[1], r[2*half]) ^ x[0]
			x[2] += x[3]
			x[3] = bits.RotateLeft32(x[3], r[2*half+1]) ^ x[2]
			x[1], x[3] = x[3], x[1]
		}
	}
	inject := [5][4]int{{1, 2, 3, 4}, {2, 3, 4, 0}, {3, 4, 0, 1}, {4, 0, 1, 2}, {0, 1, 2, 3}}
	schedule := [][]int{{0, 1}} // light: R0, R1, one injection
	if crypto {
		schedule = [][]int{{0, 1, 0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1}, {0, 1, 0, 1}}
	}
	for b, rounds := range schedule {
		for _, r := range rounds {
			round(R[r])
		}
		for i := range x {
			x[i] += ks[inject[b][i]]
		}
		x[3] += uint32(b + 1)
	}
	return x
}

func TestThreefryMatchesSpecTranscription(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 2000; trial++ {
		var k, c [4]uint32
		for i := range 4 {
			k[i], c[i] = r.Uint32(), r.Uint32()
		}
		if trial == 0 {
			k, c = [4]uint32{}, [4]uint32{}
		}
		if got, want := Threefry4x32Light(k, c), specThreefry(k, c, false); got != want {
			t.Fatalf("light(%v, %v) = %v, spec transcription %v", k, c, got, want)
		}
		if got, want := Threefry4x32Crypto(k, c), specThreefry(k, c, true); got != want {
			t.Fatalf("crypto(%v, %v) = %v, spec transcription %v", k, c, got, want)
		}
		if Threefry4x32(k, c, true) != Threefry4x32Crypto(k, c) || Threefry4x32(k, c, false) != Threefry4x32Light(k, c) {
			t.Fatalf("Threefry4x32 dispatches to the wrong variant")
		}
	}
	// The transcription itself reproduces the digest's reference key.
	if got := specThreefry([4]uint32{2, 0, 0, 0}, [4]uint32{42, 0, 0, 0}, false); got != digestInner {
		t.Fatalf("spec transcription light = %v, want %v", got, digestInner)
	}
}

// TestCryptoRegression pins the 20-round variant. There is no external
// reference for it: these vectors were computed once with this package
// (and agree with the independent transcription above) and are a
// regression guard only.
func TestCryptoRegression(t *testing.T) {
	for _, c := range []struct{ key, ctr, want [4]uint32 }{
		{[4]uint32{2, 0, 0, 0}, [4]uint32{42, 0, 0, 0}, [4]uint32{2769243033, 3074257173, 72593604, 2052185331}},
		{[4]uint32{0, 0, 0, 0}, [4]uint32{0, 0, 0, 0}, [4]uint32{0xaed7ff00, 0xdea3e3f9, 0x9c760045, 0xcd7c88b6}},
		{[4]uint32{0xDEADBEEF, 0x01234567, 0x89ABCDEF, 0xFFFFFFFF}, [4]uint32{1, 2, 3, 4}, [4]uint32{0xc65811eb, 0xb9e79d1b, 0x94fe3849, 0x5c153dc3}},
	} {
		if got := Threefry4x32Crypto(c.key, c.ctr); got != c.want {
			t.Errorf("crypto(%v, %v) = %#x, want %#x", c.key, c.ctr, got, c.want)
		}
	}
	// The two variants differ.
	if Threefry4x32Crypto([4]uint32{2}, [4]uint32{42}) == digestInner {
		t.Error("crypto equals light on the reference input")
	}
}

// avalanche flips one random key or counter bit per trial and returns the
// mean number of output bits that change.
func avalanche(f func(k, c [4]uint32) [4]uint32, trials int) float64 {
	r := rand.New(rand.NewPCG(3, 5))
	total := 0
	for range trials {
		var k, c [4]uint32
		for i := range 4 {
			k[i], c[i] = r.Uint32(), r.Uint32()
		}
		k2, c2 := k, c
		b := r.IntN(256)
		if b < 128 {
			k2[b/32] ^= 1 << (b % 32)
		} else {
			c2[(b-128)/32] ^= 1 << (b % 32)
		}
		x, y := f(k, c), f(k2, c2)
		for i := range 4 {
			total += bits.OnesCount32(x[i] ^ y[i])
		}
	}
	return float64(total) / float64(trials)
}

func TestCryptoAvalanche(t *testing.T) {
	m := avalanche(Threefry4x32Crypto, 1000)
	t.Logf("crypto: %.2f of 128 output bits change per flipped input bit", m)
	if m < 48 || m > 80 {
		t.Errorf("crypto avalanche: mean %.2f changed bits, want 64±16", m)
	}
	// The 2-round light variant diffuses less; it is only logged.
	t.Logf("light: %.2f of 128 output bits change per flipped input bit", avalanche(Threefry4x32Light, 1000))
}

func TestConversions(t *testing.T) {
	if got, want := Uint32ToUint4x32(0), [4]uint32{0, 0x9E3779B9, 0x6C078965, 0}; got != want {
		t.Errorf("Uint32ToUint4x32(0) = %#x, want %#x", got, want)
	}
	// rotl32(0x00010002, 16) = 0x00020001.
	if got, want := Uint32ToUint4x32(0x00010002), [4]uint32{0x00010002, 0x00010002 ^ 0x9E3779B9, 0x00010002 ^ 0x6C078965, 0x00030003}; got != want {
		t.Errorf("Uint32ToUint4x32(0x00010002) = %#x, want %#x", got, want)
	}
	if got, want := Int64ToUint4x32(0x100000002), [4]uint32{2, 1, 0, 0}; got != want {
		t.Errorf("Int64ToUint4x32(0x100000002) = %v, want %v", got, want)
	}
	if got, want := Int64ToUint4x32(-1), [4]uint32{0xFFFFFFFF, 0xFFFFFFFF, 0, 0}; got != want {
		t.Errorf("Int64ToUint4x32(-1) = %#x, want %#x", got, want)
	}
	for _, c := range []struct {
		v    uint32
		want float32
	}{{0, 0}, {0xFF, 0}, {0x100, 0x1p-24}, {0x80000000, 0.5}, {0xFFFFFFFF, 1 - 0x1p-24}} {
		if got := Float32FromUint4x32([4]uint32{c.v, 7, 7, 7}); got != c.want {
			t.Errorf("Float32FromUint4x32(%#x) = %g, want %g", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    [4]uint32
		want float64
	}{
		{[4]uint32{1, 0, 9, 9}, 0x1p-64},
		{[4]uint32{0, 0x80000000, 9, 9}, 0.5},
		{[4]uint32{0, 1, 9, 9}, 0x1p-32},
		{[4]uint32{0xFFFFFFFF, 0xFFFFFFFF, 9, 9}, 1}, // rounds up, as in OCANNL
		{[4]uint32{0xFFFFF800, 0xFFFFFFFF, 9, 9}, 1 - 0x1p-53},
	} {
		if got := Float64FromUint4x32(c.v); got != c.want {
			t.Errorf("Float64FromUint4x32(%#x) = %g, want %g", c.v, got, c.want)
		}
	}
	v := [4]uint32{0x100, 0x80000000, 0xFFFFFFFF, 0x3FF}
	if got, want := Uniform4Float32(v), [4]float32{0x1p-24, 0.5, 1 - 0x1p-24, 0x3p-24}; got != want {
		t.Errorf("Uniform4Float32(%#x) = %v, want %v", v, got, want)
	}
	w := [4]uint32{0, 0x40000000, 1, 0}
	if got, want := Uniform2Float64(w), [2]float64{0.25, 0x1p-64}; got != want {
		t.Errorf("Uniform2Float64(%#x) = %v, want %v", w, got, want)
	}
	// Lane 0 of the vectorized conversions is the scalar one.
	r := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		x := [4]uint32{r.Uint32(), r.Uint32(), r.Uint32(), r.Uint32()}
		if Uniform4Float32(x)[0] != Float32FromUint4x32(x) || Uniform2Float64(x)[0] != Float64FromUint4x32(x) {
			t.Fatalf("vectorized lane 0 differs from the scalar conversion at %#x", x)
		}
		// Independent rounding path: v1*2^32 and v0 are exact, their
		// sum is rounded once.
		if got, want := Float64FromUint4x32(x), math.Ldexp(float64(x[1])*0x1p32+float64(x[0]), -64); got != want {
			t.Fatalf("Float64FromUint4x32(%#x) = %g, want %g", x, got, want)
		}
	}
}
