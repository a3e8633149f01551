package program

// Inspect traverses the expression tree e in depth-first order, like
// go/ast.Inspect: it calls f(e), and when f returns true, inspects e's
// operands (including an inline parameter's initial value and a call's
// arguments). A nil e is skipped.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	var kids []Expr
	switch e := e.(type) {
	case *Literal:
		kids = e.Items
	case *Unary:
		kids = []Expr{e.X}
	case *Binary:
		kids = []Expr{e.X, e.Y}
	case *Pow:
		kids = []Expr{e.X}
	case *Einsum:
		kids = []Expr{e.X, e.Y}
	case *Concat:
		kids = e.Operands
	case *Slice:
		kids = []Expr{e.X}
	case *Ternary:
		kids = []Expr{e.A, e.B, e.C}
	case *InlineParam:
		kids = []Expr{e.Init}
	case *Call:
		kids = append([]Expr{e.Callee}, e.Args...)
	}
	for _, k := range kids {
		Inspect(k, f)
	}
}
