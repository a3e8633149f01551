// Package badtype does not type-check: the error is reported once (not
// again from the compiler's output), and the bootstrap's undefined
// ocannlCopy is not reported at all.
package badtype

// Copy copies x.
//
//ocannl:expr x
func Copy(x *[4]float32, out *[4]float32) { ocannlCopy(x, out) }

// Model is a model whose generated methods do not exist yet.
//
//ocannl:model
//ocannl:entry predict:
//ocannl:input x : 2
//ocannl:return x
type Model struct{ ocannlModel }

// Use calls a method the generated struct will provide, and a missing one.
func Use(m *Model, x *[2]float32) {
	m.Predict(x)
	m.Missing(x)
	ocannlOther(x)
}

var _ int = "s"
