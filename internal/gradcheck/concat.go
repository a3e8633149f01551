package gradcheck

// Concat checks concatenation (p, q) ++^ "a; b => a^b" (2 + 3 -> 5), through a nonlinearity.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 5
//ocannl:let p = {p = normal; o=[2]}
//ocannl:let q = {q = normal; o=[3]}
//ocannl:return (sin ((p, q) ++^ "a; b => a^b") *. ((q, p) ++^ "a; b => a^b")) +* "...|...->...; ...|...->... => 0" r
type Concat struct {
	ocannlConcat
}

// Concat3 checks three-way concatenation "a; b; c => a^b^c" with a repeated operand.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 7
//ocannl:let p = {p = normal; o=[2]}
//ocannl:let q = {q = normal; o=[3]}
//ocannl:return (exp ((p, q, p) ++^ "a; b; c => a^b^c")) +* "...|...->...; ...|...->... => 0" r
type Concat3 struct {
	ocannlConcat3
}

// ConcatAxis0 checks concatenation along the first of two axes "x, ...; y, ... => x^y, ..." (2,3 and 4,3 -> 6,3).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 6,3
//ocannl:let p = {p = normal; o=[2; 3]}
//ocannl:let q = {q = normal; o=[4; 3]}
//ocannl:return (tanh ((p, q) ++^ "x, ...; y, ... => x^y, ...")) +* "...|...->...; ...|...->... => 0" r
type ConcatAxis0 struct {
	ocannlConcatAxis0
}

// BlockMatrix checks a 2x2 block matrix "r, s; r, t; u, s; u, t => r^u, s^t".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,5
//ocannl:let p = {p = normal; o=[2; 3]}
//ocannl:let q = {q = normal; o=[2; 2]}
//ocannl:let s = {s = normal; o=[1; 3]}
//ocannl:let t = {t = normal; o=[1; 2]}
//ocannl:return ((p, q, s, t) ++^ "r, s; r, t; u, s; u, t => r^u, s^t" *. (p, q, s, t) ++^ "r, s; r, t; u, s; u, t => r^u, s^t") +* "...|...->...; ...|...->... => 0" r
type BlockMatrix struct {
	ocannlBlockMatrix
}

// BatchSlice checks the batch slice a @| 1 (and a slice of a slice, b @| 1 @| 0).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 4
//ocannl:let a = {a = normal; b=[3]; o=[4]}
//ocannl:let b = {b = normal; b=[3; 2]; o=[4]}
//ocannl:return (exp (a @| 1) + (a @| 2) *. (b @| 1 @| 0)) +* "...|...->...; ...|...->... => 0" r
type BatchSlice struct {
	ocannlBatchSlice
}

// SlicePrefix checks a prefix slice (x ++ "a^b => a") + y, whose size comes from y.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:let x = {x = normal; o=[5]}
//ocannl:let y = {y = normal; o=[3]}
//ocannl:return (sin ((x ++ "a^b => a") + y)) +* "...|...->...; ...|...->... => 0" r
type SlicePrefix struct {
	ocannlSlicePrefix
}

// SliceSuffix checks a suffix slice (x ++ "a^b => b") *. y.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2
//ocannl:let x = {x = normal; o=[5]}
//ocannl:let y = {y = normal; o=[2]}
//ocannl:return ((x ++ "a^b => b") *. y) +* "...|...->...; ...|...->... => 0" r
type SliceSuffix struct {
	ocannlSliceSuffix
}

// SliceMiddle checks the middle part x ++ "a^b^c => b" ["a"; "c"] with dim a = 2, dim c = 3 (9 -> 4).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 4
//ocannl:let x = {x = normal; o=[9]}
//ocannl:dim a = 2
//ocannl:dim c = 3
//ocannl:return (exp (x ++ "a^b^c => b" ["a"; "c"])) +* "...|...->...; ...|...->... => 0" r
type SliceMiddle struct {
	ocannlSliceMiddle
}

// DropFirst checks dropping the first 3 positions, "3^a => a" (5 -> 2).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2
//ocannl:let x = {x = normal; o=[5]}
//ocannl:return (cos (x ++ "3^a => a")) +* "...|...->...; ...|...->... => 0" r
type DropFirst struct {
	ocannlDropFirst
}

// PadBlocks checks padding with integer blocks, "a => 3^a^5" (2 -> 10; the padding holds 0).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 10
//ocannl:let x = {x = normal; o=[2]}
//ocannl:return (exp (x ++ "a => 3^a^5")) +* "...|...->...; ...|...->... => 0" r
type PadBlocks struct {
	ocannlPadBlocks
}

// StridedSlice checks the strided slices "2*i+1 => i" and "2*i => i" (odd and even positions).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:let x = {x = normal; o=[6]}
//ocannl:return ((x ++ "2*i+1 => i") *. sin (x ++ "2*i => i")) +* "...|...->...; ...|...->... => 0" r
type StridedSlice struct {
	ocannlStridedSlice
}

// Interleave checks strided scatters "i => 2*i" and "i => 2*i+1" summed: an interleave.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 6
//ocannl:let p = {p = normal; o=[3]}
//ocannl:let q = {q = normal; o=[3]}
//ocannl:return (tanh ((p ++ "i => 2*i") + (q ++ "i => 2*i+1"))) +* "...|...->...; ...|...->... => 0" r
type Interleave struct {
	ocannlInterleave
}

// Stack checks stacking tensors with a literal [p; q] (a new output axis).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2,3
//ocannl:let p = {p = normal; o=[3]}
//ocannl:let q = {q = normal; o=[3]}
//ocannl:return (exp [p; q]) +* "...|...->...; ...|...->... => 0" r
type Stack struct {
	ocannlStack
}

// StackInput checks stacking with an input-axis literal (p, q).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 -> 3
//ocannl:let p = {p = normal; o=[3]}
//ocannl:let q = {q = normal; o=[3]}
//ocannl:return (sin (p, q) *. (q, p)) +* "...|...->...; ...|...->... => 0" r
type StackInput struct {
	ocannlStackInput
}

// StackBatch checks stacking with a batch-axis literal [| p; q |].
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 3
//ocannl:let p = {p = normal; o=[3]}
//ocannl:let q = {q = normal; o=[3]}
//ocannl:return (tanh [| p; q |] *. [| q; p |]) +* "...|...->...; ...|...->... => 0" r
type StackBatch struct {
	ocannlStackBatch
}
