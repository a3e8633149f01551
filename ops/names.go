package ops

// PrimName is the name of a pointwise primitive of the table, as the IRs
// carry it (loopir.Apply.Prim, inference.Op.Prim, ...). Code outside this
// package names a primitive only through the constants below, never with
// a string literal, so that renaming or removing a primitive breaks the
// compilation of every user (TestNoLiteralNames enforces it). Being a
// string type, a name prints, and marshals to JSON, as the bare name.
type PrimName string

// The names of the pointwise primitives, one per entry of the table.
const (
	ID        PrimName = "id"
	Relu      PrimName = "relu"
	Sat01     PrimName = "sat01"
	Exp       PrimName = "exp"
	Log       PrimName = "log"
	Exp2      PrimName = "exp2"
	Log2      PrimName = "log2"
	Sin       PrimName = "sin"
	Cos       PrimName = "cos"
	Sqrt      PrimName = "sqrt"
	Recip     PrimName = "recip"
	RecipSqrt PrimName = "recip_sqrt"
	Neg       PrimName = "neg"
	Tanh      PrimName = "tanh"
	Erf       PrimName = "erf"
	Gelu      PrimName = "gelu"
	GeluTanh  PrimName = "gelu_tanh"
	GeluGrad  PrimName = "gelu_grad"
	Not       PrimName = "not"
	Add       PrimName = "add"
	Sub       PrimName = "sub"
	Mul       PrimName = "mul"
	Div       PrimName = "div"
	Pow       PrimName = "pow"
	Lt        PrimName = "lt"
	Eq        PrimName = "eq"
	Ne        PrimName = "ne"
	Where     PrimName = "where"
	FMA       PrimName = "fma"
)

// AccumName is the name of an accumulator of the table, as the IRs carry
// it (loopir.Store.Accum, inference.Op.Accum, ...); NoAccum, the empty
// name, is the plain store. As with PrimName, code outside this package
// uses the constants, never string literals.
type AccumName string

// The names of the accumulators, one per entry of the table, and of the
// plain store.
const (
	// NoAccum is the plain store: the cell is overwritten.
	NoAccum AccumName = ""
	AccAdd  AccumName = "add"
	AccSub  AccumName = "sub"
	AccMul  AccumName = "mul"
	AccDiv  AccumName = "div"
	AccMax  AccumName = "max"
	AccMin  AccumName = "min"
)
