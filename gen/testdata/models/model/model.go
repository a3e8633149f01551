// Package model holds two models for the driver's tests: Small, and
// Bigger, which is Small plus an unrelated parameter.
package model

// Small is a two-layer regression network.
//
//ocannl:model
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input p : 1 | 3
//ocannl:return net(p)
//ocannl:sgd lr=0.05 momentum=0.5
type Small struct{ ocannlSmall }

// Bigger is Small with an extra scaling parameter, declared first.
//
//ocannl:model
//ocannl:let extra = linear[2]
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) + extra(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input p : 1 | 3
//ocannl:return net(p) + extra(p)
//ocannl:sgd lr=0.05 momentum=0.5
type Bigger struct{ ocannlBigger }
