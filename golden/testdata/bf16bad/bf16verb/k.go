// Package bf16verb takes rt.BF16 operands in an expression kernel.
package bf16verb

import "github.com/ocannlgen/ocannlgen/rt"

// Relu clamps bf16 values.
//
//ocannl:expr relu x
func Relu(x *[16]rt.BF16, out *[16]float32) {}
