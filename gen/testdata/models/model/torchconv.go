package model

// TorchConv is the PyTorch network of testdata/torchconv/make.py:
// conv1 = nn.Conv2d(3, 4, 3, padding=1), relu, conv2 = nn.Conv2d(4, 2,
// 3, padding=1), on NHWC images (ocannlgen's `batch | h, w, c`). Its c1
// kernel, [4][3][3][3], has the same shape in ocannlgen's order and in
// PyTorch's, so its state_dict loads only with the layout given.
//
//ocannl:model float64
//ocannl:let c1 = conv2d[4]
//ocannl:let c2 = conv2d[2]
//ocannl:entry predict:
//ocannl:input x : 2 | 5, 5, 3
//ocannl:return c2(relu(c1(x)))
type TorchConv struct{ ocannlTorchConv }
