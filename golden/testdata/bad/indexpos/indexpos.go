// Package indexpos has the index bound written as the batch row: an index input's positions are its batch axes, `index N` is its output row.
package indexpos

// Net is the model.
//
//ocannl:model
//ocannl:let emb = embedding[4]
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input ids : index 10 | 8
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(emb(ids)), y)
type Net struct{ ocannlNet }
