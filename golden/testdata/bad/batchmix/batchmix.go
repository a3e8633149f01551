// Package batchmix declares a loss whose inputs have different batch
// sizes.
package batchmix

// Net's labels have batch 16, its points 32.
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input points : 32 | 2
//ocannl:input labels : 16 | 1
//ocannl:return hinge(net(points), labels)
type Net struct{ ocannlNet }
