package model

// Side has a parameter (v) that only its predictor uses: the loss does
// not depend on it, so its gradient stays zero and training leaves it
// alone.
//
//ocannl:model
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:return ((x *. {w; o=[3]}) *. x) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input p : 1 | 3
//ocannl:return p *. {v; o=[3]}
//ocannl:sgd lr=0.1
type Side struct{ ocannlSide }
