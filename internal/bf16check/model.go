// Package bf16check holds twin models, float32 and //ocannl:model bf16,
// whose tests check that bf16 mixed precision trains like float32, is
// bit-identical across thread counts, and allocates nothing.
package bf16check

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Sizes of the decoder twins.
const (
	Batch   = 8
	Context = 16
	Vocab   = 32
)

// Dec is a two-block pre-norm decoder (causal attention with 4 heads of
// 16, a ReLU MLP 64 -> 128 -> 64) over one-hot tokens, in float32.
//
//ocannl:model
//ocannl:layer block[d, ff](x, mask):
//ocannl:let x1 = x + masked_attention[heads=4, d_k=16, d_v=16](layer_norm(x), mask)
//ocannl:return x1 + linear[d](dense[ff](layer_norm(x1)))
//ocannl:layer gpt[d=64, ff=128, vocab=32](tokens, mask):
//ocannl:let h0 = {emb; o=[d]} * tokens + {pos; b=[16]}
//ocannl:let h1 = block[d, ff](h0, mask)
//ocannl:let h2 = block[d, ff](h1, mask)
//ocannl:return linear[vocab](layer_norm(h2))
//ocannl:let net = gpt[]
//ocannl:loss train:
//ocannl:input tokens : Batch, Context | Vocab
//ocannl:input targets : Batch, Context | Vocab
//ocannl:input mask : Context | Context ->
//ocannl:return cross_entropy(net(tokens, mask), targets)
//ocannl:adamw lr=1e-3
type Dec struct {
	ocannlDec
}

// DecBF16 is Dec with its contractions on bf16 operands.
//
//ocannl:model bf16
//ocannl:layer block[d, ff](x, mask):
//ocannl:let x1 = x + masked_attention[heads=4, d_k=16, d_v=16](layer_norm(x), mask)
//ocannl:return x1 + linear[d](dense[ff](layer_norm(x1)))
//ocannl:layer gpt[d=64, ff=128, vocab=32](tokens, mask):
//ocannl:let h0 = {emb; o=[d]} * tokens + {pos; b=[16]}
//ocannl:let h1 = block[d, ff](h0, mask)
//ocannl:let h2 = block[d, ff](h1, mask)
//ocannl:return linear[vocab](layer_norm(h2))
//ocannl:let net = gpt[]
//ocannl:loss train:
//ocannl:input tokens : Batch, Context | Vocab
//ocannl:input targets : Batch, Context | Vocab
//ocannl:input mask : Context | Context ->
//ocannl:return cross_entropy(net(tokens, mask), targets)
//ocannl:adamw lr=1e-3
type DecBF16 struct {
	ocannlDecBF16
}

// Conv is a small convolutional network in float32 (3x3 convolutions
// to 16, 16 and, with stride 2, 32 channels, a linear head; the second
// convolution's input gradient runs as a gather in ConvBF16).
//
//ocannl:model
//ocannl:layer net2(x):
//ocannl:let h = relu(conv2d[32, stride=2](relu(conv2d[16](relu(conv2d[16](x))))))
//ocannl:return linear[10](h)
//ocannl:let net = net2[]
//ocannl:loss train:
//ocannl:input images : 16 | 12, 12, 3
//ocannl:input labels : 16 | 10
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.004 momentum=0.9
type Conv struct {
	ocannlConv
}

// ConvBF16 is Conv with its contractions on bf16 operands.
//
//ocannl:model bf16
//ocannl:layer net2(x):
//ocannl:let h = relu(conv2d[32, stride=2](relu(conv2d[16](relu(conv2d[16](x))))))
//ocannl:return linear[10](h)
//ocannl:let net = net2[]
//ocannl:loss train:
//ocannl:input images : 16 | 12, 12, 3
//ocannl:input labels : 16 | 10
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.004 momentum=0.9
type ConvBF16 struct {
	ocannlConvBF16
}
