//go:build !amd64 || !gc || purego

package tiers

// asmTiers: this build has no assembly kernels.
func asmTiers() []tierFlags { return nil }

// setTiers: only the Go loops exist here (asmTiers offers no other tier).
func setTiers(f tierFlags) (restore func()) {
	if f.avx512 || f.avx2 {
		panic("tiers: no assembly in this build")
	}
	return func() {}
}
