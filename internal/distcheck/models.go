// Package distcheck checks data-parallel training (rt/dist, the generated
// BroadcastParams and SyncGrads) across processes under mpirun: N ranks
// training on b rows each must stay bit-identical, and reach the
// parameters of one process training on the N*b rows. Each network exists
// at batch 2 (a rank's shard) and at batches 4, 6 and 8 (one process, for
// 2, 3 and 4 ranks); the same parameter identities give them the same
// initialization.
package distcheck

//go:generate go run ../../cmd/ocannlgen

// S2 trains the network on a batch of 2 rows (float32, sgd).
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 2 | 3
//ocannl:input y : 2 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.1 momentum=0.9 weight_decay=0.001 clip_norm=2
type S2 struct{ ocannlS2 }

// S4 trains the network on a batch of 4 rows (float32, sgd).
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.1 momentum=0.9 weight_decay=0.001 clip_norm=2
type S4 struct{ ocannlS4 }

// S6 trains the network on a batch of 6 rows (float32, sgd).
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 6 | 3
//ocannl:input y : 6 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.1 momentum=0.9 weight_decay=0.001 clip_norm=2
type S6 struct{ ocannlS6 }

// S8 trains the network on a batch of 8 rows (float32, sgd).
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 8 | 3
//ocannl:input y : 8 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:sgd lr=0.1 momentum=0.9 weight_decay=0.001 clip_norm=2
type S8 struct{ ocannlS8 }

// A2 trains the network on a batch of 2 rows (float64, adamw).
//
//ocannl:model float64
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 2 | 3
//ocannl:input y : 2 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:adamw lr=0.01 clip_norm=1
type A2 struct{ ocannlA2 }

// A4 trains the network on a batch of 4 rows (float64, adamw).
//
//ocannl:model float64
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:adamw lr=0.01 clip_norm=1
type A4 struct{ ocannlA4 }

// A6 trains the network on a batch of 6 rows (float64, adamw).
//
//ocannl:model float64
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 6 | 3
//ocannl:input y : 6 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:adamw lr=0.01 clip_norm=1
type A6 struct{ ocannlA6 }

// A8 trains the network on a batch of 8 rows (float64, adamw).
//
//ocannl:model float64
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input x : 8 | 3
//ocannl:input y : 8 | 4
//ocannl:return cross_entropy(net(x), y)
//ocannl:adamw lr=0.01 clip_norm=1
type A8 struct{ ocannlA8 }
