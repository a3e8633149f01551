// Package embedfloat has embedding applied to a float input (one-hot rows) instead of an index input.
package embedfloat

// Net is the model.
//
//ocannl:model
//ocannl:let emb = embedding[4]
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input x : 8 | 10
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(emb(x)), y)
type Net struct{ ocannlNet }
