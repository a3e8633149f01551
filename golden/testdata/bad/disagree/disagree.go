// Package disagree has a model whose two entry points apply one layer
// instance to inputs of different widths, so they disagree on w's shape.
package disagree

//ocannl:model
//ocannl:let net = linear[4]
//ocannl:loss train:
//ocannl:input x : 8 | 2
//ocannl:input y : 8 | 4
//ocannl:return hinge(net(x), y)
//ocannl:entry predict:
//ocannl:input p : 1 | 3
//ocannl:return net(p)
type Net struct{ ocannlNet }
