// Package literalnames is the fixture of ops's TestLiteralNamesDetected:
// the scan reports each line marked BAD, once, and no other line.
package literalnames

import "github.com/ocannlgen/ocannlgen/ops"

type apply struct {
	Prim  ops.PrimName
	Accum ops.AccumName
}

type untyped struct {
	Prim  string
	accum string
	Func  string
	Op    string
}

const local ops.PrimName = "exp" // BAD

func use(a apply, u untyped, prims []*ops.Prim) int {
	n := 0
	if a.Prim == "mul" { // BAD
		n++
	}
	if a.Accum != "" { // BAD
		n++
	}
	if a.Prim == ops.Mul || a.Accum == ops.NoAccum || a.Prim == ops.PrimName(u.Prim) {
		n++
	}
	if a.Prim == local { // BAD
		n++
	}
	switch a.Prim {
	case ops.Exp, ops.Log:
	case "tanh": // BAD
	}
	m := map[ops.PrimName]int{"sin": 1, ops.Cos: 2} // BAD
	n += m[ops.PrimName("cos")]                     // BAD
	a = apply{Prim: "where", Accum: ops.AccMax}     // BAD
	if u.Prim == "neg" {                            // BAD
		n++
	}
	if u.accum != "" { // BAD
		n++
	}
	if string(prims[0].Name) == "add" { // BAD
		n++
	}
	switch u.Prim {
	case "sqrt": // BAD
	case "not a primitive":
	}
	if u.Func != "neg" { // BAD
		n++
	}
	// Not names: a program spelling, a plain string compared with "".
	if u.Prim == "=:" || u.Op == "add" || u.Prim != "" {
		n++
	}
	return n + int(a.Accum[0])
}
