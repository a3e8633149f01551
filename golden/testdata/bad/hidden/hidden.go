// Package hidden has a model whose first layer's width is never pinned:
// nothing says how many hidden units w1 produces.
package hidden

//ocannl:model
//ocannl:loss train:
//ocannl:input x : 8 | 2
//ocannl:input y : 8 | 1
//ocannl:let h = relu ({w1} * x)
//ocannl:return hinge({w2} * h, y)
type Net struct{ ocannlNet }
