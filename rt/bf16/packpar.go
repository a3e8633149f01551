package bf16

import "github.com/ocannlgen/ocannlgen/rt"

// PackIn is Pack with its work cut into parts run on region r
// (rt.Region.Run, the parts' barrier included): the same packed words.
// The generated code of a contraction that runs in parts packs its
// weight this way, so that the packing before the parts runs on the
// pool's threads as well. It allocates nothing once p has grown.
func PackIn(r rt.Region, p *Packed, b *float32, s Shape, parts int) {
	if p.planB(best, b, s) {
		p.runParts(r, parts)
	}
}

// PackAIn is PackA with its work cut into parts run on region r, as
// PackIn is Pack's: the same packed words.
func PackAIn(r rt.Region, p *Packed, a *float32, s Shape, parts int) {
	if p.planA(best, a, s) {
		p.runParts(r, parts)
	}
}

// runParts runs the packing p was planned for in parts on r.
func (p *Packed) runParts(r rt.Region, parts int) {
	p.parts = max(parts, 1)
	p.job.p = p
	r.Run(&p.job, p.parts)
	p.job.p = nil
}

// packJob is the rt.Task of a packing run in parts (PackIn, PackAIn).
type packJob struct{ p *Packed }

// Part packs part i of the packing's parts.
func (j *packJob) Part(i int) {
	if j.p.isA {
		j.p.packAPart(i, j.p.parts)
	} else {
		j.p.packBPart(i, j.p.parts)
	}
}
