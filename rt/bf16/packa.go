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
	s, kt, ok := p.begin(t, ap, s, true)
	if !ok {
		return
	}
	mr := mrYMM
	if t >= AVX512 {
		mr = mrZMM
	}
	bfPairs := t == AVX512BF16
	rowWords := kc
	if bfPairs {
		rowWords = kc / 2
	}
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
	_, an, _ := s.spans()
	all := unsafe.Slice(ap, an)
	sc := getScratch()
	defer putScratch(sc)
	offA, offB := &sc.offA, &sc.offB
	cur := 0
	for k0 := 0; k0 < kt; k0 += kc {
		kb := min(kc, kt-k0)
		kOffsets(&s, k0, kb, offA[:], offB[:])
		copy(p.offB[k0:], offB[:kb])
		var rsA [][2]int32
		if bfPairs && hasAsmPack && mayRun(&s, s.AK, s.AK2) {
			rsA = runs(offA[:kb], sc.runsA[:])
		}
		// The panels of runOps: m in panels of balanced heights inside
		// each (m2, m3).
		for mo := range s.M2 * s.M3 {
			sc.tmpRow, sc.nprog = -1, -1
			as := all[s.rowsA(mo):]
			for m0, pi, rows := 0, 0, 0; m0 < s.M; m0, pi = m0+rows, pi+1 {
				rows = panelRows(s.M, np, pi)
				dst := p.words[cur : cur+mr*rowWords]
				from := 0
				if bfPairs && hasAsmPack {
					from = packAAsm(dst, rowWords, as, m0, rows, &s, offA[:kb], rsA, sc)
				}
				if 2*from < kb {
					packA(dst, rowWords, as, m0, rows, s.AM, offA[:kb], bfPairs, from)
				}
				cur += mr * rowWords
			}
		}
	}
}

// aPanel is the packed panel of A for the k block from k0 and the m
// panel number i (of runOps's panels, counted over every (m2, m3))
// (PackA).
func (p *Packed) aPanel(k0, i int) []uint32 {
	mr := mrYMM
	if p.t >= AVX512 {
		mr = mrZMM
	}
	rowWords := kc
	if p.t == AVX512BF16 {
		rowWords = kc / 2
	}
	o := k0/kc*p.aBlock + i*mr*rowWords
	return p.words[o : o+mr*rowWords]
}
