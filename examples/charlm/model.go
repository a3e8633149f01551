package main

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// CharLM is a small character-level GPT. Bytes of text enter as token ids
// (an index input: no one-hot rows) in a batch B, T | index 128 (the
// sequence is the last batch axis, which attention attends over); an
// embedding table gives each byte a row of width 96, a learned position
// row is added, and three pre-norm blocks (4-head causal self-attention,
// then a GELU MLP of width 384, each with dropout (p = 0.1, training only)
// and a residual connection) and a final layer norm feed a linear
// read-out to 128 logits per position. The loss is the class-index
// cross-entropy of the next byte; AdamW with gradient clipping and a
// cosine schedule with linear warmup trains it.
//
//ocannl:model
//ocannl:layer block[d, ff](x, mask):
//ocannl:let x1 = x + dropout[0.1](masked_attention[heads=4, d_k=24, d_v=24](layer_norm(x), mask))
//ocannl:return x1 + dropout[0.1](linear[d](gelu(linear[ff](layer_norm(x1)))))
//ocannl:layer gpt[d=96, ff=384, vocab=128, ctx=64](ids, mask):
//ocannl:let h0 = embedding[d](ids) + {pos; b=[ctx]}
//ocannl:let h1 = block[d, ff](h0, mask)
//ocannl:let h2 = block[d, ff](h1, mask)
//ocannl:let h3 = block[d, ff](h2, mask)
//ocannl:return linear[vocab](layer_norm(h3))
//ocannl:let net = gpt[]
//ocannl:loss train:
//ocannl:input ids : Batch, Context | index Vocab
//ocannl:input targets : Batch, Context | index Vocab
//ocannl:input mask : Context | Context ->
//ocannl:return cross_entropy(net(ids, mask), targets)
//ocannl:entry next:
//ocannl:input ids : 1, Context | index Vocab
//ocannl:input mask : Context | Context ->
//ocannl:return net(ids, mask)
//ocannl:adamw lr=2e-3 weight_decay=0.01 clip_norm=1 schedule=cosine warmup=100 steps=1500 lr_end=2e-4
type CharLM struct {
	ocannlCharLM
}

// The model's sizes (the directives name them; ocannlgen checks the
// generated code against them).
const (
	Batch   = 16  // sequences per training step
	Context = 64  // bytes per sequence
	Vocab   = 128 // byte values 0..127; other bytes map to 127
)
