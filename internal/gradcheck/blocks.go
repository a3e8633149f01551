package gradcheck

// LayerNorm checks the standard layer_norm (gamma, beta and the normalized input z : 3 | 5 all differentiated).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3 | 5
//ocannl:let z = {z = normal; b=[3]; o=[5]}
//ocannl:return (layer_norm(z)) +* "...|...->...; ...|...->... => 0" r
type LayerNorm struct {
	ocannlLayerNorm
}

// LayerNorm2D checks layer_norm over two output axes (..d.. spans 2,3).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,3
//ocannl:let z = {z = normal; b=[2]; o=[2; 3]}
//ocannl:return (layer_norm(z)) +* "...|...->...; ...|...->... => 0" r
type LayerNorm2D struct {
	ocannlLayerNorm2D
}

// Softmax checks the standard softmax over the last output axis.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 3,4
//ocannl:let z = {z = normal; b=[2]; o=[3; 4]}
//ocannl:return (softmax(z)) +* "...|...->...; ...|...->... => 0" r
type Softmax struct {
	ocannlSoftmax
}

// LogSoftmax checks the standard log_softmax.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 5
//ocannl:let z = {z = normal; b=[2]; o=[5]}
//ocannl:return (log_softmax(z)) +* "...|...->...; ...|...->... => 0" r
type LogSoftmax struct {
	ocannlLogSoftmax
}

// CrossEntropy checks the standard cross_entropy loss of a linear layer's logits.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input x : 4 | 3
//ocannl:input onehot : 4 | 5
//ocannl:let net = linear[5]
//ocannl:return cross_entropy(net(x), onehot)
type CrossEntropy struct {
	ocannlCrossEntropy
}

// Hinge checks the standard hinge loss of an mlp2 (ReLU kinks are avoided by the random data).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input x : 6 | 2
//ocannl:input labels : 6 | 1
//ocannl:let net = mlp2[4, 3]
//ocannl:return hinge(net(x), labels)
type Hinge struct {
	ocannlHinge
}

// Dense checks the standard dense and linear layers in sequence.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 5 | 3
//ocannl:input x : 5 | 2
//ocannl:let l1 = dense[4]
//ocannl:let l2 = linear[3]
//ocannl:return (l2(l1(x))) +* "...|...->...; ...|...->... => 0" r
type Dense struct {
	ocannlDense
}

// SharedInstance checks one layer instance applied twice (shared parameters get both gradient contributions).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 5 | 3
//ocannl:input x : 5 | 3
//ocannl:let l = linear[3]
//ocannl:return (l(tanh (l(x)))) +* "...|...->...; ...|...->... => 0" r
type SharedInstance struct {
	ocannlSharedInstance
}

// Attention checks the standard multi-head attention (2 heads, d_k 3, d_v 2) with the input sequence a parameter.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2,4 | 3
//ocannl:let x = {x = normal; b=[2; 4]; o=[3]}
//ocannl:let att = attention[2, 3, 2]
//ocannl:return (att(x)) +* "...|...->...; ...|...->... => 0" r
type Attention struct {
	ocannlAttention
}

// MaskedAttention checks masked_attention with a causal mask input (1 keeps a score, 0 drops it).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2,4 | 3
//ocannl:input mask : 4 | 4 ->
//ocannl:let x = {x = normal; b=[2; 4]; o=[3]}
//ocannl:let att = masked_attention[2, 3, 2]
//ocannl:return (att(x, mask)) +* "...|...->...; ...|...->... => 0" r
type MaskedAttention struct {
	ocannlMaskedAttention
}

// TransformerBlock checks a post-norm transformer block, layer_norm(x + attention(x)) then layer_norm(h + linear(tanh (linear(h)))).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2,3 | 4
//ocannl:let x = {x = normal; b=[2; 3]; o=[4]}
//ocannl:let att = attention[2, 2, 2]
//ocannl:let ln1 = layer_norm
//ocannl:let ln2 = layer_norm
//ocannl:let f1 = linear[6]
//ocannl:let f2 = linear[4]
//ocannl:let h = ln1(x + att(x))
//ocannl:return (ln2(h + f2(tanh (f1(h))))) +* "...|...->...; ...|...->... => 0" r
type TransformerBlock struct {
	ocannlTransformerBlock
}
