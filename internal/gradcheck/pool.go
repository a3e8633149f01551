package gradcheck

// MaxPool checks the standard max_pool (2x2 windows, stride 2, 4x4 -> 2x2) on a parameter image.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,2
//ocannl:let img = {img = normal; b=[2]; o=[4; 4; 2]}
//ocannl:return (max_pool(img)) +* "...|...->...; ...|...->... => 0" r
type MaxPool struct {
	ocannlMaxPool
}

// MaxPoolOverlap checks max_pool with overlapping 3x3 windows, stride 1 (4x4 -> 2x2): one cell can be the maximum of several windows.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,2
//ocannl:let img = {img = normal; b=[2]; o=[4; 4; 2]}
//ocannl:return (max_pool[3, 1](img)) +* "...|...->...; ...|...->... => 0" r
type MaxPoolOverlap struct {
	ocannlMaxPoolOverlap
}

// MaxPoolConv checks max_pool after relu of conv2d_valid, the examples/cnn pipeline (6x6 -> 4x4 -> 2x2).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,3
//ocannl:let img = {img = normal; b=[2]; o=[6; 6; 1]}
//ocannl:return (max_pool(relu (conv2d_valid[3](img)))) +* "...|...->...; ...|...->... => 0" r
type MaxPoolConv struct {
	ocannlMaxPoolConv
}

// AvgPool checks the standard avg_pool (2x2, stride 2).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 2 | 2,2,2
//ocannl:let img = {img = normal; b=[2]; o=[4; 4; 2]}
//ocannl:return (avg_pool(img)) +* "...|...->...; ...|...->... => 0" r
type AvgPool struct {
	ocannlAvgPool
}

// ReduceMax checks row maxima a @^^ "ij => i0", broadcast back against a.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return ((a @^^ "ij => i0") *. a) +* "...|...->...; ...|...->... => 0" r
type ReduceMax struct {
	ocannlReduceMax
}

// ReduceMaxAll checks the maximum of everything, a @^^ "ij => 0".
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 1
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (exp (a @^^ "ij => 0")) +* "...|...->...; ...|...->... => 0" r
type ReduceMaxAll struct {
	ocannlReduceMaxAll
}

// TropicalSame checks the tropical einsum a @^+ "ij; ij => i" b (max over j of a + b; both operands span the same index space).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (a @^+ "ij; ij => i" b) +* "...|...->...; ...|...->... => 0" r
type TropicalSame struct {
	ocannlTropicalSame
}

// TropicalMatmul checks the tropical matrix product a @^+ "ij; jk => ik" b (max over j of a[i,j] + b[j,k]: neither operand spans the whole index space, the case where OCANNL's g2 is wrong).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,2
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[4; 2]}
//ocannl:return (a @^+ "ij; jk => ik" b) +* "...|...->...; ...|...->... => 0" r
type TropicalMatmul struct {
	ocannlTropicalMatmul
}

// SumPoolLabelOnly checks a 1-D sum pool whose window label appears only inside the affine index, xp ++ "2*o<+w => o" ["w"] (6 -> 3 with windows of 2).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3
//ocannl:let xp = {xp = normal; o=[6]}
//ocannl:let y = xp ++ "2*o<+w => o" ["w"]
//ocannl:dim w = 2
//ocannl:return (y) +* "...|...->...; ...|...->... => 0" r
type SumPoolLabelOnly struct {
	ocannlSumPoolLabelOnly
}
