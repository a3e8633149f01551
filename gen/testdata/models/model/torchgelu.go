package model

// TorchGelu is the PyTorch network of testdata/torchgelu/make.py, in
// float64: fc1 = nn.Linear(3, 6), nn.GELU() (the erf form), fc2 =
// nn.Linear(6, 6), nn.GELU(approximate="tanh"), fc3 = nn.Linear(6, 2),
// and the sum of squared differences as the loss.
//
//ocannl:model float64
//ocannl:let l1 = linear[6]
//ocannl:let l2 = linear[6]
//ocannl:let l3 = linear[2]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = l3(gelu_tanh(l2(gelu(l1(x))))) - y
//ocannl:return (d *. d) ++ "...|... => 0"
type TorchGelu struct{ ocannlTorchGelu }

// TorchGeluF32 is TorchGelu in float32: its gelu is rt.Gelu32 and the
// gradient rt.GeluGrad32 (float32 operations, the same bits in every
// tier), its gelu_tanh float32(math.Tanh(...)).
//
//ocannl:model
//ocannl:let l1 = linear[6]
//ocannl:let l2 = linear[6]
//ocannl:let l3 = linear[2]
//ocannl:loss train:
//ocannl:input x : 4 | 3
//ocannl:input y : 4 | 2
//ocannl:let d = l3(gelu_tanh(l2(gelu(l1(x))))) - y
//ocannl:return (d *. d) ++ "...|... => 0"
type TorchGeluF32 struct{ ocannlTorchGeluF32 }
