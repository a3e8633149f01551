// Package bnchannel applies batch_norm to a tensor with no output axis
// (only batch axes), which has no channel axis to normalize per.
package bnchannel

// Net is the model.
//
//ocannl:model
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input x : 8, 4 |
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(batch_norm[](x)), y)
type Net struct{ ocannlNet }
