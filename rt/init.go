package rt

import "math"

// Float is the element type of the initializers and of [SGD].
type Float interface {
	float32 | float64
}

// DefaultScaleSq is the default scale_sq of OCANNL's kaiming and xavier
// initializers.
const DefaultScaleSq = 6

// is32 reports whether T is float32.
func is32[T Float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

// maxCells is the number of distinct cell counters (offsets are uint32).
const maxCells = 1 << 32

func checkCells(n int) {
	if uint64(n) > maxCells {
		panic("rt: more than 2^32 cells in one random tensor")
	}
}

// cellBits is cell k's 128-bit draw under the sub-key inner (light
// Threefry, as OCANNL's default).
func cellBits(inner [4]uint32, k int) [4]uint32 {
	return Threefry4x32Light(inner, Uint32ToUint4x32(uint32(k)))
}

// Uniform fills dst with numbers uniform on [lo, hi): cell k (dst[k]) gets
// lo + (hi-lo)*u, computed in float64 and rounded to T, with u the
// uniform number of Threefry4x32Light(inner, Uint32ToUint4x32(k)) at T's
// precision ([Float32FromUint4x32] for float32, [Float64FromUint4x32]
// for float64). A result that rounds to hi is replaced by the largest T
// below hi. It requires lo <= hi (all cells are lo when lo == hi) and at
// most 2^32 cells, and does not allocate.
func Uniform[T Float](dst []T, inner [4]uint32, lo, hi T) {
	if !(lo <= hi) {
		panic("rt: Uniform needs lo <= hi")
	}
	checkCells(len(dst))
	l, w := float64(lo), float64(hi)-float64(lo)
	if is32[T]() {
		below := T(math.Nextafter32(float32(hi), float32(math.Inf(-1))))
		for k := range dst {
			r := T(l + w*float64(Float32FromUint4x32(cellBits(inner, k))))
			if r >= hi && lo < hi {
				r = below
			}
			dst[k] = r
		}
		return
	}
	below := T(math.Nextafter(float64(hi), math.Inf(-1)))
	for k := range dst {
		r := T(l + w*Float64FromUint4x32(cellBits(inner, k)))
		if r >= hi && lo < hi {
			r = below
		}
		dst[k] = r
	}
}

// DefaultInit fills dst with OCANNL's default parameter initializer
// 0.5*(u - 0.5), uniform on [-0.25, 0.25): u is cell k's uniform number
// as in [Uniform] (computed at T's precision; for float32 the result is
// exact). For the digest's reference sub-key, cell 0 is
// 0.5*(0.44999605 - 0.5) ≈ -0.025. It does not allocate.
func DefaultInit[T Float](dst []T, inner [4]uint32) {
	checkCells(len(dst))
	if is32[T]() {
		for k := range dst {
			u := Float32FromUint4x32(cellBits(inner, k))
			dst[k] = T(0.5 * (u - 0.5))
		}
		return
	}
	for k := range dst {
		u := Float64FromUint4x32(cellBits(inner, k))
		dst[k] = T(0.5 * (u - 0.5))
	}
}

// unit is cell k's uniform number at T's precision, as a float64.
func unit[T Float](f32 bool, key [4]uint32, k int) float64 {
	if f32 {
		return float64(Float32FromUint4x32(cellBits(key, k)))
	}
	return Float64FromUint4x32(cellBits(key, k))
}

// Normal fills dst with standard normal numbers by OCANNL's Box–Muller
// (digest §7.4): cell k gets sqrt(-2*ln(u1 + 2^-24*(1-u1))) * cos(2π*u2),
// computed in float64 and rounded to T, where u1 and u2 are cell k's
// uniform numbers (as in [Uniform]) under the two independent streams
// SubKey(inner, 1) and SubKey(inner, 2). (OCANNL's two uniform draws each
// get their own helper-tensor key; the sub-keys play that role here.) It
// does not allocate.
func Normal[T Float](dst []T, inner [4]uint32) {
	checkCells(len(dst))
	f32 := is32[T]()
	k1, k2 := SubKey(inner, 1), SubKey(inner, 2)
	for k := range dst {
		u1, u2 := unit[T](f32, k1, k), unit[T](f32, k2, k)
		dst[k] = T(math.Sqrt(-2*math.Log(u1+0x1p-24*(1-u1))) * math.Cos(2*math.Pi*u2))
	}
}

// Kaiming fills dst with OCANNL's kaiming initializer over the default
// draw: raw * sqrt(scaleSq / fanIn), raw as in [DefaultInit], so the
// values are uniform on ±0.25*sqrt(scaleSq/fanIn). fanIn is the product
// of the parameter's input dimensions; scaleSq is usually
// [DefaultScaleSq]. The product is computed in float64 and rounded to T.
// It panics unless fanIn > 0 and does not allocate.
func Kaiming[T Float](dst []T, inner [4]uint32, fanIn int, scaleSq float64) {
	if fanIn <= 0 {
		panic("rt: Kaiming needs fanIn > 0")
	}
	scaled(dst, inner, math.Sqrt(scaleSq/float64(fanIn)))
}

// Xavier fills dst with OCANNL's xavier initializer over the default
// draw: raw * sqrt(scaleSq / (fanIn + fanOut)), raw as in [DefaultInit].
// fanIn and fanOut are the products of the input and output dimensions.
// It panics unless fanIn + fanOut > 0 and does not allocate.
func Xavier[T Float](dst []T, inner [4]uint32, fanIn, fanOut int, scaleSq float64) {
	if fanIn < 0 || fanOut < 0 || fanIn+fanOut <= 0 {
		panic("rt: Xavier needs fanIn, fanOut >= 0 and fanIn + fanOut > 0")
	}
	scaled(dst, inner, math.Sqrt(scaleSq/float64(fanIn+fanOut)))
}

// FanInUniform fills dst uniformly on [-1/sqrt(fanIn), 1/sqrt(fanIn)):
// PyTorch's default for the weights of nn.Linear and nn.Conv2d
// (kaiming_uniform_ with a = sqrt(5): gain sqrt(1/3) times sqrt(3/fanIn)),
// fanIn the product of the parameter's input dimensions (a conv kernel's
// kh*kw*ic). Cell k is 2*b*(u - 0.5) for its uniform number u (as in
// [Uniform]), computed in float64 and rounded to T. It panics unless
// fanIn > 0 and does not allocate.
func FanInUniform[T Float](dst []T, inner [4]uint32, fanIn int) {
	if fanIn <= 0 {
		panic("rt: FanInUniform needs fanIn > 0")
	}
	checkCells(len(dst))
	f32 := is32[T]()
	b := 1 / math.Sqrt(float64(fanIn))
	for k := range dst {
		u := unit[T](f32, inner, k)
		dst[k] = T(2 * b * (u - 0.5))
	}
}

// scaled fills dst with the default draw times s.
func scaled[T Float](dst []T, inner [4]uint32, s float64) {
	checkCells(len(dst))
	f32 := is32[T]()
	for k := range dst {
		u := unit[T](f32, inner, k)
		dst[k] = T(0.5 * (u - 0.5) * s)
	}
}

// Constant sets every element of dst to v (OCANNL's { w = v } params).
func Constant[T Float](dst []T, v T) {
	for k := range dst {
		dst[k] = v
	}
}
