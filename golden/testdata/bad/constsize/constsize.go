// Package constsize names a batch size that is not a package-level
// integer constant.
package constsize

// Batch is the training batch size.
const Batch = 32

// Net's predictor names BatchN, which the package does not declare.
//
//ocannl:model
//ocannl:let net = linear[3]
//ocannl:entry predict:
//ocannl:input x : BatchN | 2
//ocannl:return net(x)
type Net struct{ ocannlNet }
