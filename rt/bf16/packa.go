package bf16

import "unsafe"

// PackA converts and packs operand a of Gemm(c, a, b, s) into p, for
// the tier Gemm runs in: the panels of rows of every block of reduction
// steps, as Gemm packs them in each call. The generated code packs an
// A that the parallel parts of a contraction all read whole (the parts
// cut the columns) once before the parts, instead of once in each
// part; GemmOps reads it as Operand{P: p}. a must not change while p
// is used. Like Pack, p's buffer grows on the first PackA and is kept.
// A shape whose operands Gemm swaps (C contiguous along m only) is not
// packed: p then refers to a, which GemmOps reads as float32.
func PackA(p *Packed, a *float32, s Shape) { packATier(p, best, a, s) }

// PackATier is PackA for GemmOpsTier(t, ...).
func PackATier(p *Packed, t Tier, a *float32, s Shape) {
	t = usable(t)
	packATier(p, t, a, s)
}

func packATier(p *Packed, t Tier, ap *float32, s Shape) {
	if p.planA(t, ap, s) {
		p.packAPart(0, 1)
	}
}

// planA lays out p for PackA of operand ap of s in tier t (the buffer
// grown, B's reduction offsets recorded) and reports whether there is
// anything to pack; packAPart then packs the panels.
func (p *Packed) planA(t Tier, ap *float32, s Shape) bool {
	s, kt, ok := p.begin(t, ap, s, true)
	if !ok {
		return false
	}
	mr, rowWords := p.aGeometry()
	np := aPanels(s.M, mr)
	p.aBlock = s.M2 * s.M3 * np * mr * rowWords
	total := (kt + kc - 1) / kc * p.aBlock
	if cap(p.words) < total {
		p.words = make([]uint32, total)
	}
	p.words = p.words[:total]
	if cap(p.offB) < kt {
		p.offB = make([]int, kt)
	}
	p.offB = p.offB[:kt]
	sc := getScratch()
	defer putScratch(sc)
	for k0 := 0; k0 < kt; k0 += kc {
		kb := min(kc, kt-k0)
		kOffsets(&s, k0, kb, sc.offA[:], sc.offB[:])
		copy(p.offB[k0:], sc.offB[:kb])
	}
	p.ns, p.kt = s, kt
	return true
}

// aGeometry is the height of PackA's panels and the words of each of
// their rows (one k block) in p's tier.
func (p *Packed) aGeometry() (mr, rowWords int) {
	mr, rowWords = mrYMM, kc
	if p.t >= AVX512 {
		mr = mrZMM
	}
	if p.t == AVX512BF16 {
		rowWords = kc / 2
	}
	return mr, rowWords
}

// packAPart packs part i of parts of the panels planA laid out: the
// panels, counted over every k block and (m2, m3), are cut into parts
// of balanced counts, and each is packed as PackA packs it, so that
// the parts together write the words of one PackA.
func (p *Packed) packAPart(i, parts int) {
	s, kt := &p.ns, p.kt
	mr, rowWords := p.aGeometry()
	bfPairs := p.t == AVX512BF16
	np := aPanels(s.M, mr)
	perBlock := s.M2 * s.M3 * np
	blocks := (kt + kc - 1) / kc
	lo, hi := partRange(blocks*perBlock, i, parts)
	if lo >= hi {
		return
	}
	_, an, _ := s.spans()
	all := unsafe.Slice(p.b, an)
	sc := getScratch()
	defer putScratch(sc)
	offA, offB := &sc.offA, &sc.offB
	for u := lo; u < hi; {
		// The panels of one k block and (m2, m3) from u on.
		k0, mo, pi0 := u/perBlock*kc, u%perBlock/np, u%np
		end := min(hi, u-pi0+np)
		kb := min(kc, kt-k0)
		kOffsets(s, k0, kb, offA[:], offB[:])
		var rsA [][2]int32
		if bfPairs && hasAsmPack && mayRun(s, s.AK, s.AK2) {
			rsA = runs(offA[:kb], sc.runsA[:])
		}
		sc.tmpRow, sc.nprog = -1, -1
		as := all[s.rowsA(mo):]
		m0 := 0
		for pi := range pi0 {
			m0 += panelRows(s.M, np, pi)
		}
		for pi := pi0; u < end; pi, u = pi+1, u+1 {
			rows := panelRows(s.M, np, pi)
			cur := u * mr * rowWords
			dst := p.words[cur : cur+mr*rowWords]
			from := 0
			if bfPairs && hasAsmPack {
				from = packAAsm(dst, rowWords, as, m0, rows, s, offA[:kb], rsA, sc)
			}
			if 2*from < kb {
				packA(dst, rowWords, as, m0, rows, s.AM, offA[:kb], bfPairs, from)
			}
			m0 += rows
		}
	}
}

// partRange is the share [lo, hi) of part i of parts in n units:
// balanced counts, the larger first.
func partRange(n, i, parts int) (lo, hi int) {
	q, r := n/parts, n%parts
	lo = i*q + min(i, r)
	hi = lo + q
	if i < r {
		hi++
	}
	return lo, hi
}

// aPanel is the packed panel of A for the k block from k0 and the m
// panel number i (of runOps's panels, counted over every (m2, m3))
// (PackA).
func (p *Packed) aPanel(k0, i int) []uint32 {
	mr, rowWords := p.aGeometry()
	o := k0/kc*p.aBlock + i*mr*rowWords
	return p.words[o : o+mr*rowWords]
}
