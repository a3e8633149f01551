package model

// Wide has intermediates too large for the stack (a hidden layer of 64
// units over batches of 512 and 1024 rows: 128 and 256 KiB), which its
// kernels keep in scratch structs held by the model, and an entry point
// small enough to need none.
//
//ocannl:model
//ocannl:let net = mlp2[64, 64]
//ocannl:loss train:
//ocannl:input x : 512 | 3
//ocannl:input y : 512 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input p : 1024 | 3
//ocannl:return net(p)
//ocannl:entry one:
//ocannl:input q : 1 | 3
//ocannl:return net(q)
//ocannl:sgd lr=0.0002
type Wide struct{ ocannlWide }
