package gradcheck

// ConvPadded checks the standard conv2d (padded, 3x3, stride 1) with its kernel and bias.
// The padded operand is x *. img (img broadcast over the batch) written as
// an einsum, a computed tensor, so that img gets its gradient through the
// padding. (Padded convolutions of model inputs and of pointwise results
// work too: see examples/zoo.)
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 4,4,3
//ocannl:input x : 2 | 4,4,2
//ocannl:let img = {img = normal; o=[4; 4; 2]}
//ocannl:return (conv2d[3](x +* "...|h,w,c; h,w,c => ...|h,w,c" img)) +* "...|...->...; ...|...->... => 0" r
type ConvPadded struct {
	ocannlConvPadded
}

// ConvPaddedStride2 checks conv2d padded, 3x3, stride 2 (4x4 -> 2x2).
// The padded operand is x *. img (img broadcast over the batch) written as
// an einsum, a computed tensor, so that img gets its gradient through the
// padding. (Padded convolutions of model inputs and of pointwise results
// work too: see examples/zoo.)
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,3
//ocannl:input x : 2 | 4,4,2
//ocannl:let img = {img = normal; o=[4; 4; 2]}
//ocannl:return (conv2d[3, 3, 2](x +* "...|h,w,c; h,w,c => ...|h,w,c" img)) +* "...|...->...; ...|...->... => 0" r
type ConvPaddedStride2 struct {
	ocannlConvPaddedStride2
}

// ConvPaddedK2Stride2 checks conv2d padded with an even 2x2 kernel and stride 2 (4x4 -> 2x2: asymmetric margins).
// The padded operand is x *. img (img broadcast over the batch) written as
// an einsum, a computed tensor, so that img gets its gradient through the
// padding. (Padded convolutions of model inputs and of pointwise results
// work too: see examples/zoo.)
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,3
//ocannl:input x : 2 | 4,4,2
//ocannl:let img = {img = normal; o=[4; 4; 2]}
//ocannl:return (conv2d[3, 2, 2](x +* "...|h,w,c; h,w,c => ...|h,w,c" img)) +* "...|...->...; ...|...->... => 0" r
type ConvPaddedK2Stride2 struct {
	ocannlConvPaddedK2Stride2
}

// ConvValid checks conv2d_valid (3x3, stride 1, 4x4 -> 2x2) applied directly to a parameter image.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,3
//ocannl:let img = {img = normal; b=[2]; o=[4; 4; 2]}
//ocannl:return (conv2d_valid[3](img)) +* "...|...->...; ...|...->... => 0" r
type ConvValid struct {
	ocannlConvValid
}

// ConvValidStride2 checks conv2d_valid (3x3, stride 2, 5x5 -> 2x2) applied directly to a parameter image.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,3
//ocannl:let img = {img = normal; b=[2]; o=[5; 5; 2]}
//ocannl:return (conv2d_valid[3, 3, 2](img)) +* "...|...->...; ...|...->... => 0" r
type ConvValidStride2 struct {
	ocannlConvValidStride2
}

// ConvStack checks conv2d (padded) applied to the tanh of a conv2d_valid of a parameter image, a two-layer CNN.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 3,3,3
//ocannl:let img = {img = normal; b=[2]; o=[5; 5; 1]}
//ocannl:let c1 = conv2d_valid[2]
//ocannl:let c2 = conv2d[3, 3, 1]
//ocannl:return (c2(tanh (c1(img)))) +* "...|...->...; ...|...->... => 0" r
type ConvStack struct {
	ocannlConvStack
}

// Conv1DPadded checks 1-D padded convolution "o=+k; k => o" (6, kernel 3 -> 6) (padded operand x + xp, computed).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 6
//ocannl:input x : 6
//ocannl:let xp = {xp = normal; o=[6]}
//ocannl:let w = {w = normal; o=[3]}
//ocannl:return ((x + xp) +* "o=+k; k => o" w) +* "...|...->...; ...|...->... => 0" r
type Conv1DPadded struct {
	ocannlConv1DPadded
}

// Conv1DPaddedStride2 checks 1-D padded strided convolution "2*o=+k; k => o" (6, kernel 3 -> 3) (padded operand x + xp, computed).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:input x : 6
//ocannl:let xp = {xp = normal; o=[6]}
//ocannl:let w = {w = normal; o=[3]}
//ocannl:return ((x + xp) +* "2*o=+k; k => o" w) +* "...|...->...; ...|...->... => 0" r
type Conv1DPaddedStride2 struct {
	ocannlConv1DPaddedStride2
}

// Conv1DPaddedDilated checks 1-D padded dilated convolution "o=+2*k; k => o" (6, kernel 3 -> 6) (padded operand x + xp, computed).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 6
//ocannl:input x : 6
//ocannl:let xp = {xp = normal; o=[6]}
//ocannl:let w = {w = normal; o=[3]}
//ocannl:return ((x + xp) +* "o=+2*k; k => o" w) +* "...|...->...; ...|...->... => 0" r
type Conv1DPaddedDilated struct {
	ocannlConv1DPaddedDilated
}

// Conv1DValid checks 1-D valid convolution "o<+k; k => o" (6, kernel 3 -> 4).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 4
//ocannl:let xp = {xp = normal; o=[6]}
//ocannl:let w = {w = normal; o=[3]}
//ocannl:return (xp +* "o<+k; k => o" w) +* "...|...->...; ...|...->... => 0" r
type Conv1DValid struct {
	ocannlConv1DValid
}

// Conv1DValidStride2Dilated checks 1-D valid strided dilated convolution "2*o<+3*k; k => o" (13, kernel 3 -> 4).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 4
//ocannl:let xp = {xp = normal; o=[13]}
//ocannl:let w = {w = normal; o=[3]}
//ocannl:return (xp +* "2*o<+3*k; k => o" w) +* "...|...->...; ...|...->... => 0" r
type Conv1DValidStride2Dilated struct {
	ocannlConv1DValidStride2Dilated
}
