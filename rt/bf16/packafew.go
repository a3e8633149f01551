package bf16

// packAFew is packAAsm for an A contiguous along m with fewer than 16
// rows in all (a 1x1 convolution's kernel gradient split into parts of
// 4 output channels: packed in Go, 3-4% of the bf16 ResNet step): for
// the leading pairs in runs along one stride (progPairs), the panel's
// rows converted with cvtPairs16m (masked: nothing past them is read)
// into the scratch's tmp, then transposed into the panel's rows. It
// returns the number of pairs packed; packA packs the rest.
func packAFew(dst []uint32, rowWords int, as []float32, m0, rows int, s *Shape, offA []int, sc *scratch) int {
	if s.AM != 1 || s.M >= 16 || rows <= 0 || rows > 16 || len(offA) < 16 {
		return 0
	}
	mask := 1<<rows - 1
	done := progPairs(offA, func(p0, np, d int) { cvtPairs16m(&sc.tmp[p0*16], &as[m0+offA[2*p0]], d*4, np, mask) })
	sc.tmpRow = -1 // (tmp no longer holds packAAsm's rows)
	transposeRows(dst, rowWords, &sc.tmp, rows, 0, 0, done)
	return done
}
