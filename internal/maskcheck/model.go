// Package maskcheck holds a small attention network whose tests check the
// contractions ocannlgen runs in diagonal blocks when the attention mask
// is causal at run time (docs/design.md, "Masks known at run time")
// against the same network's full kernels and Go loops.
package maskcheck

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Sizes of the network.
const (
	Batch   = 2
	Context = 96 // three blocks of 32, the last one not square with the mask's end
	Width   = 64
)

// Net is one pre-norm block of masked attention (2 heads of 32) with a
// linear head, over Width features per position: its six attention
// products (the scores, the context and, in the backward pass, their
// four gradients) all qualify for the diagonal blocks.
//
//ocannl:model
//ocannl:layer mnet(x, mask):
//ocannl:let x1 = x + masked_attention[heads=2, d_k=32, d_v=32](layer_norm(x), mask)
//ocannl:return linear[8](x1)
//ocannl:let net = mnet[]
//ocannl:loss train:
//ocannl:input x : Batch, Context | Width
//ocannl:input labels : Batch, Context | 8
//ocannl:input mask : Context | Context ->
//ocannl:return cross_entropy(net(x, mask), labels)
//ocannl:sgd lr=0.01
type Net struct {
	ocannlNet
}

// NetBF16 is Net in bf16 mixed precision: its attention products run on
// rt/bf16, in the same diagonal blocks.
//
//ocannl:model bf16
//ocannl:layer mnet(x, mask):
//ocannl:let x1 = x + masked_attention[heads=2, d_k=32, d_v=32](layer_norm(x), mask)
//ocannl:return linear[8](x1)
//ocannl:let net = mnet[]
//ocannl:loss train:
//ocannl:input x : Batch, Context | Width
//ocannl:input labels : Batch, Context | 8
//ocannl:input mask : Context | Context ->
//ocannl:return cross_entropy(net(x, mask), labels)
//ocannl:sgd lr=0.01
type NetBF16 struct {
	ocannlNetBF16
}

// NetBF16Whole is NetBF16 with a mask per sequence of the batch, which
// the generator does not take for a mask (masks are square matrices):
// its attention products always run whole, the reference for NetBF16's
// blocks.
//
//ocannl:model bf16
//ocannl:layer mnet(x, mask):
//ocannl:let x1 = x + masked_attention[heads=2, d_k=32, d_v=32](layer_norm(x), mask)
//ocannl:return linear[8](x1)
//ocannl:let net = mnet[]
//ocannl:loss train:
//ocannl:input x : Batch, Context | Width
//ocannl:input labels : Batch, Context | 8
//ocannl:input mask : Batch, Context | Context ->
//ocannl:return cross_entropy(net(x, mask), labels)
//ocannl:sgd lr=0.01
type NetBF16Whole struct {
	ocannlNetBF16Whole
}

// NetWhole is Net with a mask per sequence: its attention products run
// whole, the reference for Net's blocks.
//
//ocannl:model
//ocannl:layer mnet(x, mask):
//ocannl:let x1 = x + masked_attention[heads=2, d_k=32, d_v=32](layer_norm(x), mask)
//ocannl:return linear[8](x1)
//ocannl:let net = mnet[]
//ocannl:loss train:
//ocannl:input x : Batch, Context | Width
//ocannl:input labels : Batch, Context | 8
//ocannl:input mask : Batch, Context | Context ->
//ocannl:return cross_entropy(net(x, mask), labels)
//ocannl:sgd lr=0.01
type NetWhole struct {
	ocannlNetWhole
}
