// Package indexzero has an index input with a bound of 0 (it would index an empty axis).
package indexzero

// Net is the model.
//
//ocannl:model
//ocannl:let emb = embedding[4]
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input ids : 8 | index 0
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(emb(ids)), y)
type Net struct{ ocannlNet }
