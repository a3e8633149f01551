package bf16

import (
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

// GemmBF16 is Gemm over operands that are already bfloat16 (the
// generated code of an //ocannl:einsum over rt.BF16 arrays calls it):
// the packing copies their bits without rounding, and the result is
// float32, computed in the order, the tiers and the blocking Gemm
// documents (so GemmBF16 over the rounded operands gives Gemm's bits).
// Sizes and strides must be non-negative; C must not overlap A or B.
func GemmBF16(c *float32, a, b *rt.BF16, s Shape) { run16(best, c, a, b, s) }

// GemmBF16Tier is GemmBF16 in tier t, or in the best available tier
// below it when the CPU does not have t (Available).
func GemmBF16Tier(t Tier, c *float32, a, b *rt.BF16, s Shape) {
	for t > Go && !Available(t) {
		t--
	}
	run16(t, c, a, b, s)
}

// run16 is run with bf16 operands: the same blocks, panels, kernels and
// tile buffer, the packing a copy of the operands' bits (packA16,
// packB16).
func run16(t Tier, cp *float32, ap, bp *rt.BF16, s Shape) {
	if s.swapped() {
		ap, bp = bp, ap
	}
	s = s.norm()
	if s.M <= 0 || s.N <= 0 {
		return
	}
	cn, an, bn := s.spans()
	cs := unsafe.Slice(cp, cn)
	kt := s.K * s.K2 * s.K3
	if kt <= 0 {
		if s.Overwrite {
			for m := range s.M {
				for n := range s.N * s.N2 {
					cs[m*s.CM+colOff(n, s.N2, s.CN, s.CN2)] = 0
				}
			}
		}
		return
	}
	as, bs := unsafe.Slice(ap, an), unsafe.Slice(bp, bn)
	mr, nr := mrYMM, nrYMM
	if t >= AVX512 {
		mr, nr = mrZMM, nrZMM
	}
	bfPairs := t == AVX512BF16
	sc := getScratch()
	defer putScratch(sc)
	bufB, bufA, tile := &sc.b, &sc.a, &sc.tile
	var (
		offA, offB [kc]int
		colB       [nrZMM]int
	)
	rowWords := kc
	if bfPairs {
		rowWords = kc / 2
	}
	cols := s.N * s.N2
	fast := s.CN == 1 && s.N2 == 1
	for n0 := 0; n0 < cols; n0 += nc {
		ncb := min(nc, cols-n0)
		for k0 := 0; k0 < kt; k0 += kc {
			kb := min(kc, kt-k0)
			kOffsets(&s, k0, kb, offA[:], offB[:])
			steps := (kb + 1) / 2 // pairs
			if !bfPairs {
				steps *= 2
			}
			load := k0 > 0 || !s.Overwrite
			for j := 0; j < ncb; j += nr {
				pw := panelWidth(t, nr, ncb-j)
				for c := range pw {
					colB[c] = -1
					if n := n0 + j + c; n < cols {
						colB[c] = colOff(n, s.N2, s.BN, s.BN2)
					}
				}
				packB16(bufB[j*steps:(j+pw)*steps], bs, colB[:pw], offB[:kb], bfPairs)
			}
			for m0 := 0; m0 < s.M; m0 += mr {
				rows := min(mr, s.M-m0)
				packA16(bufA[:], rowWords, as, m0, rows, s.AM, offA[:kb], bfPairs)
				for j := 0; j < ncb; j += nr {
					panel := bufB[j*steps:]
					pw := panelWidth(t, nr, ncb-j)
					if fast && j+pw <= ncb {
						kern(t, rows, pw, steps, &bufA[0], &panel[0], &cs[m0*s.CM+n0+j], s.CM*4, load)
						continue
					}
					w := min(pw, ncb-j)
					if load {
						for r := range rows {
							for c := range pw {
								v := float32(0)
								if c < w {
									v = cs[(m0+r)*s.CM+colOff(n0+j+c, s.N2, s.CN, s.CN2)]
								}
								tile[r*pw+c] = v
							}
						}
					}
					kern(t, rows, pw, steps, &bufA[0], &panel[0], &tile[0], pw*4, load)
					for r := range rows {
						for c := range w {
							cs[(m0+r)*s.CM+colOff(n0+j+c, s.N2, s.CN, s.CN2)] = tile[r*pw+c]
						}
					}
				}
			}
		}
	}
}

// packB16 is packB over bf16 operands: the words of packB, from the
// operands' bits.
func packB16(dst []uint32, bs []rt.BF16, colB []int, offB []int, bfPairs bool) {
	nr := len(colB)
	kb := len(offB)
	i := 0
	for k := 0; k < kb; k += 2 {
		odd := k+1 < kb
		for _, cb := range colB {
			var lo, hi uint32
			if cb >= 0 {
				lo = uint32(bs[cb+offB[k]])
				if odd {
					hi = uint32(bs[cb+offB[k+1]])
				}
			}
			if bfPairs {
				dst[i] = lo | hi<<16
			} else {
				dst[i] = hi << 16
				dst[i+nr] = lo << 16
			}
			i++
		}
		if !bfPairs {
			i += nr
		}
	}
}

// packA16 is packA over bf16 operands.
func packA16(dst []uint32, rowWords int, as []rt.BF16, m0, rows, am int, offA []int, bfPairs bool) {
	kb := len(offA)
	for r := range rows {
		base := (m0 + r) * am
		row := dst[r*rowWords : (r+1)*rowWords]
		i := 0
		for k := 0; k < kb; k += 2 {
			lo := uint32(as[base+offA[k]])
			var hi uint32
			if k+1 < kb {
				hi = uint32(as[base+offA[k+1]])
			}
			if bfPairs {
				row[i] = lo | hi<<16
				i++
			} else {
				row[i], row[i+1] = hi<<16, lo<<16
				i += 2
			}
		}
	}
}
