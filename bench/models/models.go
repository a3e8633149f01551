// Package models holds the CNN and attention demos of examples/ with a
// training batch of 256, for the thread-scaling benchmark (bench -scaling,
// docs/benchmarks.md). The networks, losses and optimizers are the demos'.
package models

// Also generate CUDA C for the GPU path (ocannl_gen.cu): bench/gpu trains
// these models on a GPU.
//
//ocannl:cuda

//go:generate go tool ocannlgen

// CNN is examples/cnn's network trained on batches of 256 glyphs.
//
//ocannl:model
//ocannl:layer convnet(x):
//ocannl:let conv1 = conv2d_valid[8]
//ocannl:let conv2 = conv2d[16]
//ocannl:let head = linear[4]
//ocannl:return head(relu(conv2(max_pool(relu(conv1(x))))))
//ocannl:let net = convnet[]
//ocannl:loss train:
//ocannl:input images : 256 | 12, 12, 1
//ocannl:input labels : 256 | 4
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.05 momentum=0.9 lr_end=0.005 steps=800
type CNN struct {
	ocannlCNN
}

// Reverser is examples/attention's one-block transformer trained on
// batches of 256 sequences of 8 tokens.
//
//ocannl:model
//ocannl:layer reverser[d=32, vocab=10, ff=64](x):
//ocannl:let h = {emb} * x + {pos; b=[8]; o=[d]}
//ocannl:let x1 = layer_norm(h + attention[heads=4, d_k=8, d_v=8](h))
//ocannl:let x2 = layer_norm(x1 + linear[d](dense[ff](x1)))
//ocannl:return linear[vocab](x2)
//ocannl:let net = reverser[]
//ocannl:loss train:
//ocannl:input tokens : 256, 8 | 10
//ocannl:input targets : 256, 8 | 10
//ocannl:return cross_entropy(net(tokens), targets)
//ocannl:sgd lr=0.1 momentum=0.9 nesterov lr_end=0.01 steps=600
type Reverser struct {
	ocannlReverser
}
