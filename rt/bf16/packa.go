package bf16

import (
	"unsafe"

	"github.com/ocannlgen/ocannlgen/rt"
)

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
// anything to pack; packAPart then packs the rows.
func (p *Packed) planA(t Tier, ap *float32, s Shape) bool {
	s, kt, ok := p.begin(t, ap, s, true)
	if !ok {
		return false
	}
	mr, rowWords := p.aGeometry()
	// Every k block holds the rows of each (m2, m3) one after the
	// other, rowWords words each: runOps's panel from row m0 starts at
	// row m0 (aPanel). The rows are packed in groups of 16, not by
	// panel: cvtRows16 then reads whole 64-byte rows of a float32 A
	// contiguous along m once (two 8-row panels of 16 channels read
	// the same rows, 64 KiB apart in a weight gradient's dy, each
	// fetched twice from beyond the L2 cache).
	p.aBlock = s.M2 * s.M3 * s.M * rowWords
	p.aM = s.M
	total := (kt+kc-1)/kc*p.aBlock + mr*rowWords // (the last panel's slice: mr rows)
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

// aGeometry is the height of runOps's A panels and the words of each
// packed row (one k block) in p's tier.
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

// packAPart packs part i of parts of the rows planA laid out: the
// groups of packGroup rows, counted over every k block and (m2, m3),
// are cut into parts of balanced counts, and each group is packed as
// PackA packs it, so that the parts together write the words of one
// PackA.
func (p *Packed) packAPart(i, parts int) {
	s, kt := &p.ns, p.kt
	_, rowWords := p.aGeometry()
	bfPairs := p.t == AVX512BF16
	groups := (s.M + packGroup - 1) / packGroup
	perBlock := s.M2 * s.M3 * groups
	blocks := (kt + kc - 1) / kc
	lo, hi := rt.Share(blocks*perBlock, i, parts)
	if lo >= hi {
		return
	}
	_, an, _ := s.spans()
	all := unsafe.Slice(p.b, an)
	sc := getScratch()
	defer putScratch(sc)
	offA, offB := &sc.offA, &sc.offB
	for u := lo; u < hi; {
		// The groups of one k block and (m2, m3) from u on.
		kbi, mo, g0 := u/perBlock, u%perBlock/groups, u%groups
		end := min(hi, u-g0+groups)
		k0 := kbi * kc
		kb := min(kc, kt-k0)
		kOffsets(s, k0, kb, offA[:], offB[:])
		var rsA [][2]int32
		if bfPairs && hasAsmPack && mayRun(s, s.AK, s.AK2) {
			rsA = runs(offA[:kb], sc.runsA[:])
		}
		sc.tmpRow, sc.nprog = -1, -1
		as := all[s.rowsA(mo):]
		for m0 := g0 * packGroup; u < end; m0, u = m0+packGroup, u+1 {
			rows := min(packGroup, s.M-m0)
			cur := kbi*p.aBlock + (mo*s.M+m0)*rowWords
			dst := p.words[cur : cur+rows*rowWords]
			from := 0
			if bfPairs && hasAsmPack {
				from = packAAsm(dst, rowWords, as, m0, rows, s, offA[:kb], rsA, sc)
			}
			if 2*from < kb {
				packA(dst, rowWords, as, m0, rows, s.AM, offA[:kb], bfPairs, from)
			}
		}
	}
}

// packGroup is the most rows PackA packs at a time (cvtRows16's and
// cvtPairs16's 16).
const packGroup = 16

// aPanel is the packed panel of A for the k block from k0, the rows of
// (m2, m3) number mo from row m0 (runOps's panel) (PackA).
func (p *Packed) aPanel(k0, mo, m0 int) []uint32 {
	_, rowWords := p.aGeometry()
	return p.words[k0/kc*p.aBlock+(mo*p.aM+m0)*rowWords:]
}
