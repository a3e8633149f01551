package loopir

import (
	"hash/fnv"
	"math/bits"
)

// DefaultSeed is the global random seed (OCANNL's default
// fixed_state_for_init); its low 32 bits are the inner counter's first
// word.
const DefaultSeed = 42

const threefryC240 = 0x1BD11BDA

var (
	threefryR0 = [4]int{13, 15, 26, 6}
	threefryR1 = [4]int{17, 29, 16, 24}
)

// threefryRound is one "round" of OCANNL's builtins: two mix layers, each
// followed by swapping words 1 and 3.
func threefryRound(x *[4]uint32, r *[4]int) {
	x[0] += x[1]
	x[1] = bits.RotateLeft32(x[1], r[0]) ^ x[0]
	x[2] += x[3]
	x[3] = bits.RotateLeft32(x[3], r[1]) ^ x[2]
	x[1], x[3] = x[3], x[1]
	x[0] += x[1]
	x[1] = bits.RotateLeft32(x[1], r[2]) ^ x[0]
	x[2] += x[3]
	x[3] = bits.RotateLeft32(x[3], r[3]) ^ x[2]
	x[1], x[3] = x[3], x[1]
}

// Threefry4x32Light is OCANNL's default ("light", 2-round) Threefry-4x32
// with its own rotation constants (digest §7.3): the key schedule
// ks = key ++ [k0^k1^k2^k3^C240], x = counter + ks[0..3], round R0,
// round R1, then x += [ks1, ks2, ks3, ks4+1] (all mod 2^32).
func Threefry4x32Light(key, counter [4]uint32) [4]uint32 {
	ks := [5]uint32{key[0], key[1], key[2], key[3], key[0] ^ key[1] ^ key[2] ^ key[3] ^ threefryC240}
	x := [4]uint32{counter[0] + ks[0], counter[1] + ks[1], counter[2] + ks[2], counter[3] + ks[3]}
	threefryRound(&x, &threefryR0)
	threefryRound(&x, &threefryR1)
	x[0] += ks[1]
	x[1] += ks[2]
	x[2] += ks[3]
	x[3] += ks[4] + 1
	return x
}

// uint32ToUint4x32 spreads a 32-bit counter over four words as OCANNL's
// uint32_to_uint4x32 does.
func uint32ToUint4x32(k uint32) [4]uint32 {
	return [4]uint32{k, k ^ 0x9E3779B9, k ^ 0x6C078965, k ^ bits.RotateLeft32(k, 16)}
}

// InnerKey is the per-tensor sub-key threefry(key=[key,0,0,0],
// counter=[seed,0,0,0]).
func InnerKey(key, seed uint32) [4]uint32 {
	return Threefry4x32Light([4]uint32{key, 0, 0, 0}, [4]uint32{seed, 0, 0, 0})
}

// Uniform returns cell k's uniform number in [0, 1) under the sub-key
// inner: (threefry(inner, uint32_to_uint4x32(k))[0] >> 8) * 2^-24, the
// single-precision uint4x32_to_prec_uniform1.
func Uniform(inner [4]uint32, k uint32) float64 {
	outer := Threefry4x32Light(inner, uint32ToUint4x32(k))
	return float64(outer[0]>>8) * (1.0 / 16777216.0)
}

// DefaultInit is the default parameter initializer's value for cell k
// (row-major offset in memory order): 0.5*(u - 0.5), u = Uniform(inner, k).
func DefaultInit(inner [4]uint32, k uint32) float64 {
	return 0.5 * (Uniform(inner, k) - 0.5)
}

// NameKey is the 32-bit FNV-1a hash of a tensor name, the first key word
// of its random initializer.
func NameKey(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}
