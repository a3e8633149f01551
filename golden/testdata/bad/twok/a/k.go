// Package a is one of two packages with a k.go: under go generate ./...
// their errors must name different files.
package a

// Sum misspells its verb.
//
//ocannl:ensum "i => 0"
func Sum(x *[4]float32, out *[1]float32) { ocannlSum(x, out) }
