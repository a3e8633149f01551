// Package reserved names an entry point after a method every model has.
package reserved

// Net's entry train_step would be TrainStep.
//
//ocannl:model
//ocannl:let net = linear[2]
//ocannl:entry train_step:
//ocannl:input p : 1 | 3
//ocannl:return net(p)
type Net struct{ ocannlNet }
