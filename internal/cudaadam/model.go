// Package cudaadam opts models trained with Adam, AdamW and gradient
// clipping by global norm in to CUDA generation, so that the emulated
// GPU tests (emit/cuda) compare the device's optimizer step (the
// generated ocannl_adam_*, ocannl_sumsq_*, ocannl_clipnorm_* and
// ocannl_clip_* functions driven by rt/cuda.Model) with these models' CPU
// TrainStep.
package cudaadam

//go:generate go run ../../cmd/ocannlgen

// Also generate CUDA C for the GPU path (ocannl_gen.cu).
//
//ocannl:cuda

// Adam32 trains a small MLP with Adam and an L2 weight decay, in float32.
//
//ocannl:model
//ocannl:let net = mlp2[16, 8]
//ocannl:loss train:
//ocannl:input x : 32 | 6
//ocannl:input y : 32 | 3
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adam lr=0.01 beta1=0.8 beta2=0.99 eps=1e-6 weight_decay=0.01
type Adam32 struct{ ocannlAdam32 }

// AdamWClip32 trains the same network with AdamW (decoupled weight
// decay) after clipping the gradients by their global norm, in float32;
// the bound is low enough that every step clips. The probe entry's layer
// is a parameter the loss does not reach: its gradient is zero, and
// AdamW's decay still shrinks it at every step, on the CPU and the GPU.
//
//ocannl:model
//ocannl:let net = mlp2[16, 8]
//ocannl:let aux = linear[3]
//ocannl:loss train:
//ocannl:input x : 32 | 6
//ocannl:input y : 32 | 3
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry probe:
//ocannl:input x : 32 | 6
//ocannl:return aux(x)
//ocannl:adamw lr=0.01 weight_decay=0.1 clip_norm=0.5
type AdamWClip32 struct{ ocannlAdamWClip32 }

// SGDClip64 is SGD with Nesterov momentum, weight decay and clipping, in
// float64.
//
//ocannl:model float64
//ocannl:let net = mlp2[16, 8]
//ocannl:loss train:
//ocannl:input x : 32 | 6
//ocannl:input y : 32 | 3
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:sgd lr=0.05 momentum=0.9 nesterov weight_decay=0.001 clip_norm=0.5
type SGDClip64 struct{ ocannlSGDClip64 }
