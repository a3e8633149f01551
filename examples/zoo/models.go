// Package zoo is a model zoo kept as a test: small versions of the
// architectures people write first, each written the way a user would,
// with every weight's shape inferred from how it is used. The only sizes
// written are the ones a user must choose (layer widths, channel counts,
// kernel sizes, the model width of the transformer) and the inputs'.
//
// Every model is float64, so that its gradients can be checked against
// central differences; zoo_test.go trains each a few steps and checks its
// gradients. Sizes are tiny so that the package tests in seconds.
package zoo

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// LeNet is LeNet-5 in miniature: two valid 3x3 convolutions, each followed
// by ReLU and 2x2 max pooling, then three fully connected layers.
//
//	images   B | 14, 14, 1
//	conv1    B | 12, 12, 4   (conv2d_valid, relu)   pool  B | 6, 6, 4
//	conv2    B |  4,  4, 6   (conv2d_valid, relu)   pool  B | 2, 2, 6
//	fc       B | 16 -> 12 -> 3
//
//ocannl:model float64
//ocannl:layer lenet(x):
//ocannl:let p1 = max_pool(relu(conv2d_valid[4](x)))
//ocannl:let p2 = max_pool(relu(conv2d_valid[6](p1)))
//ocannl:return linear[3](dense[12](dense[16](p2)))
//ocannl:let net = lenet[]
//ocannl:loss train:
//ocannl:input images : 4 | 14, 14, 1
//ocannl:input labels : 4 | 3
//ocannl:return cross_entropy(net(images), labels)
//ocannl:entry predict:
//ocannl:input image : 1 | 14, 14, 1
//ocannl:return net(image)
//ocannl:sgd lr=0.2 momentum=0.9
type LeNet struct {
	ocannlLeNet
}

// VGG is a VGG-style stack of two blocks, each a padded 3x3 convolution,
// another, and 2x2 max pooling; the first convolution reads the model
// input directly.
//
//	images   B | 8, 8, 2
//	block1   B | 4, 4, 4
//	block2   B | 2, 2, 6
//	head     B | 3
//
//ocannl:model float64
//ocannl:layer vgg_block[c](x) = max_pool(relu(conv2d[c](relu(conv2d[c](x)))))
//ocannl:layer vgg(x) = linear[3](vgg_block[6](vgg_block[4](x)))
//ocannl:let net = vgg[]
//ocannl:loss train:
//ocannl:input images : 2 | 8, 8, 2
//ocannl:input labels : 2 | 3
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.05 momentum=0.9
type VGG struct {
	ocannlVGG
}

// ResNet is a stem convolution and one ResNet basic block that halves the
// resolution and doubles the channels: two 3x3 convolutions (the first
// strided) on the main path, and a strided 1x1 convolution projecting the
// shortcut to the new shape; the residual sum goes through ReLU, then a
// global average pool and a linear classifier.
//
//	images   B | 8, 8, 1
//	stem     B | 8, 8, 4
//	block    B | 4, 4, 8     (main: conv 3x3 stride 2, conv 3x3; shortcut: conv 1x1 stride 2)
//	pool     B | 8
//	head     B | 3
//
//ocannl:model float64
//ocannl:layer basic_block[out, stride](x):
//ocannl:let h = relu(conv2d[out, stride=stride](x))
//ocannl:let main = conv2d[out](h)
//ocannl:let shortcut = conv2d[out, k=1, stride=stride](x)
//ocannl:return relu(main + shortcut)
//ocannl:layer global_avg_pool(x):
//ocannl:let s = x ++ "... | h, w, c => ... | c" ["h"; "w"]
//ocannl:return s /. (dim h *. dim w)
//ocannl:layer resnet(x):
//ocannl:let stem = relu(conv2d[4](x))
//ocannl:return linear[3](global_avg_pool(basic_block[8, 2](stem)))
//ocannl:let net = resnet[]
//ocannl:loss train:
//ocannl:input images : 2 | 8, 8, 1
//ocannl:input labels : 2 | 3
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.05 momentum=0.9
type ResNet struct {
	ocannlResNet
}

// Normalized normalizes its input, (x - 0.5) * 2 from pixels in [0, 1) to
// [-1, 1), before the first (padded) convolution; the linear head's weight
// is inferred through the normalization and the convolution (issue 14.1).
// Classify takes its number of rows at run time (up to 3).
//
//	images   B | 6, 6, 1
//	conv     B | 6, 6, 3
//	head     B | 4
//
//ocannl:model float64
//ocannl:let c1 = conv2d[3]
//ocannl:let head = linear[4]
//ocannl:loss train:
//ocannl:input images : 2 | 6, 6, 1
//ocannl:input labels : 2 | 4
//ocannl:return cross_entropy(head(relu(c1((images - 0.5) *. 2))), labels)
//ocannl:entry predict:
//ocannl:input images : 3 | 6, 6, 1
//ocannl:return head(relu(c1((images - 0.5) *. 2)))
//ocannl:entry classify:
//ocannl:input images : <=3 | 6, 6, 1
//ocannl:return head(relu(c1((images - 0.5) *. 2)))
//ocannl:sgd lr=0.05 momentum=0.9
type Normalized struct {
	ocannlNormalized
}

