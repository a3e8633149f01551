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
