package model

// InitStats holds a linear layer (512 -> 256) and a 3x3 convolution (32
// -> 64 channels) of the standard library, whose initial parameters
// initstats_test.go compares with PyTorch's nn.Linear and nn.Conv2d
// defaults (testdata/torchinit).
//
//ocannl:model float64
//ocannl:let fc = linear[256]
//ocannl:let conv = conv2d[64]
//ocannl:entry predict:
//ocannl:input x : 1 | 512
//ocannl:input img : 1 | 4, 4, 32
//ocannl:return fc(x) + (conv(img) ++ "... | h, w, c => ... | 0")
type InitStats struct{ ocannlInitStats }
