// Package loadcheck holds small generated models, one per optimizer
// state a checkpoint can hold (Adam's moments, AdamW's, SGD's momentum),
// whose tests and fuzz targets check the loaders through the generated
// methods: a file a loader accepts must train (no panic, finite state),
// and a file it refuses must leave the model unchanged.
package loadcheck

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// AdamNet trains a small two-layer network with Adam on a linear
// learning-rate schedule (float32: LoadSafetensors converts float64 data
// into it).
//
//ocannl:model
//ocannl:let net = mlp2[4, 4]
//ocannl:loss train:
//ocannl:input x : 2 | 3
//ocannl:input y : 2 | 1
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adam lr=0.01 lr_end=0.001 steps=100 clip_norm=10
type AdamNet struct{ ocannlAdamNet }

// AdamWNet is AdamNet in float64 with AdamW and a constant learning
// rate.
//
//ocannl:model float64
//ocannl:let net = mlp2[4, 4]
//ocannl:loss train:
//ocannl:input x : 2 | 3
//ocannl:input y : 2 | 1
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adamw lr=0.01 weight_decay=0.01
type AdamWNet struct{ ocannlAdamWNet }

// SGDNet trains the same network with SGD, Nesterov momentum and a
// linear schedule.
//
//ocannl:model
//ocannl:let net = mlp2[4, 4]
//ocannl:loss train:
//ocannl:input x : 2 | 3
//ocannl:input y : 2 | 1
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:sgd lr=0.1 momentum=0.9 nesterov weight_decay=0.0001 lr_end=0.01 steps=100
type SGDNet struct{ ocannlSGDNet }

// WideNet is AdamNet with a 200-wide hidden layer and AdamW: over 32768
// parameter elements, so that its Update runs in parts on its Pool
// (TestUpdatePartsMatchRT).
//
//ocannl:model
//ocannl:let net = mlp2[200, 4]
//ocannl:loss train:
//ocannl:input x : 2 | 200
//ocannl:input y : 2 | 4
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adamw lr=0.01 weight_decay=0.01
type WideNet struct{ ocannlWideNet }
