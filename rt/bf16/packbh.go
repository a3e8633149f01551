package bf16

// packBH is packBAsm for a B already converted to bf16 (bf16.Converted,
// GemmOps's H form: a convolution's input that the kernel gradient's
// calls read many times over): the leading pairs of a panel whose
// columns are contiguous, in runs along one stride (progPairs), with
// pairsH16/pairsH32 (the pair interleaving of cvtPairs16/cvtPairs32
// without the conversion). It returns the number of pairs packed;
// packB16 packs the rest.
func packBH(dst []uint32, bh []uint16, colB []int, offB []int, s *Shape) int {
	nr := len(colB)
	if len(offB) < 4 || colB[nr-1] < 0 || s.BN != 1 || s.N2 != 1 || nr != nrZMM && nr != 16 {
		return 0
	}
	return progPairs(offB, func(p0, np, d int) {
		if nr == 16 {
			pairsH16(&dst[p0*nr], &bh[colB[0]+offB[2*p0]], d*2, np)
		} else {
			pairsH32(&dst[p0*nr], &bh[colB[0]+offB[2*p0]], d*2, np)
		}
	})
}
