package tiers

// Pool is the max-pool's backward pass: Backward runs the max-pool
// (a -Inf fill and a max accumulation map), the loss's contraction with
// r, and the max-pool gradient's map into Grads (c = where(y == x + w,
// g, 0) + 0, the zero fill of the gradient absorbed).
//
//ocannl:model
//ocannl:loss objective:
//ocannl:input r : 2 | 8,8,8
//ocannl:let img = {img = 0; b=[2]; o=[16; 16; 8]}
//ocannl:return (max_pool(img)) +* "...|...->...; ...|...->... => 0" r
type Pool struct {
	ocannlPool
}

// RowMax is `@^^` (einmax) along rows and its gradient: the first
// maximal cell of each row takes the row's gradient (issue 27; ties
// checked on every tier by TestMaxTiesEveryTier).
//
//ocannl:model
//ocannl:loss objective:
//ocannl:input r : 16 | 1
//ocannl:let x = {x = 0; b=[16]; o=[40]}
//ocannl:return (x @^^ "... | i => ... | 0") +* "...|...->...; ...|...->... => 0" r
type RowMax struct {
	ocannlRowMax
}

// Tropical is a max-plus product `a @^+ b` and its gradients: the first
// j maximizing a[i,j] + b[j,k] takes the gradient, in both operands.
//
//ocannl:model
//ocannl:loss objective:
//ocannl:input r : 6, 8
//ocannl:let a = {a = 0; o=[6; 10]}
//ocannl:let b = {b = 0; o=[10; 8]}
//ocannl:return (a @^+ "i, j; j, k => i, k" b) +* "...|...->...; ...|...->... => 0" r
type Tropical struct {
	ocannlTropical
}

// BigPool is Pool large enough that its nests run in parallel parts
// (TestMaxTiesEveryTier checks its ties on 1, 2 and 4 threads).
//
//ocannl:model
//ocannl:loss objective:
//ocannl:input r : 16 | 16,16,16
//ocannl:let img = {img = 0; b=[16]; o=[32; 32; 16]}
//ocannl:return (max_pool(img)) +* "...|...->...; ...|...->... => 0" r
type BigPool struct {
	ocannlBigPool
}

// Embed gathers columns of a 64 -> 96 table for 32 x 16 token ids; the
// loss is sum(e * r), so the table's gradient is exactly the scatter-add
// of r (e's gradient is r itself).
//
//ocannl:model
//ocannl:loss objective:
//ocannl:input ids : 32, 16 | index 64
//ocannl:input r : 32, 16 | 96
//ocannl:let e = {table; o=[96]} @@ "k -> o; ..b.. | => ..b.. | o" ids
//ocannl:return e +* "...|...->...; ...|...->... => 0" r
type Embed struct{ ocannlEmbed }

// EmbedRows is the standard embedding (a table of 64 rows of 512, stored
// [64][512]) of 16 x 8 token ids, with the loss sum(e * r): each lookup
// copies a row and its gradient adds a row, in the rows' assembly map
// kernels on the AVX2 and AVX-512 tiers.
//
//ocannl:model
//ocannl:let emb = embedding[512]
//ocannl:loss objective:
//ocannl:input ids : 16, 8 | index 64
//ocannl:input r : 16, 8 | 512
//ocannl:return emb(ids) +* "...|...->...; ...|...->... => 0" r
type EmbedRows struct{ ocannlEmbedRows }

// GeluNet is gelu and its gradient in float32: the loss sum(gelu(x) * r)
// makes x's gradient the map r * gelu_grad(x), which every tier computes
// bit for bit as rt.GeluGrad32 does (issue 25).
//
//ocannl:model
//ocannl:loss objective:
//ocannl:input r : 16 | 256
//ocannl:let x = {x = 0; b=[16]; o=[256]}
//ocannl:return (gelu x) +* "...|...->...; ...|...->... => 0" r
type GeluNet struct{ ocannlGeluNet }
