package gocode

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/emit/desc"
)

// indexChecks is the check of entry e's index inputs that opens its
// methods: every cell the kernels read must be a position in [0, bound),
// else the method returns zero and an *rt.IndexError naming the input,
// the cell and the value, before anything is written. With run-time
// rows, an input carrying the rows axis is checked on its first n rows.
// The loop variables start with "_", which no input name does.
func (g *modelGen) indexChecks(e *desc.ModelEntry, zero jen.Code) []jen.Code {
	var out []jen.Code
	for _, in := range e.Inputs {
		if in.IndexBound <= 0 {
			continue
		}
		dims := in.Dims
		if len(dims) == 0 {
			dims = []int{1}
		}
		vars := make([]jen.Code, len(dims))
		cell := jen.Id(in.Name)
		for a := range dims {
			vars[a] = jen.Id(fmt.Sprintf("_i%d", a))
			cell = cell.Index(jen.Id(fmt.Sprintf("_i%d", a)))
		}
		args := append([]jen.Code{jen.Lit(in.Name), jen.Id("_v"), jen.Lit(in.IndexBound)}, vars...)
		var body jen.Code = jen.If(jen.Id("_v").Op(":=").Add(cell), jen.Id("_v").Op("<").Lit(0).Op("||").Id("_v").Op(">=").Lit(in.IndexBound)).Block(
			jen.Return(zero, jen.Qual(rtPath, "NewIndexError").Call(args...)),
		)
		for a := len(dims) - 1; a >= 0; a-- {
			var n jen.Code = jen.Lit(dims[a])
			if a == 0 && in.Rows {
				n = jen.Id("n")
			}
			body = jen.For(jen.Id(fmt.Sprintf("_i%d", a)).Op(":=").Range().Add(n)).Block(body)
		}
		out = append(out, body)
	}
	return out
}

// checkedLoss emits the method of a fixed-batch loss with index inputs:
// (loss, error).
func (g *modelGen) checkedLoss(e *desc.ModelEntry) {
	m := g.m
	body := append(g.indexChecks(e, jen.Lit(0)), g.noiseFill(e)...)
	body = append(body,
		jen.Id(e.Kernel).Call(g.entryArgs(e, jen.Id("m").Dot("Params"), "m", jen.Op("&").Id("m").Dot("loss"), g.inputArgs(e))...),
		jen.Return(jen.Id("m").Dot("loss").Index(jen.Lit(0)), jen.Nil()),
	)
	g.jf.Add(g.recv().Id(e.Method).Params(g.inputParams(e)...).Params(jen.Id(m.Elem), jen.Error()).Block(body...))
}

// checkedEntry emits, on receiver recv (named self, whose parameters are
// params), the method of a fixed-batch predictor with index inputs:
// (result, error).
func (g *modelGen) checkedEntry(e *desc.ModelEntry, recv, params *jen.Statement, self string) {
	m := g.m
	out := jen.Op("&").Id(self).Dot("out" + e.Method)
	body := g.indexChecks(e, jen.Nil())
	body = append(body,
		jen.Id(e.Kernel).Call(g.entryArgs(e, params, self, out.Clone(), g.inputArgs(e))...),
		jen.Return(out, jen.Nil()),
	)
	g.jf.Add(recv.Id(e.Method).Params(g.inputParams(e)...).Params(jen.Op("*").Add(arrType(e.OutDims, m.Elem)), jen.Error()).Block(body...))
}

// noise is the loss entry's dropout masks (nil when it has none).
func (g *modelGen) noise() []desc.ModelNoise {
	if g.m.Loss < 0 {
		return nil
	}
	return g.m.Entries[g.m.Loss].Noise
}

// noiseFields are the model's fields for dropout: Seed and one array per
// mask of the loss entry.
func (g *modelGen) noiseFields() []jen.Code {
	nz := g.noise()
	if nz == nil {
		return nil
	}
	st := []jen.Code{
		jen.Comment("Seed is the seed Init was given; with Step it keys the dropout masks of each training step"),
		jen.Comment("(set it after Load to resume a run's sequence of masks)."),
		jen.Id("Seed").Uint64(),
	}
	for _, n := range nz {
		st = append(st, jen.Id("noise"+n.Field).Index(jen.Lit(n.Size)).Id(g.m.Elem))
	}
	return st
}

// noiseFill is the code that draws the dropout masks of entry e for the
// current step (rt.DropoutMask) before its kernel runs.
func (g *modelGen) noiseFill(e *desc.ModelEntry) []jen.Code {
	var out []jen.Code
	var step jen.Code = jen.Lit(0)
	if g.m.Optim != nil {
		step = jen.Id("m").Dot("Step")
	}
	for _, n := range e.Noise {
		key := make([]jen.Code, 4)
		for i, w := range n.Key {
			key[i] = jen.Lit(int(w))
		}
		out = append(out, jen.Qual(rtPath, "DropoutMask").Call(jen.Id("m").Dot("noise"+n.Field).Index(jen.Empty(), jen.Empty()),
			jen.Lit(n.P), jen.Index(jen.Lit(4)).Uint32().Values(key...), jen.Id("m").Dot("Seed"), step))
	}
	return out
}

// trackUpdates is the code that moves each running statistic's state
// towards the value the last Backward computed (rt.RunningUpdate) and
// advances the update counters, once each.
func (g *modelGen) trackUpdates(e *desc.ModelEntry) []jen.Code {
	var out []jen.Code
	counted := map[int]bool{}
	for _, tr := range e.Tracks {
		out = append(out, jen.Qual(rtPath, "RunningUpdate").Call(g.sliceOf("Params", tr.State),
			jen.Id("m").Dot("stat"+tr.StatField).Index(jen.Empty(), jen.Empty()), jen.Lit(tr.Momentum)))
		if tr.Counter >= 0 && !counted[tr.Counter] {
			counted[tr.Counter] = true
			out = append(out, g.field("Params", tr.Counter).Index(jen.Lit(0)).Op("++"))
		}
	}
	return out
}

// tracksDoc documents TrainStep's running-statistics updates.
func (g *modelGen) tracksDoc(e *desc.ModelEntry) string {
	if len(e.Tracks) == 0 {
		return ""
	}
	return "\nBetween the two it moves the running statistics towards the step's (rt.RunningUpdate) and counts\nthe step in their num_batches_tracked."
}
