package model

// The optimizer models: Small's network and loss with Adam (L2 weight
// decay, clipping), AdamW (decoupled weight decay, a schedule), AdamW in
// float32 with clipping, and SGD with Nesterov momentum and clipping.

// Adam64 trains with Adam, an L2 weight decay and gradient clipping.
//
//ocannl:model float64
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adam lr=0.01 beta1=0.8 beta2=0.99 eps=1e-6 weight_decay=0.01 clip_norm=13
type Adam64 struct{ ocannlAdam64 }

// AdamW64 trains with AdamW (PyTorch's defaults but the learning rate) on
// a linear schedule.
//
//ocannl:model float64
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adamw lr=0.02 lr_end=0.005 steps=10
type AdamW64 struct{ ocannlAdamW64 }

// AdamW32 is AdamW in float32, with clipping.
//
//ocannl:model
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adamw lr=0.01 weight_decay=0.1 clip_norm=8
type AdamW32 struct{ ocannlAdamW32 }

// SGDClip64 is SGD with Nesterov momentum, weight decay and clipping.
//
//ocannl:model float64
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:sgd lr=0.05 momentum=0.9 nesterov weight_decay=0.001 clip_norm=5
type SGDClip64 struct{ ocannlSGDClip64 }

// Cosine64 is AdamW on a cosine schedule after a linear warmup.
//
//ocannl:model float64
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:adamw lr=0.02 schedule=cosine warmup=3 steps=20 lr_end=0.002
type Cosine64 struct{ ocannlCosine64 }

// StepSGD64 is SGD with momentum on a step-decay schedule after a warmup.
//
//ocannl:model float64
//ocannl:let net = mlp2[8, 8]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = net(x) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:sgd lr=0.05 momentum=0.9 schedule=step step_size=4 gamma=0.5 warmup=2
type StepSGD64 struct{ ocannlStepSGD64 }
