// Package osfiles has per-OS files that declare other things than
// directives: its generated code is the same on every platform.
package osfiles

// Size is the same everywhere.
const Size = 4

// Double doubles x.
//
//ocannl:expr x + x
func Double(x *[Size]float32, out *[Size]float32) { ocannlDouble(x, out) }

// Halve is a plain function calling per-OS code.
func Halve(x float32) float32 { return x / divisor() }