// MobileNet is a MobileNet-style depthwise separable block on a
// normalized input: a depthwise 3x3 convolution (one kernel per channel:
// the kernel's output row is the channel row it shares with its operand
// and result), ReLU, a pointwise 1x1 convolution mixing the channels, ReLU,
// average pooling and a linear classifier.
//
//	images   B | 6, 6, 3
//	dw       B | 6, 6, 3
//	pw       B | 6, 6, 5
//	pool     B | 3, 3, 5
//	head     B | 2
//
//ocannl:model float64
//ocannl:layer depthwise[k=3](x):
//ocannl:let y = x +* "... | oh=+kh, ow=+kw, ..c..; kh, kw -> ..c.. => ... | oh, ow, ..c.." ["kh"; "kw"] {kernel}
//ocannl:dim kh = k
//ocannl:dim kw = k
//ocannl:return y + {bias = 0.}
//ocannl:layer separable[out](x) = relu(conv2d[out, k=1](relu(depthwise[](x))))
//ocannl:layer mobilenet(x) = linear[2](avg_pool(separable[5](x *. 2 - 1)))
//ocannl:let net = mobilenet[]
//ocannl:loss train:
//ocannl:input images : 2 | 6, 6, 3
//ocannl:input labels : 2 | 2
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.5 momentum=0.9
type MobileNet struct {
	ocannlMobileNet
}

// Transformer is a two-block pre-norm transformer encoder over sequences of
// 4 token ids from a vocabulary of 6. Ids are looked up in a learned
// embedding (as one-hot rows: vocab = ids, times the embedding matrix); a
// learned positional embedding is added; each block is self-attention
// with a causal mask (position s attends to positions t <= s only: the
// mask's batch axis is the query, its input axis the key) and a ReLU MLP, each applied to the layer-normalized
// stream and added back (pre-norm). A final layer norm and a linear
// read-out give next-token logits per position. PredictMany takes up to 3
// sequences, their number chosen at run time.
//
//	ids      B, T |            (token ids as numbers)
//	onehot   B, T | 6
//	stream   B, T | 8          (the model width d, the one hidden size the
//	                            embedding needs: nothing else sets it)
//	logits   B, T | 6
//
// The positional embedding is a parameter with a batch axis (the sequence
// axis T), which parameters never get from use: its b=[4] is required.
//
//ocannl:model float64
//ocannl:layer encoder_block[d, ff](x, mask):
//ocannl:let x1 = x + masked_attention[heads=2, d_k=4, d_v=4](layer_norm(x), mask)
//ocannl:return x1 + linear[d](dense[ff](layer_norm(x1)))
//ocannl:layer encoder[d=8, ff=16, vocab=6](ids):
//ocannl:let mask = [| (1, 0, 0, 0); (1, 1, 0, 0); (1, 1, 1, 0); (1, 1, 1, 1) |]
//ocannl:let onehot = [0; 1; 2; 3; 4; 5] = ids
//ocannl:let h = {emb; o=[d]} * onehot + {pos; b=[4]}
//ocannl:let h2 = encoder_block[d, ff](encoder_block[d, ff](h, mask), mask)
//ocannl:return linear[vocab](layer_norm(h2))
//ocannl:let net = encoder[]
//ocannl:loss train:
//ocannl:input ids : 2, 4 |
//ocannl:input targets : 2, 4 | 6
//ocannl:return cross_entropy(net(ids), targets)
//ocannl:entry predict:
//ocannl:input ids : 1, 4 |
//ocannl:return net(ids)
//ocannl:entry predict_many:
//ocannl:input ids : <=3, 4 |
//ocannl:return net(ids)
//ocannl:sgd lr=0.05 momentum=0.9
type Transformer struct {
	ocannlTransformer
}

// Mixer is an MLP-Mixer: patches are embedded per patch, then one mixer
// block mixes across patches (token mixing: a two-layer MLP along the
// patch axis, shared by all channels) and across channels (channel mixing:
// a two-layer MLP along the channel axis, shared by all patches), each on
// the layer-normalized stream with a residual; a mean over patches and a
// linear classifier follow. Patches are the last batch axis, as a sequence
// is for attention.
//
//	patches  B, P | 6          (P = 4 patches of 6 values)
//	stream   B, P | 8
//	pooled   B | 8
//	logits   B | 3
//
//ocannl:model float64
//ocannl:layer mixer_block[tokens_hidden, channels_hidden](x):
//ocannl:let t = layer_norm(x)
//ocannl:let u = relu(t +* "... p | c; p -> h => ... h | c" ["h"] {tok1})
//ocannl:dim h = tokens_hidden
//ocannl:let x1 = x + (u +* "... h | c; h -> p => ... p | c" {tok2})
//ocannl:return x1 + {ch2} * dense[channels_hidden](layer_norm(x1)) + {ch2_b = 0.}
//ocannl:layer mixer(patches):
//ocannl:let y = mixer_block[5, 12](linear[8](patches))
//ocannl:let pooled = (y ++ "... p | c => ... | c" ["p"]) /. dim p
//ocannl:return linear[3](pooled)
//ocannl:let net = mixer[]
//ocannl:loss train:
//ocannl:input patches : 2, 4 | 6
//ocannl:input labels : 2 | 3
//ocannl:return cross_entropy(net(patches), labels)
//ocannl:sgd lr=0.05 momentum=0.9
type Mixer struct {
	ocannlMixer
}

