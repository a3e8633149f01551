// Package winocheck holds a small convolutional network whose tests
// check the convolutions ocannlgen runs in rt/wino (Winograd F(2x2,3x3),
// the AVX-512 tier) against the same network's direct kernels and Go
// loops.
package winocheck

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Batch is the training batch.
const Batch = 4

// Net is two 3x3 convolutions, 16 -> 16 -> 32 channels on 10x10 images,
// without a ReLU between them (so that every tier's rounding moves the
// gradients by rounding only, no unit switching on or off), and a linear
// head. Both convolutions and their kernel gradients run in rt/wino on
// AVX-512, the second one's input gradient too.
//
//ocannl:model
//ocannl:layer wnet(x):
//ocannl:return linear[10](conv2d[32](conv2d[16](x)))
//ocannl:let net = wnet[]
//ocannl:loss train:
//ocannl:input images : Batch | 10, 10, 16
//ocannl:input labels : Batch | 10
//ocannl:return cross_entropy(net(images), labels)
//ocannl:sgd lr=0.01
type Net struct {
	ocannlNet
}
