package models

import _ "embed"

// CUDASource is the package's generated CUDA C (//ocannl:cuda in
// models.go): bench/scale -gpu trains the models on a GPU with it
// (rt/cuda.Session, Model).
//
//go:embed ocannl_gen.cu
var CUDASource []byte
