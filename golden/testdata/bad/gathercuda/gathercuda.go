// Package gathercuda asks for CUDA C of a model with an embedding: the
// CUDA back end does not run gathers yet.
package gathercuda

//ocannl:cuda

// Net is the model.
//
//ocannl:model
//ocannl:let emb = embedding[4]
//ocannl:let head = linear[3]
//ocannl:loss train:
//ocannl:input ids : 8 | index 10
//ocannl:input y : 8 | index 3
//ocannl:return cross_entropy(head(emb(ids)), y)
type Net struct{ ocannlNet }
