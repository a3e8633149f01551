package gradcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

// awayFromKinks01 moves values at least 0.05 away from 0 and 1 (the kinks
// of sat01), spreading them over [-0.5, 1.5).
func awayFromKinks01(_ string, p []float64, rng *rand.Rand) {
	for k := range p {
		for {
			x := 2*rng.Float64() - 0.5
			if math.Abs(x) > 0.05 && math.Abs(x-1) > 0.05 {
				p[k] = x
				break
			}
		}
	}
}

func TestUnary(t *testing.T) {
	runCases(t, []gcase{
		{name: "relu", m: new(Relu), prep: awayFromZero},
		{name: "sat01", m: new(Sat01), prep: awayFromKinks01},
		{name: "exp", m: new(Exp)},
		{name: "log", m: new(Log), prep: makePositive},
		{name: "exp2", m: new(Exp2)},
		{name: "log2", m: new(Log2), prep: makePositive},
		{name: "sin", m: new(Sin)},
		{name: "cos", m: new(Cos)},
		{name: "sqrt", m: new(Sqrt), prep: makePositive},
		{name: "recip", m: new(Recip), prep: makePositive},
		{name: "recip_sqrt", m: new(RecipSqrt), prep: makePositive},
		{name: "neg", m: new(Neg)},
		{name: "neg_prefix", m: new(NegPrefix)},
		{name: "tanh", m: new(Tanh)},
		{name: "id", m: new(Id)},
		{name: "chain", m: new(UnaryChain)},
	})
}

// onlyField applies f to the parameter field name only.
func onlyField(name string, f func(string, []float64, *rand.Rand)) func(string, []float64, *rand.Rand) {
	return func(n string, p []float64, rng *rand.Rand) {
		if n == name {
			f(n, p, rng)
		}
	}
}

// maskInput fills input number i with a 0/1 mask (both values present)
// and every other input with uniform values in [-1, 1).
func maskInput(i int) func(int, []float64, *rand.Rand) {
	return func(j int, d []float64, rng *rand.Rand) {
		for k := range d {
			if j == i {
				d[k] = float64(k % 2)
				if rng.IntN(3) == 0 {
					d[k] = 1 - d[k]
				}
			} else {
				d[k] = 2*rng.Float64() - 1
			}
		}
	}
}

// separated makes parameter B differ from A by at least 0.1 in every cell
// (no ties for comparisons and where), alternating which is larger, and
// keeps B at least 0.05 away from 0.25 (the threshold in Compare).
func separated(p map[string][]float64) {
	a, b := p["A"], p["B"]
	for k := range b {
		d := 0.2 + 0.3*math.Abs(b[k])
		if k%2 == 1 {
			d = -d
		}
		b[k] = a[k] + d
		if math.Abs(b[k]-0.25) < 0.05 {
			b[k] += 0.1
		}
	}
}

func TestBinary(t *testing.T) {
	runCases(t, []gcase{
		{name: "add", m: new(Add)},
		{name: "sub", m: new(Sub)},
		{name: "mul", m: new(Mul)},
		{name: "div", m: new(Div), prep: onlyField("B", makePositive)},
		{name: "self_mul", m: new(SelfMul)},
		{name: "pow2", m: new(Pow2), prep: makePositive},
		{name: "pow1", m: new(Pow1), prep: makePositive},
		{name: "pow3", m: new(Pow3), prep: makePositive},
		{name: "pow_half", m: new(PowHalf), prep: makePositive},
		{name: "pow_neg", m: new(PowNeg), prep: makePositive},
		{name: "pow0", m: new(Pow0), prep: makePositive, zeroGrad: true},
		{name: "pow3_neg_base", m: new(PowNegBase), prep: awayFromZero},
		{name: "fma", m: new(Fma)},
		{name: "where", m: new(Where), input: maskInput(1)},
		{name: "where_const", m: new(WhereConst), input: maskInput(1)},
		{name: "where_compare", m: new(WhereCompare), prepAll: separated},
		{name: "compare", m: new(Compare), prepAll: separated},
		{name: "arith", m: new(Arith)},
	})
}
