// Package b is the other package with a k.go.
package b

// Sum misspells its verb too.
//
//ocannl:einsun "i => 0"
func Sum(x *[4]float32, out *[1]float32) { ocannlSum(x, out) }
