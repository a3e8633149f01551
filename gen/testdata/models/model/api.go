package model

// API pins the generated method names: a snake_case entry becomes a
// CamelCase method, and the loss entry's method says it evaluates the
// loss (TrainLoss) while TrainStep trains. The batch size of the loss's
// inputs is the Go constant apiBatch.
//
//ocannl:model
//ocannl:let net = linear[2]
//ocannl:loss train:
//ocannl:input x : apiBatch | 3
//ocannl:input y : apiBatch | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry predict_one:
//ocannl:input p : 1 | 3
//ocannl:return net(p)
//ocannl:sgd lr=0.05
type API struct{ ocannlAPI }

// apiBatch is the training batch size of API.
const apiBatch = 4
