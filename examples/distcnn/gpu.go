package main

import (
	_ "embed"
	"errors"
	"os"
	"strconv"

	"github.com/ocannlgen/ocannlgen/rt/cuda"
	"github.com/ocannlgen/ocannlgen/rt/dist"
)

// cudaSource is the model's generated CUDA C (//ocannl:cuda in model.go).
//
//go:embed ocannl_gen.cu
var cudaSource []byte

// gpuTrainer trains a CNN value on the rank's GPU through rt/cuda: the
// parameters, gradients and momentum stay on the device, and SyncGrads
// averages the gradients across the ranks' GPUs with NCCL. It needs a
// binary built with -tags cuda (and -tags mpi for several ranks), an
// NVIDIA GPU per rank, its driver, NVRTC and NCCL (libnccl.so.2).
type gpuTrainer struct {
	dev  *cuda.Device
	sess *cuda.Session
	gm   *cuda.Model
	nc   *cuda.NCCL
	m    *CNN
	x, y []float32
}

// localRank is the rank's index among the ranks on its machine (Open
// MPI's OMPI_COMM_WORLD_LOCAL_RANK), which picks its GPU.
func localRank() int {
	r, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_RANK"))
	return r
}

// newGPUTrainer opens the rank's GPU, loads m's parameters (rank 0's,
// after BroadcastParams) onto it and joins the ranks' GPUs with NCCL.
// Every rank must call it (OpenNCCL is collective).
func newGPUTrainer(m *CNN, c dist.Comm) (*gpuTrainer, error) {
	dev, err := cuda.OpenDevice(localRank())
	if err != nil {
		return nil, err
	}
	g := &gpuTrainer{dev: dev, m: m, x: make([]float32, share*size*size), y: make([]float32, share*classes)}
	if g.sess, err = dev.NewSession(cudaSource); err != nil {
		return nil, errors.Join(err, g.release())
	}
	if g.gm, err = g.sess.Model("ocannlCNN"); err == nil {
		err = g.gm.Load(m.ParamTensors())
	}
	if err == nil {
		g.nc, err = cuda.OpenNCCL(dev, c, 0)
	}
	if err != nil {
		return nil, errors.Join(err, g.release())
	}
	return g, nil
}

// step is Backward, SyncGrads, Update on the GPU (the model's
// learning-rate schedule, counted by m.Step).
func (g *gpuTrainer) step(x *[share]image, y *[share][classes]float32) (float32, error) {
	for i := range x {
		for r := range size {
			for c := range size {
				g.x[(i*size+r)*size+c] = x[i][r][c][0]
			}
		}
		copy(g.y[i*classes:], y[i][:])
	}
	loss, err := g.gm.Backward(map[string]any{"images": g.x, "labels": g.y})
	if err == nil {
		err = g.gm.SyncGrads(g.nc)
	}
	if err == nil {
		err = g.gm.Update(g.m.LearningRate())
	}
	g.m.Step++
	return float32(loss), err
}

// finish copies the trained parameters back into m and releases the GPU.
func (g *gpuTrainer) finish() error {
	return errors.Join(g.gm.Save(g.m.ParamTensors()), g.release())
}

func (g *gpuTrainer) release() error {
	var errs []error
	if g.nc != nil {
		errs = append(errs, g.nc.Close())
	}
	if g.sess != nil {
		errs = append(errs, g.sess.Close())
	}
	return errors.Join(append(errs, g.dev.Close())...)
}
