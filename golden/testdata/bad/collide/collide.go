// Package collide has two entry points whose names give one Go method.
package collide

// Net's entries predict_one and predictOne would both be PredictOne.
//
//ocannl:model
//ocannl:let net = linear[2]
//ocannl:entry predict_one:
//ocannl:input p : 1 | 3
//ocannl:return net(p)
//ocannl:entry predictOne:
//ocannl:input q : 1 | 3
//ocannl:return net(q)
type Net struct{ ocannlNet }
