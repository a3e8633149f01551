// Package layercheck checks the layers of real models in generated code:
// index inputs and the gather (`@@`), embedding and class-index
// cross-entropy, dropout, batch norm with its running statistics, and
// run-time rows with index inputs, against plain Go loops, central
// differences and PyTorch twins (testdata).
package layercheck

//go:generate go run ../../cmd/ocannlgen

// Embed gathers rows of a 10 -> 5 table for 4 x 3 token ids.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input ids : 4, 3 | index 10
//ocannl:input r : 4, 3 | 5
//ocannl:let e = {table = normal; o=[5]} @@ "k -> o; ..b.. | => ..b.. | o" ids
//ocannl:return e +* "...|...->...; ...|...->... => 0" r
type Embed struct {
	ocannlEmbed
}

// CE is the class-index cross-entropy of a linear layer's logits.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input x : 6 | 4
//ocannl:input y : 6 | index 3
//ocannl:let net = linear[3]
//ocannl:return cross_entropy(net(x), y)
type CE struct {
	ocannlCE
}

// EmbedCE is PyTorch's nn.Embedding(10, 5), nn.Linear(5, 7) and
// F.cross_entropy with class-index targets (testdata/torchembed).
//
//ocannl:model float64
//ocannl:let emb = embedding[5]
//ocannl:let head = linear[7]
//ocannl:loss objective:
//ocannl:input ids : 4, 3 | index 10
//ocannl:input y : 4, 3 | index 7
//ocannl:return cross_entropy(head(emb(ids)), y)
//ocannl:entry predict:
//ocannl:input ids : 2 | index 10
//ocannl:return head(emb(ids))
type EmbedCE struct {
	ocannlEmbedCE
}

// EmbedCERows is EmbedCE with a run-time number of rows (at most 4).
//
//ocannl:model float64
//ocannl:let emb = embedding[5]
//ocannl:let head = linear[7]
//ocannl:loss objective:
//ocannl:input ids : <=4, 3 | index 10
//ocannl:input y : <=4, 3 | index 7
//ocannl:return cross_entropy(head(emb(ids)), y)
//ocannl:entry predict:
//ocannl:input ids : <=4 | index 10
//ocannl:return head(emb(ids))
type EmbedCERows struct {
	ocannlEmbedCERows
}

// EmbedCE2 is EmbedCE on 2 rows.
//
//ocannl:model float64
//ocannl:let emb = embedding[5]
//ocannl:let head = linear[7]
//ocannl:loss objective:
//ocannl:input ids : 2, 3 | index 10
//ocannl:input y : 2, 3 | index 7
//ocannl:return cross_entropy(head(emb(ids)), y)
type EmbedCE2 struct {
	ocannlEmbedCE2
}

// Drop is a linear layer with dropout before it, trained by SGD.
//
//ocannl:model float64
//ocannl:let head = linear[3]
//ocannl:loss objective:
//ocannl:input x : 5 | 8
//ocannl:input y : 5 | index 3
//ocannl:return cross_entropy(head(dropout[0.25](x)), y)
//ocannl:entry predict:
//ocannl:input x : 5 | 8
//ocannl:return head(dropout[0.25](x))
//ocannl:sgd lr=0.1
type Drop struct {
	ocannlDrop
}

// BN is PyTorch's nn.BatchNorm2d(3) on channels-last 4 x 5 x 2 images,
// trained by SGD on sum(bn(x) * r) (testdata/torchbn).
//
//ocannl:model float64
//ocannl:let bn = batch_norm[]
//ocannl:loss objective:
//ocannl:input x : 4 | 5, 2, 3
//ocannl:input r : 4 | 5, 2, 3
//ocannl:return (bn(x) *. r) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input x : 4 | 5, 2, 3
//ocannl:return bn(x)
//ocannl:sgd lr=0.1
type BN struct {
	ocannlBN
}
