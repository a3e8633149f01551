package main

import (
	_ "embed"
	"errors"

	"github.com/ocannlgen/ocannlgen/rt/cuda"
)

// cudaSource is the model's generated CUDA C (//ocannl:cuda in model.go).
//
//go:embed ocannl_gen.cu
var cudaSource []byte

// gpuTrainer trains a Moons value on the GPU through rt/cuda: its
// parameters, gradients and momentum stay on the device; each step copies
// the batch in and the loss out. It needs a binary built with -tags cuda
// and a machine with an NVIDIA GPU, its driver and NVRTC.
type gpuTrainer struct {
	dev  *cuda.Device
	sess *cuda.Session
	gm   *cuda.Model
	m    *Moons
	x, y []float32
}

// newGPUTrainer opens the GPU and loads m's parameters onto it; the error
// says why the GPU path is unavailable.
func newGPUTrainer(m *Moons) (*gpuTrainer, error) {
	dev, err := cuda.Open()
	if err != nil {
		return nil, err
	}
	sess, err := dev.NewSession(cudaSource)
	if err != nil {
		dev.Close()
		return nil, err
	}
	g := &gpuTrainer{dev: dev, sess: sess, m: m, x: make([]float32, 64), y: make([]float32, 32)}
	if g.gm, err = sess.Model("ocannlMoons"); err == nil {
		err = g.gm.Load(m.ParamTensors())
	}
	if err != nil {
		return nil, errors.Join(err, g.release())
	}
	return g, nil
}

// step is m.TrainStep on the GPU (the model's learning-rate schedule,
// counted by m.Step).
func (g *gpuTrainer) step(x *[32][2]float32, y *[32][1]float32) (float32, error) {
	for i := range x {
		g.x[2*i], g.x[2*i+1], g.y[i] = x[i][0], x[i][1], y[i][0]
	}
	loss, err := g.gm.TrainStep(map[string]any{"points": g.x, "labels": g.y}, g.m.LearningRate())
	g.m.Step++
	return float32(loss), err
}

// finish copies the trained parameters back into m and releases the GPU.
func (g *gpuTrainer) finish() error {
	return errors.Join(g.gm.Save(g.m.ParamTensors()), g.release())
}

func (g *gpuTrainer) release() error {
	return errors.Join(g.sess.Close(), g.dev.Close())
}
