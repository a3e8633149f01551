// Package demo holds support code shared by the ocannlgen demo programs
// (the two-moons classifier, the CNN on glyphs and the tiny transformer):
// small deterministic synthetic data sets, one-hot encoding, a progress
// bar, decision-boundary pictures and a few metrics.
//
// Everything random is driven by an explicit seed through math/rand/v2
// (never the global source), so the same seed always yields the same
// data.
package demo

import "math/rand/v2"

// newRand returns a deterministic generator for seed.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
