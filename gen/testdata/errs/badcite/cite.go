// Package badcite has errors whose messages cite a second position.
package badcite

// Paren leaves a parenthesis open.
//
//ocannl:expr relu (x + x
func Paren(x *[4]float32, out *[4]float32) {}

// DoParen leaves a parenthesis open in a do line.
//
//ocannl:do out =: relu (x
func DoParen(x *[4]float32, out *[4]float32) {}

// DimsTwice sets a label twice on one line.
//
//ocannl:einsum "i => i"
//ocannl:dims i=4 i=4
func DimsTwice(x *[4]float32, out *[4]float32) {}

// DimsTwiceLines sets a label on two lines.
//
//ocannl:einsum "i => i"
//ocannl:dims i=4
//ocannl:dims i=4
func DimsTwiceLines(x *[4]float32, out *[4]float32) {}

// Clash and clash both generate ocannlClash.
//
//ocannl:expr x
func Clash(x *[4]float32, out *[4]float32) {}

// clash is the second.
//
//ocannl:expr x
func clash(x *[4]float32, out *[4]float32) {}

// Taken is generated into a name the package declares.
//
//ocannl:expr x
func Taken(x *[4]float32, out *[4]float32) { ocannlTaken(x, out) }

func ocannlTaken(x *[4]float32, out *[4]float32) {}

// Optim sets its optimizer twice.
//
//ocannl:model
//ocannl:sgd lr=0.1
//ocannl:sgd lr=0.2
//ocannl:loss train:
//ocannl:input x : 8 | 2
//ocannl:return x
type Optim struct{ ocannlOptim }

// Init initializes one parameter two ways.
//
//ocannl:model
//ocannl:loss train:
//ocannl:input x : 2
//ocannl:return x * {w = 1.0} + x * {w = 2.0}
type Init struct{ ocannlInit }

// Dup is generated into a type name the package declares.
//
//ocannl:model
//ocannl:loss train:
//ocannl:input x : 2
//ocannl:return x
type Dup struct{ ocannlDup }

type ocannlDup struct{}

// ShapeTwice gives the shape of x twice.
//
//ocannl:expr x
//ocannl:shape x 4
//ocannl:shape x 4
func ShapeTwice(x *[4]float32, out *[4]float32) {}

// Twice has two model lines.
//
//ocannl:model
//ocannl:model
//ocannl:loss train:
//ocannl:input x : 1
//ocannl:return x * {w = 1.0}
type Twice struct{ ocannlTwice }
