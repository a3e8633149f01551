package model

// TorchFlatten is the PyTorch CNN of testdata/torchflatten/make.py, in
// float64, on NHWC images (ocannlgen's `batch | h, w, c`): conv1 =
// nn.Conv2d(2, 3, 3, padding=1), relu, flatten (PyTorch's x.flatten(1)
// of the NCHW activations), fc = nn.Linear(60, 4), and the sum of
// squared differences as the loss.
//
//ocannl:model float64
//ocannl:let c1 = conv2d[3]
//ocannl:let fc = linear[4]
//ocannl:loss train:
//ocannl:input x : 2 | 4, 5, 2
//ocannl:input y : 2 | 4
//ocannl:let d = fc(flatten(relu(c1(x)))) - y
//ocannl:return (d *. d) ++ "...|... => 0"
//ocannl:entry predict:
//ocannl:input x : 2 | 4, 5, 2
//ocannl:return fc(flatten(relu(c1(x))))
type TorchFlatten struct{ ocannlTorchFlatten }
