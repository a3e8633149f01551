package main

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Also generate CUDA C for the GPU path (-gpu: ocannl_gen.cu, with the
// gradients averaged across the GPUs by NCCL).
//
//ocannl:cuda

// CNN is examples/cnn's glyph classifier (a valid 3x3 convolution to 8
// channels, ReLU, 2x2 max pooling, a padded 3x3 convolution to 16
// channels, ReLU, a linear layer to the 4 class logits, softmax
// cross-entropy), with a train entry of 16 images: one rank's share of a
// batch. Two ranks train on batches of 32, as examples/cnn does in one
// process; n ranks on batches of 16n.
//
//ocannl:model
//ocannl:layer convnet(x):
//ocannl:let conv1 = conv2d_valid[8]
//ocannl:let conv2 = conv2d[16]
//ocannl:let head = linear[4]
//ocannl:return head(relu(conv2(max_pool(relu(conv1(x))))))
//ocannl:let net = convnet[]
//ocannl:loss train:
//ocannl:input images : 16 | 12, 12, 1
//ocannl:input labels : 16 | 4
//ocannl:return cross_entropy(net(images), labels)
//ocannl:entry predict:
//ocannl:input images : 256 | 12, 12, 1
//ocannl:return net(images)
//ocannl:sgd lr=0.05 momentum=0.9 lr_end=0.005 steps=600
type CNN struct {
	ocannlCNN
}
