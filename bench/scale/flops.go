package main

// How the FLOPs of a training step are counted (the same counts are
// used for PyTorch's step, bench/torch_scale.py, whose models compute
// the same contractions):
//
//   - only contractions count: matrix products, attention's scores and
//     context, convolutions. Elementwise work (biases, ReLU, layer norm,
//     softmax, the loss, the optimizer update) is left out: it is a few
//     percent of the FLOPs and is limited by memory, not by the FMA units.
//   - a contraction of M multiply-adds costs 2M FLOP forward, and 4M
//     backward: the gradient with respect to each of its two operands is
//     a contraction of M multiply-adds. A contraction whose data operand
//     needs no gradient (the ResNet's first convolution applied to the
//     images) costs 2M backward. A step is thus about 3x the forward's 2M.
//   - the GPT's token embedding is a lookup (a gather of rows; its
//     gradient a scatter-add), not a contraction: it counts nothing.
//   - attention counts all T x T scores, masked or not: both
//     implementations compute every score and mask afterwards.
//   - a padded convolution with an H' x W' output, a k x k kernel, ic
//     input and oc output channels is H'·W'·k²·ic·oc multiply-adds per
//     image, including the products with padding zeros.

// contraction is one contraction of a step: macs multiply-adds, and
// whether the gradient with respect to its data operand is needed.
type contraction struct {
	macs      float64
	inputGrad bool
}

func stepFLOP(cs []contraction) float64 {
	f := 0.0
	for _, c := range cs {
		f += 2 * c.macs // forward
		f += 2 * c.macs // weight (or second operand) gradient
		if c.inputGrad {
			f += 2 * c.macs
		}
	}
	return f
}

// gptFLOP: batch 8 x context 128 = 1024 tokens, width 384, 6 heads of
// 64, MLP 1536, vocabulary 256, 6 blocks: 69.46 GFLOP.
func gptFLOP() float64 {
	const n, t, d, h, dk, ff, v, blocks = 8 * 128, 128, 384, 6, 64, 1536, 256, 6
	var cs []contraction
	for range blocks {
		cs = append(cs,
			contraction{3 * n * d * h * dk, true}, // q, k, v projections
			contraction{n * t * h * dk, true},     // scores q·k
			contraction{n * t * h * dk, true},     // context attn·v
			contraction{n * h * dk * d, true},     // output projection
			contraction{n * d * ff, true},         // MLP up
			contraction{n * ff * d, true},         // MLP down
		)
	}
	cs = append(cs, contraction{n * d * v, true}) // head
	return stepFLOP(cs)
}

// resnetFLOP: batch 32 of 32x32x3 images, ResNet-20 with projection
// shortcuts: 7.81 GFLOP.
func resnetFLOP() float64 {
	const b = 32
	conv := func(hw, k, ic, oc int) float64 { return float64(b * hw * hw * k * k * ic * oc) }
	cs := []contraction{{conv(32, 3, 3, 16), false}} // stem, on the images
	for range 6 {
		cs = append(cs, contraction{conv(32, 3, 16, 16), true}) // stage 1: 3 blocks of 2 convolutions
	}
	for _, s := range []struct{ hw, ic, oc int }{{16, 16, 32}, {8, 32, 64}} {
		cs = append(cs,
			contraction{conv(s.hw, 3, s.ic, s.oc), true}, // stride-2 3x3
			contraction{conv(s.hw, 1, s.ic, s.oc), true}, // stride-2 1x1 projection
		)
		for range 5 {
			cs = append(cs, contraction{conv(s.hw, 3, s.oc, s.oc), true})
		}
	}
	cs = append(cs, contraction{b * 64 * 10, true}) // head
	return stepFLOP(cs)
}

// cnnFLOP: bench/models.CNN, batch 256 of 12x12x1 images: a valid 3x3
// convolution to 8 channels (10x10 outputs, on the images), 2x2 max
// pooling, a padded 3x3 convolution 8 -> 16 on 5x5, a linear head
// 400 -> 4: 0.054 GFLOP.
func cnnFLOP() float64 {
	const b = 256
	return stepFLOP([]contraction{
		{b * 10 * 10 * 9 * 1 * 8, false}, // conv1, on the images
		{b * 5 * 5 * 9 * 8 * 16, true},   // conv2
		{b * 5 * 5 * 16 * 4, true},       // head
	})
}

// attentionFLOP: bench/models.Reverser, batch 256 of 8 one-hot tokens
// (vocabulary 10), width 32, 4 heads of 8, MLP 64: 0.114 GFLOP.
func attentionFLOP() float64 {
	const n, t, d, h, dk, ff, v = 256 * 8, 8, 32, 4, 8, 64, 10
	return stepFLOP([]contraction{
		{n * v * d, false},         // token embedding (one-hot x matrix)
		{3 * n * d * h * dk, true}, // q, k, v projections
		{n * t * h * dk, true},     // scores q·k
		{n * t * h * dk, true},     // context attn·v
		{n * h * dk * d, true},     // output projection
		{n * d * ff, true},         // MLP up
		{n * ff * d, true},         // MLP down
		{n * d * v, true},          // read-out
	})
}
