package gradcheck

// SaveA is the model whose parameters TestSaveLoad saves and loads.
//
//ocannl:model float64
//ocannl:let net = linear[4]
//ocannl:loss objective:
//ocannl:input x : 2 | 3
//ocannl:input r : 2 | 4
//ocannl:let w = {w = normal; o=[4]; i=[4]}
//ocannl:return (w * tanh (net(x))) +* "...|...->...; ...|...->... => 0" r
type SaveA struct {
	ocannlSaveA
}

// SaveB has SaveA's parameter identities, but net.w maps 2 inputs instead
// of 3 (its shape is 2 -> 4 instead of 3 -> 4).
//
//ocannl:model float64
//ocannl:let net = linear[4]
//ocannl:loss objective:
//ocannl:input x : 2 | 2
//ocannl:input r : 2 | 4
//ocannl:let w = {w = normal; o=[4]; i=[4]}
//ocannl:return (w * tanh (net(x))) +* "...|...->...; ...|...->... => 0" r
type SaveB struct {
	ocannlSaveB
}

// SaveF32 is SaveA in float32.
//
//ocannl:model
//ocannl:let net = linear[4]
//ocannl:loss objective:
//ocannl:input x : 2 | 3
//ocannl:input r : 2 | 4
//ocannl:let w = {w = normal; o=[4]; i=[4]}
//ocannl:return (w * tanh (net(x))) +* "...|...->...; ...|...->... => 0" r
type SaveF32 struct {
	ocannlSaveF32
}
