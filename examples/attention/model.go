package main

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Also generate CUDA C for the GPU path (ocannl_gen.cu; docs/language.md, "The GPU path").
//
//ocannl:cuda

// Reverser is a one-block transformer that reverses sequences of 8 tokens.
// A token t at position p enters as a one-hot row of width 10 in a batch
// B, 8 | 10 (the sequence is the last batch axis, which is the axis the
// attention layer attends over); it is embedded to width 32, a learned
// positional embedding (batch axis 8, broadcast over B) is added, and one
// post-norm transformer block (4-head self-attention, then a ReLU MLP of
// width 64, each with a residual connection and layer normalization) feeds
// a linear read-out to 10 logits per position.
//
//ocannl:model
//ocannl:layer reverser[d=32, vocab=10, ff=64](x):
//ocannl:let h = {emb} * x + {pos; b=[8]; o=[d]}
//ocannl:let x1 = layer_norm(h + attention[heads=4, d_k=8, d_v=8](h))
//ocannl:let x2 = layer_norm(x1 + linear[d](dense[ff](x1)))
//ocannl:return linear[vocab](x2)
//ocannl:let net = reverser[]
//ocannl:loss train:
//ocannl:input tokens : 32, 8 | 10
//ocannl:input targets : 32, 8 | 10
//ocannl:return cross_entropy(net(tokens), targets)
//ocannl:entry predict:
//ocannl:input tokens : 64, 8 | 10
//ocannl:return net(tokens)
//ocannl:sgd lr=0.1 momentum=0.9 nesterov lr_end=0.01 steps=600
type Reverser struct {
	ocannlReverser
}
