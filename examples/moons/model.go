package main

//go:generate go run github.com/ocannlgen/ocannlgen/cmd/ocannlgen

// Also generate CUDA C for the GPU path (ocannl_gen.cu; docs/language.md, "The GPU path").
//
//ocannl:cuda

// Moons is OCANNL's two-moons classifier: two hidden ReLU layers of 16
// units and one output score, trained with a hinge loss. Only the hidden
// widths are written; every weight's shape is inferred from how it is used.
// Score takes any number of points up to 256, chosen at run time.
//
//ocannl:model
//ocannl:let net = mlp2[16, 16]
//ocannl:loss train:
//ocannl:input points : 32 | 2
//ocannl:input labels : 32 | 1
//ocannl:return hinge(net(points), labels)
//ocannl:entry classify:
//ocannl:input point : 1 | 2
//ocannl:return net(point)
//ocannl:entry predict:
//ocannl:input points : 256 | 2
//ocannl:return net(points)
//ocannl:entry score:
//ocannl:input points : <=256 | 2
//ocannl:return net(points)
//ocannl:sgd lr=0.1 momentum=0.9 weight_decay=0.0001 lr_end=0.01 steps=2000
type Moons struct {
	ocannlMoons
}
