package gocode

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// distPath is the import path of package rt/dist, which the data-parallel
// methods use.
const distPath = "github.com/ocannlgen/ocannlgen/rt/dist"

// distributed emits the data-parallel methods of a model with an
// optimizer and a loss (rt/dist): BroadcastParams and SyncGrads, each
// starting with dist.CheckSame of the model's fingerprint (its element
// type and parameter shapes, computed here with dist.Fingerprint), so that a rank running
// another model is refused before any collective of parameters.
func (g *modelGen) distributed() {
	m := g.m
	if m.Optim == nil || m.Backward == "" {
		return
	}
	jf, recv := g.jf, g.recv
	var dims [][]int
	for _, p := range m.Params {
		dims = append(dims, p.Dims)
	}
	fp := dist.Fingerprint(m.Elem, dims...)
	bits := "32"
	if m.Elem == "float64" {
		bits = "64"
	}
	slices := func(set string) []jen.Code {
		var out []jen.Code
		for i := range m.Params {
			out = append(out, g.sliceOf(set, i))
		}
		return out
	}
	check := jen.If(jen.Err().Op(":=").Qual(distPath, "CheckSame").Call(jen.Id("c"), jen.Id(fmt.Sprintf("%#x", fp)), jen.Id("m").Dot("distBuf").Index(jen.Empty(), jen.Empty())), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
	_, sets, _ := g.optimizerState()
	body := []jen.Code{check}
	for _, set := range append([]string{"Params"}, sets...) {
		body = append(body, jen.If(jen.Err().Op(":=").Qual(distPath, "BroadcastAll"+bits).Call(append([]jen.Code{jen.Id("c"), jen.Id("root")}, slices(set)...)...), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
	}
	body = append(body, jen.Return(jen.Qual(distPath, "BroadcastStep").Call(jen.Id("c"), jen.Id("root"), jen.Op("&").Id("m").Dot("Step"))))
	doc(jf, fmt.Sprintf("BroadcastParams copies rank root's parameters, optimizer state and Step into every rank of c, so\n"+
		"that all ranks start a data-parallel run from the same state (rank 0's fresh Init, or its\n"+
		"LoadCheckpoint). It first checks that every rank runs this model (dist.CheckSame of its\n"+
		"fingerprint %#x): a rank with other parameter shapes gets an error, before any update. Every\n"+
		"rank must call it.", fp))
	jf.Add(recv().Id("BroadcastParams").Params(jen.Id("c").Qual(distPath, "Comm"), jen.Id("root").Int()).Error().Block(body...))
	jf.Line()
	doc(jf, "SyncGrads replaces the gradients of the last Backward by their mean across the ranks of c\n"+
		"(dist.MeanGrads"+bits+": the same bits on every rank), after checking, as BroadcastParams does, that\n"+
		"every rank runs this model. A data-parallel step is Backward on the rank's shard of the\n"+
		"batch (dist.Shard), SyncGrads, Update: the ranks' parameters stay bit-identical, and\n"+
		"clip_norm, applied by Update to the averaged gradients, clips by their global norm. Every\n"+
		"rank must call it. It does not allocate.")
	jf.Add(recv().Id("SyncGrads").Params(jen.Id("c").Qual(distPath, "Comm")).Error().Block(
		check,
		jen.Return(jen.Qual(distPath, "MeanGrads"+bits).Call(append([]jen.Code{jen.Id("c")}, slices("Grads")...)...)),
	))
	jf.Line()
}
