package rt

// DefaultSeed is OCANNL's default global seed (settings.fixed_state_for_init).
const DefaultSeed = 42

// KeySchemeVersion is the third word of every key [ParamKey] returns. It
// changes whenever the derivation of keys from identities changes, so
// that keys of different schemes never coincide.
const KeySchemeVersion = 1

// FNV-1a 64-bit parameters.
const (
	fnv64Offset = 0xcbf29ce484222325
	fnv64Prime  = 0x100000001b3
)

// ParamKey derives a parameter's Threefry key from its stable identity,
// its qualified name such as "Model.w1" or "layer1/w" (see the package
// documentation): with h the 64-bit FNV-1a hash of the identity's bytes,
// the key is {uint32(h), uint32(h >> 32), KeySchemeVersion, 0}. It
// depends on nothing but the identity. It does not allocate.
func ParamKey(identity string) [4]uint32 {
	h := uint64(fnv64Offset)
	for i := 0; i < len(identity); i++ {
		h ^= uint64(identity[i])
		h *= fnv64Prime
	}
	return [4]uint32{uint32(h), uint32(h >> 32), KeySchemeVersion, 0}
}

// InnerKey is a tensor's sub-key, OCANNL's inner threefry:
// threefry(key, Int64ToUint4x32(seed)) with the crypto or the light
// variant. For the digest's reference case, key {2, 0, 0, 0} and seed 42
// give {2147486645, 1313756091, 374868912, 2620303246}.
func InnerKey(key [4]uint32, seed uint64, crypto bool) [4]uint32 {
	return Threefry4x32(key, Int64ToUint4x32(int64(seed)), crypto)
}

// SubKey derives the i-th independent stream from a sub-key:
// Threefry4x32Light(inner, {i, 0, 0, 0}). Such a counter is never a cell
// counter (Uint32ToUint4x32(k) never has words 1 to 3 all zero), so a
// derived stream's key never coincides with a cell's draw under the same
// inner key. [Normal] uses SubKey(inner, 1) and SubKey(inner, 2).
func SubKey(inner [4]uint32, i uint32) [4]uint32 {
	return Threefry4x32Light(inner, [4]uint32{i, 0, 0, 0})
}
