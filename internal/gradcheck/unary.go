// Package gradcheck checks the gradients that ocannlgen generates
// (Backward) against central finite differences of the generated forward
// loss (the loss entry's method), one small float64 model per construct.
// Every loss is sum(f(params, inputs) *. r) for a fixed random weight
// tensor r (an input), so that no gradient is trivially constant, written
// as the einsum f +* "...|...->...; ...|...->... => 0" r: an einsum
// requires the two shapes to be equal, so it also pins the shape of f.
// (A pointwise f *. r can silently broadcast to a larger shape: see
// TestBroadcastLeadingFlank.)
package gradcheck

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Relu checks relu.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (relu w) +* "...|...->...; ...|...->... => 0" r
type Relu struct {
	ocannlRelu
}

// Sat01 checks sat01.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (sat01 w) +* "...|...->...; ...|...->... => 0" r
type Sat01 struct {
	ocannlSat01
}

// Exp checks exp.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (exp w) +* "...|...->...; ...|...->... => 0" r
type Exp struct {
	ocannlExp
}

// Log checks log (the test makes w positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (log w) +* "...|...->...; ...|...->... => 0" r
type Log struct {
	ocannlLog
}

// Exp2 checks exp2.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (exp2 w) +* "...|...->...; ...|...->... => 0" r
type Exp2 struct {
	ocannlExp2
}

// Log2 checks log2 (the test makes w positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (log2 w) +* "...|...->...; ...|...->... => 0" r
type Log2 struct {
	ocannlLog2
}

// Sin checks sin.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (sin w) +* "...|...->...; ...|...->... => 0" r
type Sin struct {
	ocannlSin
}

// Cos checks cos.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (cos w) +* "...|...->...; ...|...->... => 0" r
type Cos struct {
	ocannlCos
}

// Sqrt checks sqrt (the test makes w positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (sqrt w) +* "...|...->...; ...|...->... => 0" r
type Sqrt struct {
	ocannlSqrt
}

// Recip checks recip (the test makes w positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (recip w) +* "...|...->...; ...|...->... => 0" r
type Recip struct {
	ocannlRecip
}

// RecipSqrt checks recip_sqrt (the test makes w positive).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (recip_sqrt w) +* "...|...->...; ...|...->... => 0" r
type RecipSqrt struct {
	ocannlRecipSqrt
}

// Neg checks neg.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (neg w) +* "...|...->...; ...|...->... => 0" r
type Neg struct {
	ocannlNeg
}

// NegPrefix checks a prefix minus (neg) applied to a parameter.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (-w) +* "...|...->...; ...|...->... => 0" r
type NegPrefix struct {
	ocannlNegPrefix
}

// Tanh checks tanh.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (tanh w) +* "...|...->...; ...|...->... => 0" r
type Tanh struct {
	ocannlTanh
}

// Id checks id.
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (id w) +* "...|...->...; ...|...->... => 0" r
type Id struct {
	ocannlId
}

// UnaryChain checks a chain of unary primitives (the chain rule through several nodes).
//
//ocannl:model float64
//ocannl:loss objective:
//ocannl:input r : 3,4
//ocannl:let w = {w = normal; o=[3; 4]}
//ocannl:return (tanh (sin (exp2 (cos w)) + sqrt (exp w))) +* "...|...->...; ...|...->... => 0" r
type UnaryChain struct {
	ocannlUnaryChain
}
