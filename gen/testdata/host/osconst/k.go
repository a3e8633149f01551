// Package osconst sizes its kernels with constants whose value depends
// on the operating system.
package osconst

// Twice is derived from Width.
const Twice = 2 * Width

// Fixed is the same everywhere.
const Fixed = 4

// Sum sums x.
//
//ocannl:einsum "i => 0"
//ocannl:dims i=Width
func Sum(x []float32, out *[1]float32) { ocannlSum(x, out) }

// Double doubles x.
//
//ocannl:expr x + x
func Double(x *[Twice]float32, out *[Twice]float32) { ocannlDouble(x, out) }

// Scale scales x.
//
//ocannl:shape x Width
//ocannl:expr x *. 2
func Scale(x []float32, out *[Fixed]float32) { ocannlScale(x, out) }

// M is a model whose batch size is Twice.
//
//ocannl:model
//ocannl:loss train:
//ocannl:input x : Twice | 3
//ocannl:return (linear[1](x) *. linear[1](x)) ++ "...|... => 0"
type M struct{ ocannlM }
