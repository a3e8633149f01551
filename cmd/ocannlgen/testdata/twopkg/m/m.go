// Package m declares a model that package use trains and tests exercise.
package m

//go:generate go tool ocannlgen

// MLP is a small classifier.
//
//ocannl:model
//ocannl:let net = mlp2[64, 32]
//ocannl:loss train:
//ocannl:input x : 8 | 4
//ocannl:input y : 8 | 3
//ocannl:return hinge(net(x), y)
//ocannl:entry predict:
//ocannl:input x : 8 | 4
//ocannl:return net(x)
//ocannl:sgd lr=0.1
type MLP struct{ ocannlMLP }

// App embeds the model: its methods are the model's.
type App struct {
	MLP
	Name string
}
