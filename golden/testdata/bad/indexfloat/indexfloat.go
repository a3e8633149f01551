// Package indexfloat has an index input used where a float tensor is needed: token ids fed to a linear layer instead of an embedding.
package indexfloat

// Net is the model.
//
//ocannl:model
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input ids : 8 | index 10
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(ids), y)
type Net struct{ ocannlNet }
