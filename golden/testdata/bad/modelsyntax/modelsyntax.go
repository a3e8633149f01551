// Package modelsyntax has a syntax error in a model line.
package modelsyntax

//ocannl:model
//ocannl:loss train:
//ocannl:input x : 8 | 2
//ocannl:return hinge(linear[4 4](x), x)
type Net struct{ ocannlNet }
