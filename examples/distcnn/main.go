// Command distcnn trains examples/cnn's glyph classifier data-parallel,
// on as many processes as mpirun starts (rt/dist, rt/dist/mpi):
//
//	mpirun -np 2 go run -tags mpi ./examples/distcnn
//
// Each step draws a batch of 16 glyphs per rank, the same on every rank
// (rt.NewBatches, from the seed); each rank computes the gradients of its
// share (dist.Shard), SyncGrads averages them across the ranks, and every
// rank applies the same update, so the ranks' parameters stay
// bit-identical, which the program checks at the end. Rank 0 reports the
// loss (the mean over the ranks) and the held-out accuracy. Built without
// the mpi tag it trains in one process (dist.Local).
//
// With -gpu (a binary built with -tags mpi,cuda; a GPU per rank, NCCL)
// each rank trains on its GPU, and the gradients are averaged on the
// GPUs by NCCL:
//
//	mpirun -np 2 go run -tags mpi,cuda ./examples/distcnn -gpu
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/ocannlgen/ocannlgen/examples/internal/demo"
	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/dist"
	"github.com/ocannlgen/ocannlgen/rt/dist/mpi"
)

const (
	trainN  = 2048 // training glyphs
	testN   = 512  // held-out glyphs
	share   = 16   // the train entry's batch: one rank's share of a batch
	evalB   = 256  // the predict entry's batch
	classes = len(demo.GlyphNames)
	size    = demo.GlyphSize
)

// Data seeds (examples/cnn's): the data set is fixed; -seed changes the
// initial parameters and the order of the batches.
const (
	trainSeed = 1
	testSeed  = 2
)

type image = [size][size][1]float32

func main() {
	steps := flag.Int("steps", 600, "training steps (batches of 16 glyphs per rank)")
	seed := flag.Uint64("seed", 42, "parameter initialization and batch order seed")
	minAcc := flag.Float64("min-accuracy", 0.90, "the held-out accuracy below which the program fails")
	gpu := flag.Bool("gpu", false, "train on the GPUs, one per rank, averaging the gradients with NCCL (a binary built with -tags cuda)")
	flag.Parse()
	c, err := open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "distcnn:", err)
		os.Exit(1)
	}
	var w io.Writer = os.Stdout
	if c.Rank() != 0 {
		w = io.Discard
	}
	acc, err := run(w, c, *steps, *seed, *gpu)
	if err != nil {
		// A failure of this rank's own (not another rank's, which the
		// others already know) is told to the others, so that they stop
		// at their next collective instead of waiting for this rank.
		if !errors.Is(err, dist.ErrRankFailed) {
			c.Fail(err)
		}
		fmt.Fprintf(os.Stderr, "distcnn: rank %d: %v\n", c.Rank(), err)
		c.Close()
		os.Exit(1)
	}
	if err := c.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "distcnn: rank %d: %v\n", c.Rank(), err)
		os.Exit(1)
	}
	if acc < *minAcc {
		fmt.Fprintf(os.Stderr, "distcnn: held-out accuracy %.1f%% is below %.1f%%\n", 100*acc, 100**minAcc)
		os.Exit(1)
	}
}

// open joins the ranks that mpirun started, in a binary built with -tags
// mpi, or else trains in one process.
func open() (dist.Comm, error) {
	if mpi.Available {
		return mpi.Open()
	}
	if n, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE")); n > 1 {
		return nil, fmt.Errorf("started by mpirun as one of %d ranks, but built without MPI: run go run -tags mpi ./examples/distcnn", n)
	}
	fmt.Fprintln(os.Stderr, "distcnn: built without -tags mpi: training in one process")
	return dist.Local(), nil
}

// glyphs returns n glyphs drawn with the given seed as one-channel images,
// their classes, and the classes one-hot encoded.
func glyphs(n int, seed uint64) ([]image, []int, [][classes]float32) {
	raw, cls := demo.Glyphs(n, seed)
	imgs := make([]image, n)
	for i := range raw {
		for y := range size {
			for x := range size {
				imgs[i][y][x][0] = raw[i][y][x]
			}
		}
	}
	flat := make([]float32, n*classes)
	demo.OneHot(flat, cls, classes)
	onehot := make([][classes]float32, n)
	for i := range onehot {
		onehot[i] = [classes]float32(flat[i*classes:])
	}
	return imgs, cls, onehot
}