// Autoencoder compresses 12 features to a code of 3 and reconstructs them:
// the encoder and the decoder share no weights. The decoder's last layer
// gets its width (12) from the reconstruction loss.
//
//	x        B | 12
//	encoder  B | 8 -> 3
//	decoder  B | 8 -> 12
//
//ocannl:model float64
//ocannl:layer encoder(x) = linear[3](dense[8](x))
//ocannl:layer decoder(z) = {w_out} * dense[8](z) + {b_out = 0.}
//ocannl:layer mse(a, b):
//ocannl:let d = a - b
//ocannl:return ((d *. d) ++ "..b.. | ... -> ... => 0" ["b"]) /. dim b
//ocannl:let enc = encoder[]
//ocannl:let dec = decoder[]
//ocannl:loss train:
//ocannl:input x : 4 | 12
//ocannl:return mse(dec(tanh(enc(x))), x)
//ocannl:entry encode:
//ocannl:input x : 1 | 12
//ocannl:return enc(x)
//ocannl:sgd lr=0.05 momentum=0.9
type Autoencoder struct {
	ocannlAutoencoder
}

// RowsMLP trains on a number of rows chosen at run time (up to 4): its
// loss is the mean cross-entropy over the first n rows, and TrainStep and
// Backward take n too. Predict is the same network on a fixed batch.
//
//ocannl:model float64
//ocannl:let net = mlp2[6, 5]
//ocannl:loss train:
//ocannl:input x : <=4 | 3
//ocannl:input y : <=4 | 2
//ocannl:return cross_entropy(net(x), y)
//ocannl:entry predict:
//ocannl:input x : 4 | 3
//ocannl:return net(x)
//ocannl:sgd lr=0.1 momentum=0.9
type RowsMLP struct {
	ocannlRowsMLP
}

// RowsSeq is RowsMLP over sequences, rows of 2 positions each, with a
// loss that sums the cross-entropy over the rows and positions instead of
// averaging it.
//
//ocannl:model float64
//ocannl:let net = mlp2[6, 5]
//ocannl:loss train:
//ocannl:input x : <=3, 2 | 3
//ocannl:input y : <=3, 2 | 2
//ocannl:return -((y *. log_softmax(net(x))) ++ "... | ... -> ... => 0")
//ocannl:entry predict:
//ocannl:input x : 3, 2 | 3
//ocannl:return net(x)
//ocannl:sgd lr=0.1 momentum=0.9
type RowsSeq struct {
	ocannlRowsSeq
}

// ResNetBN is a small residual network with batch norm, PyTorch's ResNet
// pattern: a 3x3 convolution, batch norm and ReLU, then a basic block
// (conv, batch norm, ReLU, conv, batch norm, plus the block's input,
// ReLU), global average pooling and a linear layer, trained with
// class-index cross-entropy. In training the batch norms normalize by the
// batch's statistics and TrainStep updates their running statistics;
// Predict normalizes by those.
//
//	images   B | 4, 4, 2
//	stem     B | 4, 4, 4   (conv2d, batch_norm, relu)
//	block    B | 4, 4, 4   (residual basic block)
//	pool     B | 4
//	head     B | 3
//
//ocannl:model float64
//ocannl:layer basic[c](x) = relu(x + batch_norm[](conv2d[c](relu(batch_norm[](conv2d[c](x))))))
//ocannl:layer resnet(x):
//ocannl:let h0 = relu(batch_norm[](conv2d[4](x)))
//ocannl:let h1 = basic[4](h0)
//ocannl:let pooled = (h1 ++ "... | h, w, c => ... | c") *. 0.0625
//ocannl:return linear[3](pooled)
//ocannl:let net = resnet[]
//ocannl:loss train:
//ocannl:input images : 4 | 4, 4, 2
//ocannl:input labels : 4 | index 3
//ocannl:return cross_entropy(net(images), labels)
//ocannl:entry predict:
//ocannl:input images : 4 | 4, 4, 2
//ocannl:return net(images)
//ocannl:sgd lr=0.1 momentum=0.9
type ResNetBN struct {
	ocannlResNetBN
}
