package models

// The scale benchmarks (bench -scale, bench/scale.sh, docs/benchmarks.md,
// "Scale benchmarks"): two models at the size people train, each with a
// PyTorch twin in bench/torch_scale.py.

// GPTContext, GPTVocab and GPTBatch size the nanoGPT-char decoder's inputs.
const (
	GPTBatch   = 8
	GPTContext = 128
	GPTVocab   = 256
)

// GPT is a nanoGPT-char-sized decoder (Karpathy's shakespeare_char
// configuration without dropout and without weight tying): token ids
// (index inputs over a 256-symbol vocabulary) looked up in a learned
// 256 x 384 token embedding (embedding[d], PyTorch's nn.Embedding) plus
// a learned positional embedding over the 128 positions, 6 pre-norm
// blocks (causal multi-head self-attention with 6 heads of 64 and
// projections without bias; a GELU MLP 384 -> 1536 -> 384 with biases,
// PyTorch's default erf GELU; each added back to the stream), a final
// layer norm and a linear head to 256 logits per position, trained on
// next-token targets (ids) with cross-entropy and AdamW.
//
// The causal mask is an input (mask : 128 | 128 ->, the query position in
// the batch row, the key position in the input row; 1 keeps a score):
// the caller fills it once with the lower triangle.
//
//ocannl:model
//ocannl:layer block[d, ff](x, mask):
//ocannl:let x1 = x + masked_attention[heads=6, d_k=64, d_v=64](layer_norm(x), mask)
//ocannl:return x1 + linear[d](gelu(linear[ff](layer_norm(x1))))
//ocannl:layer gpt[d=384, ff=1536, vocab=256](tokens, mask):
//ocannl:let h0 = embedding[d](tokens) + {pos; b=[128]}
//ocannl:let h1 = block[d, ff](h0, mask)
//ocannl:let h2 = block[d, ff](h1, mask)
//ocannl:let h3 = block[d, ff](h2, mask)
//ocannl:let h4 = block[d, ff](h3, mask)
//ocannl:let h5 = block[d, ff](h4, mask)
//ocannl:let h6 = block[d, ff](h5, mask)
//ocannl:return linear[vocab](layer_norm(h6))
//ocannl:let net = gpt[]
//ocannl:loss train:
//ocannl:input tokens : GPTBatch, GPTContext | index GPTVocab
//ocannl:input targets : GPTBatch, GPTContext | index GPTVocab
//ocannl:input mask : GPTContext | GPTContext ->
//ocannl:return cross_entropy(net(tokens, mask), targets)
//ocannl:adamw lr=3e-4
type GPT struct {
	ocannlGPT
}

// GPTBF16 is GPT in bf16 mixed precision (//ocannl:model bf16): float32
// master weights, gradients and AdamW state; its contractions on bf16
// operands with float32 accumulation (rt/bf16).
//
//ocannl:model bf16
//ocannl:layer block[d, ff](x, mask):
//ocannl:let x1 = x + masked_attention[heads=6, d_k=64, d_v=64](layer_norm(x), mask)
//ocannl:return x1 + linear[d](gelu(linear[ff](layer_norm(x1))))
//ocannl:layer gpt[d=384, ff=1536, vocab=256](tokens, mask):
//ocannl:let h0 = embedding[d](tokens) + {pos; b=[128]}
//ocannl:let h1 = block[d, ff](h0, mask)
//ocannl:let h2 = block[d, ff](h1, mask)
//ocannl:let h3 = block[d, ff](h2, mask)
//ocannl:let h4 = block[d, ff](h3, mask)
//ocannl:let h5 = block[d, ff](h4, mask)
//ocannl:let h6 = block[d, ff](h5, mask)
//ocannl:return linear[vocab](layer_norm(h6))
//ocannl:let net = gpt[]
//ocannl:loss train:
//ocannl:input tokens : GPTBatch, GPTContext | index GPTVocab
//ocannl:input targets : GPTBatch, GPTContext | index GPTVocab
//ocannl:input mask : GPTContext | GPTContext ->
//ocannl:return cross_entropy(net(tokens, mask), targets)
//ocannl:adamw lr=3e-4
type GPTBF16 struct {
	ocannlGPTBF16
}

// ResNetBatch is the ResNet-20's training batch.
const ResNetBatch = 32

// ResNet20 is He et al.'s CIFAR-10 ResNet-20 without batch norm: a 3x3
// convolution to 16 channels, then 3 stages of 3 basic blocks (two 3x3
// convolutions and a residual connection, ReLU after the sum) with 16, 32
// and 64 channels; the first block of stages 2 and 3 halves the image
// with a stride-2 3x3 convolution and takes its shortcut through a
// stride-2 1x1 convolution (a projection, He et al.'s option B); global
// average pooling over the 8x8 image, a linear head to 10 classes,
// cross-entropy, SGD with momentum 0.9. Images are NHWC,
// 32 | 32, 32, 3. Every convolution has a bias (std conv2d).
//
//ocannl:model
//ocannl:layer basic[c](x) = relu(x + conv2d[c](relu(conv2d[c](x))))
//ocannl:layer down[c](x) = relu(conv2d[c, k=1, stride=2](x) + conv2d[c](relu(conv2d[c, stride=2](x))))
//ocannl:layer resnet(x):
//ocannl:let h0 = relu(conv2d[16](x))
//ocannl:let s1 = basic[16](basic[16](basic[16](h0)))
//ocannl:let s2 = basic[32](basic[32](down[32](s1)))
//ocannl:let s3 = basic[64](basic[64](down[64](s2)))
//ocannl:let pooled = (s3 ++ "... | h, w, c => ... | c") *. 0.015625
//ocannl:return linear[10](pooled)
//ocannl:let net = resnet[]
//ocannl:loss train:
//ocannl:input images : ResNetBatch | 32, 32, 3
//ocannl:input labels : ResNetBatch | 10
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.05 momentum=0.9
type ResNet20 struct {
	ocannlResNet20
}

// ResNet20BF16 is ResNet20 in bf16 mixed precision (//ocannl:model bf16).
//
//ocannl:model bf16
//ocannl:layer basic[c](x) = relu(x + conv2d[c](relu(conv2d[c](x))))
//ocannl:layer down[c](x) = relu(conv2d[c, k=1, stride=2](x) + conv2d[c](relu(conv2d[c, stride=2](x))))
//ocannl:layer resnet(x):
//ocannl:let h0 = relu(conv2d[16](x))
//ocannl:let s1 = basic[16](basic[16](basic[16](h0)))
//ocannl:let s2 = basic[32](basic[32](down[32](s1)))
//ocannl:let s3 = basic[64](basic[64](down[64](s2)))
//ocannl:let pooled = (s3 ++ "... | h, w, c => ... | c") *. 0.015625
//ocannl:return linear[10](pooled)
//ocannl:let net = resnet[]
//ocannl:loss train:
//ocannl:input images : ResNetBatch | 32, 32, 3
//ocannl:input labels : ResNetBatch | 10
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.05 momentum=0.9
type ResNet20BF16 struct {
	ocannlResNet20BF16
}
