// Package cudagather opts a model with gathers in to CUDA generation, so
// that the emulated GPU tests (emit/cuda) run an embedding lookup, its
// scatter-add gradient and the class-index cross-entropy through the
// CUDA C the generator writes.
package cudagather

//go:generate go run ../../cmd/ocannlgen

// Also generate CUDA C for the GPU path (ocannl_gen.cu).
//
//ocannl:cuda

// Tagger embeds 6 x 5 token ids (vocabulary 11, width 8) and predicts a
// class of 4 for each token with a linear layer; repeated ids make the
// embedding's gradient add several rows into one.
//
//ocannl:model
//ocannl:let emb = embedding[8]
//ocannl:let head = linear[4]
//ocannl:loss train:
//ocannl:input ids : 6, 5 | index 11
//ocannl:input tags : 6, 5 | index 4
//ocannl:return cross_entropy(head(emb(ids)), tags)
//ocannl:entry predict:
//ocannl:input ids : 6, 5 | index 11
//ocannl:return head(emb(ids))
//ocannl:sgd lr=0.1 momentum=0.9
type Tagger struct {
	ocannlTagger
}
