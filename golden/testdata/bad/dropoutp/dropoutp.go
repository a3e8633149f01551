// Package dropoutp has a dropout probability of 1.5, outside [0, 1).
package dropoutp

// Net is the model.
//
//ocannl:model
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input x : 8 | 10
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(dropout[1.5](x)), y)
type Net struct{ ocannlNet }
