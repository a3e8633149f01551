package main

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Also generate CUDA C for the GPU path (ocannl_gen.cu; docs/language.md, "The GPU path").
//
//ocannl:cuda

// CNN classifies 12x12 one-channel glyphs (demo.Glyphs) into 4 classes: a
// valid 3x3 convolution to 8 channels, ReLU, 2x2 max pooling, a padded 3x3
// convolution to 16 channels, ReLU, and a linear layer to the 4 class
// logits, trained with softmax cross-entropy against one-hot labels.
//
//	images   B | 12, 12, 1
//	conv1    B | 10, 10, 8    (conv2d_valid, then relu)
//	pool     B |  5,  5, 8    (max_pool 2x2, stride 2)
//	conv2    B |  5,  5, 16   (conv2d, padded, then relu)
//	head     B | 4            (linear)
//
// The first convolution is the valid one by choice (the glyphs' borders
// are blank): a padded convolution reads a model input just as well (the
// generated kernel copies the input into a padded local), and so does one
// after a pointwise op such as conv2d[8]((images - 0.5) *. 2), whose
// weights are inferred through the op (examples/zoo has both).
// The instance net is bound at model level, so the train and predict
// entries share its parameters.
//
//ocannl:model
//ocannl:layer convnet(x):
//ocannl:let conv1 = conv2d_valid[8]
//ocannl:let conv2 = conv2d[16]
//ocannl:let head = linear[4]
//ocannl:return head(relu(conv2(max_pool(relu(conv1(x))))))
//ocannl:let net = convnet[]
//ocannl:loss train:
//ocannl:input images : 32 | 12, 12, 1
//ocannl:input labels : 32 | 4
//ocannl:return cross_entropy(net(images), labels)
//ocannl:entry predict:
//ocannl:input images : 256 | 12, 12, 1
//ocannl:return net(images)
//ocannl:sgd lr=0.05 momentum=0.9 lr_end=0.005 steps=800
type CNN struct {
	ocannlCNN
}
