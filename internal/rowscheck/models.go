// Package rowscheck checks entries with run-time rows (`<=N`,
// docs/language.md, "Run-time batch sizes"), which the generated methods
// cover with kernels for blocks of rows (N, N/2, ...) and a one-row
// kernel for the rows left: against the same network computed row by
// row, and against the fixed-batch model; and benchmarks their TrainStep
// against the fixed-batch model's.
package rowscheck

//go:generate go run ../../cmd/ocannlgen

// Rows8 is a two-layer MLP trained on up to 8 rows chosen at run time,
// with the mean cross-entropy: blocks of 8, 4 and 2 rows, then single
// rows.
//
//ocannl:model float64
//ocannl:let net = mlp2[6, 5]
//ocannl:loss train:
//ocannl:input x : <=8 | 3
//ocannl:input y : <=8 | 2
//ocannl:return cross_entropy(net(x), y)
//ocannl:entry predict:
//ocannl:input x : <=8 | 3
//ocannl:return net(x)
//ocannl:sgd lr=0.1 momentum=0.9
type Rows8 struct {
	ocannlRows8
}

// Fixed8 is Rows8 on a fixed batch of 8 rows.
//
//ocannl:model float64
//ocannl:let net = mlp2[6, 5]
//ocannl:loss train:
//ocannl:input x : 8 | 3
//ocannl:input y : 8 | 2
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.1 momentum=0.9
type Fixed8 struct {
	ocannlFixed8
}

// Row1 is Rows8 on one row: the reference the run-time rows are
// checked against, row by row.
//
//ocannl:model float64
//ocannl:let net = mlp2[6, 5]
//ocannl:loss train:
//ocannl:input x : 1 | 3
//ocannl:input y : 1 | 2
//ocannl:return cross_entropy(net(x), y)
//ocannl:entry predict:
//ocannl:input x : 1 | 3
//ocannl:return net(x)
type Row1 struct {
	ocannlRow1
}

// Seq100 sums the cross-entropy over up to 100 rows of 2 positions each:
// blocks of 100, 50, 25, 12, 6 and 3 rows (model.MaxRowBlocks of them),
// so that up to 2 rows of a call go through the one-row kernel.
//
//ocannl:model float64
//ocannl:let net = mlp2[4, 4]
//ocannl:loss train:
//ocannl:input x : <=100, 2 | 3
//ocannl:input y : <=100, 2 | 2
//ocannl:return -((y *. log_softmax(net(x))) ++ "... | ... -> ... => 0")
//ocannl:entry predict:
//ocannl:input x : <=100, 2 | 3
//ocannl:return net(x)
type Seq100 struct {
	ocannlSeq100
}

// SeqRow1 is Seq100 on one row.
//
//ocannl:model float64
//ocannl:let net = mlp2[4, 4]
//ocannl:loss train:
//ocannl:input x : 1, 2 | 3
//ocannl:input y : 1, 2 | 2
//ocannl:return -((y *. log_softmax(net(x))) ++ "... | ... -> ... => 0")
//ocannl:entry predict:
//ocannl:input x : 1, 2 | 3
//ocannl:return net(x)
type SeqRow1 struct {
	ocannlSeqRow1
}

// BenchRows is the benchmarks' model: an MLP of two hidden layers of 64
// on 32 features, 10 classes, trained on up to 256 rows chosen at run
// time (float32).
//
//ocannl:model
//ocannl:let net = mlp2[64, 64]
//ocannl:loss train:
//ocannl:input x : <=256 | 32
//ocannl:input y : <=256 | 10
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.01 momentum=0.9
type BenchRows struct {
	ocannlBenchRows
}

// BenchFixed is BenchRows on a fixed batch of 256 rows.
//
//ocannl:model
//ocannl:let net = mlp2[64, 64]
//ocannl:loss train:
//ocannl:input x : 256 | 32
//ocannl:input y : 256 | 10
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.01 momentum=0.9
type BenchFixed struct {
	ocannlBenchFixed
}
