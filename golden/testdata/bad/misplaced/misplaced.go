// Package misplaced has a model block separated from its type by a
// const declaration: the block is the doc comment of nothing.
package misplaced

// Net is a small classifier.
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input points : 32 | 2
//ocannl:input labels : 32 | 1
//ocannl:return hinge(net(points), labels)
//ocannl:entry predict:
//ocannl:input points : 256 | 2
//ocannl:return net(points)
//ocannl:sgd lr=0.1 momentum=0.9
const batch = 32

type Net struct{ ocannlNet }

// Fit uses a generated method.
func Fit(m *Net, x *[batch][2]float32, y *[batch][1]float32) float32 { return m.TrainStep(x, y) }
