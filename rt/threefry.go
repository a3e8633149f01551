package rt

import "math/bits"

// threefryC240 is the key-schedule parity constant of Threefry-4x32.
const threefryC240 = 0x1BD11BDA

// roundR0 is one OCANNL "round" with the rotations R0 = (13, 15, 26, 6):
// two mix layers, each followed by swapping words 1 and 3.
func roundR0(x0, x1, x2, x3 uint32) (uint32, uint32, uint32, uint32) {
	x0 += x1
	x1 = bits.RotateLeft32(x1, 13) ^ x0
	x2 += x3
	x3 = bits.RotateLeft32(x3, 15) ^ x2
	x1, x3 = x3, x1
	x0 += x1
	x1 = bits.RotateLeft32(x1, 26) ^ x0
	x2 += x3
	x3 = bits.RotateLeft32(x3, 6) ^ x2
	x1, x3 = x3, x1
	return x0, x1, x2, x3
}

// roundR1 is roundR0 with the rotations R1 = (17, 29, 16, 24).
func roundR1(x0, x1, x2, x3 uint32) (uint32, uint32, uint32, uint32) {
	x0 += x1
	x1 = bits.RotateLeft32(x1, 17) ^ x0
	x2 += x3
	x3 = bits.RotateLeft32(x3, 29) ^ x2
	x1, x3 = x3, x1
	x0 += x1
	x1 = bits.RotateLeft32(x1, 16) ^ x0
	x2 += x3
	x3 = bits.RotateLeft32(x3, 24) ^ x2
	x1, x3 = x3, x1
	return x0, x1, x2, x3
}

// Threefry4x32Light is OCANNL's default ("light") Threefry-4x32 (digest
// §7.3): with the key schedule ks = key ++ [k0^k1^k2^k3^0x1BD11BDA] and
// x = counter + ks[0..3], it applies one round with rotations R0, one
// with R1, then injects x += [ks1, ks2, ks3, ks4+1]. All arithmetic is
// mod 2^32. It does not allocate.
func Threefry4x32Light(key, counter [4]uint32) [4]uint32 {
	k4 := key[0] ^ key[1] ^ key[2] ^ key[3] ^ threefryC240
	x0, x1, x2, x3 := counter[0]+key[0], counter[1]+key[1], counter[2]+key[2], counter[3]+key[3]
	x0, x1, x2, x3 = roundR0(x0, x1, x2, x3)
	x0, x1, x2, x3 = roundR1(x0, x1, x2, x3)
	return [4]uint32{x0 + key[1], x1 + key[2], x2 + key[3], x3 + k4 + 1}
}

// Threefry4x32Crypto is OCANNL's 20-round Threefry-4x32 (digest §7.3):
// the key schedule and initial injection of [Threefry4x32Light], then
// five blocks b = 1..5, each of four rounds (R0, R1, R0, R1) followed by
// the injection x += [ks[b mod 5], ks[b+1 mod 5], ks[b+2 mod 5],
// ks[b+3 mod 5] + b]. It does not allocate.
func Threefry4x32Crypto(key, counter [4]uint32) [4]uint32 {
	ks := [5]uint32{key[0], key[1], key[2], key[3], key[0] ^ key[1] ^ key[2] ^ key[3] ^ threefryC240}
	x0, x1, x2, x3 := counter[0]+ks[0], counter[1]+ks[1], counter[2]+ks[2], counter[3]+ks[3]
	for b := uint32(1); b <= 5; b++ {
		x0, x1, x2, x3 = roundR0(x0, x1, x2, x3)
		x0, x1, x2, x3 = roundR1(x0, x1, x2, x3)
		x0, x1, x2, x3 = roundR0(x0, x1, x2, x3)
		x0, x1, x2, x3 = roundR1(x0, x1, x2, x3)
		x0 += ks[b%5]
		x1 += ks[(b+1)%5]
		x2 += ks[(b+2)%5]
		x3 += ks[(b+3)%5] + b
	}
	return [4]uint32{x0, x1, x2, x3}
}

// Threefry4x32 is [Threefry4x32Crypto] when crypto is set and
// [Threefry4x32Light] otherwise.
func Threefry4x32(key, counter [4]uint32, crypto bool) [4]uint32 {
	if crypto {
		return Threefry4x32Crypto(key, counter)
	}
	return Threefry4x32Light(key, counter)
}

// Uint32ToUint4x32 spreads a 32-bit counter over four words as OCANNL's
// uint32_to_uint4x32 does: {k, k^0x9E3779B9, k^0x6C078965, k^rotl32(k,16)}.
// It is the counter of cell k of a random tensor.
func Uint32ToUint4x32(k uint32) [4]uint32 {
	return [4]uint32{k, k ^ 0x9E3779B9, k ^ 0x6C078965, k ^ bits.RotateLeft32(k, 16)}
}

// Int64ToUint4x32 is OCANNL's int64_to_uint4x32: {low 32 bits, high 32
// bits, 0, 0}. It is the counter that carries the global seed.
func Int64ToUint4x32(x int64) [4]uint32 {
	return [4]uint32{uint32(x), uint32(uint64(x) >> 32), 0, 0}
}

// Float32FromUint4x32 is OCANNL's single-precision
// uint4x32_to_prec_uniform1: (v[0] >> 8) * 2^-24, a multiple of 2^-24 in
// [0, 1). The result is exact.
func Float32FromUint4x32(v [4]uint32) float32 {
	return float32(v[0]>>8) * (1.0 / 16777216.0)
}

// Float64FromUint4x32 is OCANNL's double-precision
// uint4x32_to_prec_uniform1: ((v[1] << 32) | v[0]) * 2^-64. As in OCANNL
// the 64-bit integer is rounded to the nearest float64, so the result is
// in [0, 1] and is exactly 1 when the integer is at least 2^64 - 2^10
// (probability 2^-54).
func Float64FromUint4x32(v [4]uint32) float64 {
	return float64(uint64(v[1])<<32|uint64(v[0])) * 0x1p-64
}

// Uniform4Float32 is the vectorized single-precision conversion of
// OCANNL's uint4x32_to_prec_uniform: lane i is (v[i] >> 8) * 2^-24.
func Uniform4Float32(v [4]uint32) [4]float32 {
	const s = 1.0 / 16777216.0
	return [4]float32{float32(v[0]>>8) * s, float32(v[1]>>8) * s, float32(v[2]>>8) * s, float32(v[3]>>8) * s}
}

// Uniform2Float64 is the vectorized double-precision conversion of
// OCANNL's uint4x32_to_prec_uniform: ((v1<<32)|v0) * 2^-64 and
// ((v3<<32)|v2) * 2^-64, each rounded as in [Float64FromUint4x32].
func Uniform2Float64(v [4]uint32) [2]float64 {
	return [2]float64{
		float64(uint64(v[1])<<32|uint64(v[0])) * 0x1p-64,
		float64(uint64(v[3])<<32|uint64(v[2])) * 0x1p-64,
	}
}