// run trains the model on the ranks of c for steps steps (on their GPUs
// with gpu), reports to w and returns the held-out accuracy.
func run(w io.Writer, c dist.Comm, steps int, seed uint64, gpu bool) (float64, error) {
	if steps < 0 {
		return 0, fmt.Errorf("negative step count %d", steps)
	}
	trainX, _, trainY := glyphs(trainN, trainSeed)
	testX, testC, _ := glyphs(testN, testSeed)

	m := new(CNN)
	m.Init(seed) // on every rank; rank 0's parameters win:
	if err := m.BroadcastParams(c, 0); err != nil {
		return 0, err
	}
	batch := share * c.Size()
	batches, err := rt.NewBatches(trainN, batch, seed, true)
	if err != nil {
		return 0, err
	}
	lo, hi := dist.Shard(batch, c.Rank(), c.Size()) // this rank's share: hi-lo == 16
	fmt.Fprintf(w, "glyphs: %d training images, %d held-out; %d ranks, %d steps of batch %d (%d per rank)\n", trainN, testN, c.Size(), steps, batch, share)

	var gt *gpuTrainer
	if gpu {
		if gt, err = newGPUTrainer(m, c); err != nil {
			return 0, fmt.Errorf("the GPU path: %w", err)
		}
		fmt.Fprintln(w, "training on the GPUs (NCCL)")
	}
	var x [share]image
	var y [share][classes]float32
	var loss [1]float64
	bar := demo.NewProgress(w, steps, "train")
	for step := range steps {
		idx, _ := batches.Next() // the same batch on every rank
		rt.Gather(x[:], trainX, idx[lo:hi])
		rt.Gather(y[:], trainY, idx[lo:hi])
		var l float32
		if gt != nil {
			if l, err = gt.step(&x, &y); err != nil {
				return 0, errors.Join(err, gt.release())
			}
		} else {
			l = m.Backward(&x, &y)
			if err := m.SyncGrads(c); err != nil {
				return 0, err
			}
			m.Update()
		}
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			return 0, fmt.Errorf("step %d: the loss is %v", step+1, l)
		}
		// The loss reported is the mean of the ranks' losses: the loss of
		// the whole batch.
		loss[0] = float64(l)
		if err := c.AllReduceSum64(loss[:]); err != nil {
			return 0, err
		}
		bar.Update(step+1, loss[0]/float64(c.Size()))
	}
	bar.Done()
	if gt != nil {
		if err := gt.finish(); err != nil {
			return 0, err
		}
	}

	sum, err := sameParams(c, m)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "parameters bit-identical on the %d ranks (checksum %08x)\n", c.Size(), sum)

	pred := predict(m, testX)
	correct := 0
	for i, p := range pred {
		if p == testC[i] {
			correct++
		}
	}
	acc := float64(correct) / float64(testN)
	fmt.Fprintf(w, "held-out accuracy: %.1f%% (%d/%d glyphs)\n", 100*acc, correct, testN)
	return acc, nil
}

// sameParams checks that every rank holds rank 0's parameters, bit for
// bit (a hash of them, broadcast from rank 0), and returns the hash.
func sameParams(c dist.Comm, m *CNN) (uint32, error) {
	h := uint32(2166136261)
	for _, t := range m.ParamTensors() {
		for _, v := range t.Data32 {
			h = (h ^ math.Float32bits(v)) * 16777619
		}
	}
	root := [1]float64{float64(h)}
	if err := c.Broadcast64(root[:], 0); err != nil {
		return 0, err
	}
	if root[0] != float64(h) {
		return 0, fmt.Errorf("rank %d's parameters differ from rank 0's (checksum %08x, rank 0's %08x)", c.Rank(), h, uint32(root[0]))
	}
	return h, nil
}

// predict classifies images with the predict entry, evalB at a time (the
// last chunk is padded with blank images).
func predict(m *CNN, images []image) []int {
	pred := make([]int, len(images))
	var chunk [evalB]image
	for i := 0; i < len(images); i += evalB {
		n := copy(chunk[:], images[i:])
		clear(chunk[n:])
		logits := m.Predict(&chunk)
		for j := range n {
			pred[i+j] = demo.ArgMax(logits[j][:])
		}
	}
	return pred
}
