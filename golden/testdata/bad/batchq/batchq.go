// Package batchq writes '?' for the batch size of an entry's input.
package batchq

// Net's predictor would silently take one example.
//
//ocannl:model
//ocannl:let net = linear[3]
//ocannl:entry predict_any:
//ocannl:input x : ? | 2
//ocannl:return net(x)
type Net struct{ ocannlNet }
