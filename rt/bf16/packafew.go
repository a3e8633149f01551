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
	done := progPairs(offA, func(p0, np, d int) { cvtPairs16m(&sc.tmp[p0*16], 64, &as[m0+offA[2*p0]], d*4, np, mask) })
	sc.tmpRow = -1 // (tmp no longer holds packAAsm's rows)
	transposeRows(dst, rowWords, &sc.tmp, rows, 0, 0, done)
	return done
}

// packBGroups is packBAsm for a B panel whose columns run in groups of
// at most 16 contiguous ones (a second column axis: the first
// convolution's kernel gradient, 3 kernel columns x 3 channels
// contiguous, 3 kernel rows apart; packed in Go, about 3% of the bf16
// ResNet step): for the leading pairs in runs along one stride
// (progPairs), each group with cvtPairs16m (masked: only the group's
// columns are read and written). Columns past the end (colB -1) keep
// what the buffer held: they only reach cells of the tile that are not
// stored. It returns the number of pairs packed; packB packs the rest.
func packBGroups(dst []uint32, bs []float32, colB []int, offB []int) int {
	nr := len(colB)
	if len(offB) < 16 || colB[0] < 0 {
		return 0
	}
	// The groups: (first column, length), at most nr/2 of them.
	var groups [nrZMM][2]int
	ng := 0
	for c := 0; c < nr && colB[c] >= 0; {
		e := c + 1
		for e < nr && e-c < 16 && colB[e] == colB[e-1]+1 {
			e++
		}
		groups[ng] = [2]int{c, e - c}
		ng++
		c = e
	}
	if ng > nr/4 {
		return 0 // groups too short: packB
	}
	done := -1
	for _, g := range groups[:ng] {
		d := progPairs(offB, func(p0, np, d int) {
			cvtPairs16m(&dst[p0*nr+g[0]], nr*4, &bs[colB[g[0]]+offB[2*p0]], d*4, np, 1<<g[1]-1)
		})
		if done < 0 || d < done {
			done = d
		}
	}
	return max(done, 0)
}
