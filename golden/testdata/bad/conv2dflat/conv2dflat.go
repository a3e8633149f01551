// Package conv2dflat applies a convolution to flat images: conv2d wants
// height, width and channel axes, the images have one output axis.
package conv2dflat

// Net's images are 64 values each, not 8 x 8 pixels.
//
//ocannl:model
//ocannl:let c1 = conv2d[16]
//ocannl:loss train:
//ocannl:input images : 32 | 64
//ocannl:input labels : 32 | 10
//ocannl:return cross_entropy(c1(images), labels)
type Net struct{ ocannlNet }
