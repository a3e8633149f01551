package gradcheck

// Add checks a + b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (a + b) +* "...|...->...; ...|...->... => 0" r
type Add struct {
	ocannlAdd
}

// Sub checks a - b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (a - b) +* "...|...->...; ...|...->... => 0" r
type Sub struct {
	ocannlSub
}

// Mul checks a *. b.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (a *. b) +* "...|...->...; ...|...->... => 0" r
type Mul struct {
	ocannlMul
}

// Div checks a /. b (the test makes b positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (a /. b) +* "...|...->...; ...|...->... => 0" r
type Div struct {
	ocannlDiv
}

// SelfMul checks a *. a (both operands are the same tensor).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a *. a + a /. (a *. a + 1)) +* "...|...->...; ...|...->... => 0" r
type SelfMul struct {
	ocannlSelfMul
}

// Pow2 checks a **. 2 (the test makes a positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. 2) +* "...|...->...; ...|...->... => 0" r
type Pow2 struct {
	ocannlPow2
}

// Pow1 checks a **. 1 (the test makes a positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. 1) +* "...|...->...; ...|...->... => 0" r
type Pow1 struct {
	ocannlPow1
}

// Pow3 checks a **. 3 (the test makes a positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. 3) +* "...|...->...; ...|...->... => 0" r
type Pow3 struct {
	ocannlPow3
}

// PowHalf checks a **. 0.5 (the test makes a positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. 0.5) +* "...|...->...; ...|...->... => 0" r
type PowHalf struct {
	ocannlPowHalf
}

// PowNeg checks a **. -1.5 (the test makes a positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. -1.5) +* "...|...->...; ...|...->... => 0" r
type PowNeg struct {
	ocannlPowNeg
}

// Pow0 checks a **. 0 (the test makes a positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. 0) +* "...|...->...; ...|...->... => 0" r
type Pow0 struct {
	ocannlPow0
}

// PowNegBase checks a **. 3 with negative and positive a.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (a **. 3) +* "...|...->...; ...|...->... => 0" r
type PowNegBase struct {
	ocannlPowNegBase
}

// Fma checks fma a b c.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:let c = {c = normal; o=[3; 4]}
//ocannl:return (fma a b c) +* "...|...->...; ...|...->... => 0" r
type Fma struct {
	ocannlFma
}

// Where checks where with a fixed 0/1 mask input.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:input mask : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (where mask a b) +* "...|...->...; ...|...->... => 0" r
type Where struct {
	ocannlWhere
}

// WhereConst checks where with a constant branch.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:input mask : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:return (where mask a -2) +* "...|...->...; ...|...->... => 0" r
type WhereConst struct {
	ocannlWhereConst
}

// WhereCompare checks where driven by a comparison of the parameters (a minimum; no ties by construction).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return (where (a < b) a b) +* "...|...->...; ...|...->... => 0" r
type WhereCompare struct {
	ocannlWhereCompare
}

// Compare checks comparisons and not used as masks (no gradient through them).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:return ((a < b) *. a + (a = a) *. b *. b + (a <> b) *. (a *. b) + (not (a < b)) *. exp a + (b < 0.25) *. sin b) +* "...|...->...; ...|...->... => 0" r
type Compare struct {
	ocannlCompare
}

// Arith checks a combination of the pointwise binary operators.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let a = {a = normal; o=[3; 4]}
//ocannl:let b = {b = normal; o=[3; 4]}
//ocannl:let c = {c = normal; o=[3; 4]}
//ocannl:return ((a - b) *. c /. (b *. b + 1) + fma (a + 1) c (b **. 2) - 3 *. a) +* "...|...->...; ...|...->... => 0" r
type Arith struct {
	ocannlArith
}
