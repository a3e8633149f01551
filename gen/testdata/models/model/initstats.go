package model

// InitStats holds a linear layer (512 -> 256), a 3x3 convolution (32
// -> 64 channels), an embedding (1000 rows of 64), a batch norm and a
// layer norm of the standard library, whose initial parameters
// initstats_test.go compares with PyTorch's nn.Linear, nn.Conv2d,
// nn.Embedding, nn.BatchNorm2d and nn.LayerNorm defaults
// (testdata/torchinit).
//
//ocannl:model float64
//ocannl:let fc = linear[256]
//ocannl:let conv = conv2d[64]
//ocannl:let emb = embedding[64]
//ocannl:let bn = batch_norm[]
//ocannl:let ln = layer_norm[]
//ocannl:entry predict:
//ocannl:input x : 1 | 512
//ocannl:input img : 1 | 4, 4, 32
//ocannl:input ids : 1 | index 1000
//ocannl:return fc(ln(x)) + (bn(conv(img)) ++ "... | h, w, c => ... | 0") + (emb(ids) ++ "... | d => ... | 0")
type InitStats struct{ ocannlInitStats }
