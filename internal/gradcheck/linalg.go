package gradcheck

// MatmulCompose checks composition w * x (matrix times a batch of vectors).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 4
//ocannl:input x : 2 | 3
//ocannl:let w = {w = normal; o=[4]}
//ocannl:return (w * x) +* "...|...->...; ...|...->... => 0" r
type MatmulCompose struct {
	ocannlMatmulCompose
}

// MatmulParams checks composition of two parameter matrices a * b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 -> 4
//ocannl:let a = {a = normal; o=[4]; i=[3]}
//ocannl:let b = {b = normal; o=[3]; i=[2]}
//ocannl:return (a * b) +* "...|...->...; ...|...->... => 0" r
type MatmulParams struct {
	ocannlMatmulParams
}

// MatmulChain checks a chain of compositions with a nonlinearity, w2 * tanh (w1 * x).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 4 | 3
//ocannl:input x : 4 | 2
//ocannl:let w1 = {w1 = normal; o=[5]}
//ocannl:let w2 = {w2 = normal; o=[3]}
//ocannl:return (w2 * tanh (w1 * x)) +* "...|...->...; ...|...->... => 0" r
type MatmulChain struct {
	ocannlMatmulChain
}

// EinsumMatmul checks the einsum matrix product a +* "ij; jk => ik" b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2,4
//ocannl:let a = {a = normal; o=[2; 3]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (a +* "ij; jk => ik" b) +* "...|...->...; ...|...->... => 0" r
type EinsumMatmul struct {
	ocannlEinsumMatmul
}

// EinsumBatched checks a batched einsum matrix product with batch axes.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 3,2
//ocannl:let a = {a = normal; b=[2]; o=[3; 4]}
//ocannl:let b = {b = normal; b=[2]; o=[4; 2]}
//ocannl:return (a +* "...|ik; ...|kj => ...|ij" b) +* "...|...->...; ...|...->... => 0" r
type EinsumBatched struct {
	ocannlEinsumBatched
}

// EinsumTranspose checks an einsum whose result transposes and mixes input and output axes.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3 -> 4,2
//ocannl:let a = {a = normal; o=[2; 3]}
//ocannl:let b = {b = normal; o=[4; 3]}
//ocannl:return (a +* "ij; kj => j -> k i" b) +* "...|...->...; ...|...->... => 0" r
type EinsumTranspose struct {
	ocannlEinsumTranspose
}

// EinsumRowVar checks an einsum contracting a whole group of axes with a named row variable.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2,4
//ocannl:let a = {a = normal; o=[2; 3; 2]}
//ocannl:let b = {b = normal; o=[3; 2; 4]}
//ocannl:return (a +* "a, ..r..; ..r.., b => a, b" b) +* "...|...->...; ...|...->... => 0" r
type EinsumRowVar struct {
	ocannlEinsumRowVar
}

// EinsumDot checks the dot product einsum "i; i => 0" (then broadcast by r).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 1
//ocannl:let a = {a = normal; o=[5]}
//ocannl:let b = {b = normal; o=[5]}
//ocannl:return (a +* "i; i => 0" b) +* "...|...->...; ...|...->... => 0" r
type EinsumDot struct {
	ocannlEinsumDot
}

// EinsumDiag checks a diagonal "ii => i" and a diagonal matrix "i => ii".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:let a = {a = normal; o=[3; 3]}
//ocannl:let b = {b = normal; o=[3]}
//ocannl:return ((a ++ "ii => i") + ((b ++ "i => ii") ++ "ij => j")) +* "...|...->...; ...|...->... => 0" r
type EinsumDiag struct {
	ocannlEinsumDiag
}

// OuterSum checks the outer sum a +++ "i; j => i j" b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3]}
//ocannl:let b = {b = normal; o=[4]}
//ocannl:return (tanh (a +++ "i; j => i j" b)) +* "...|...->...; ...|...->... => 0" r
type OuterSum struct {
	ocannlOuterSum
}

// UnaryEinsum checks unary einsums: transpose, row sums and a broadcast.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 4,3
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (exp (a ++ "ij => ji") *. (a ++ "ij => j0")) +* "...|...->...; ...|...->... => 0" r
type UnaryEinsum struct {
	ocannlUnaryEinsum
}

// FixedSlice checks a fixed index slicing an operand, "i1 => i".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (sin (a ++ "i1 => i") + (a ++ "i3 => i")) +* "...|...->...; ...|...->... => 0" r
type FixedSlice struct {
	ocannlFixedSlice
}

// FixedScatter checks a fixed index in the result (scatter), "i => i2".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,3
//ocannl:let a = {a = normal; o=[3]}
//ocannl:return (exp (a ++ "i => i2")) +* "...|...->...; ...|...->... => 0" r
type FixedScatter struct {
	ocannlFixedScatter
}

// FixedEinsum checks an einsum with fixed indices in both operands, "i2; 1ij => j".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 5
//ocannl:let a = {a = normal; o=[4; 3]}
//ocannl:let b = {b = normal; o=[2; 4; 5]}
//ocannl:return (a +* "i2; 1ij => j" b) +* "...|...->...; ...|...->... => 0" r
type FixedEinsum struct {
	ocannlFixedEinsum
}

// FixedInputAxis checks selecting input position 1, "...|1->... => ...|...".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 3
//ocannl:let a = {a = normal; b=[2]; o=[3]; i=[4]}
//ocannl:return (tanh (a ++ "...|1->... => ...|...")) +* "...|...->...; ...|...->... => 0" r
type FixedInputAxis struct {
	ocannlFixedInputAxis
}

// BroadcastBias checks a bias added across a batch, w * x + b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 5 | 4
//ocannl:input x : 5 | 3
//ocannl:let w = {w = normal; o=[4]}
//ocannl:let b = {b = normal; o=[4]}
//ocannl:return (tanh (w * x + b)) +* "...|...->...; ...|...->... => 0" r
type BroadcastBias struct {
	ocannlBroadcastBias
}

// BroadcastScalar checks a parameter with no axes times a matrix.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let s = {s = normal; o=[]}
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (s *. a + a *. s *. s) +* "...|...->...; ...|...->... => 0" r
type BroadcastScalar struct {
	ocannlBroadcastScalar
}

// BroadcastRowCol checks a column plus a row (both broadcast): (u ++ "i => i0") + v, the reduced axis has size 1 and broadcasts.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let u = {u = normal; o=[3]}
//ocannl:let v = {v = normal; o=[4]}
//ocannl:return (sin ((u ++ "i => i0") + v) *. v) +* "...|...->...; ...|...->... => 0" r
type BroadcastRowCol struct {
	ocannlBroadcastRowCol
}

// BroadcastConst checks numbers broadcast against a parameter.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (2 *. a - 0.5 + a /. 3) +* "...|...->...; ...|...->... => 0" r
type BroadcastConst struct {
	ocannlBroadcastConst
}
