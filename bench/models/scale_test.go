package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// trainsAllocFree checks a scale model's TrainStep on a fixed batch:
// finite losses that decrease over steps steps, and no allocation.
func trainsAllocFree(t *testing.T, steps int, step func() float32) {
	t.Helper()
	var ls []float32
	for range steps {
		l := step()
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			t.Fatalf("non-finite loss after %v", ls)
		}
		ls = append(ls, l)
	}
	if !(ls[len(ls)-1] < ls[0]) {
		t.Errorf("the loss did not decrease on a fixed batch: %v", ls)
	}
	if n := testing.AllocsPerRun(1, func() { step() }); n != 0 {
		t.Errorf("%v allocs per TrainStep", n)
	}
}

// TestResNet20Trains: the ResNet-20 of bench -scale trains on a random
// batch, on 1 and 2 threads, without allocating, in float32 and in bf16.
func TestResNet20Trains(t *testing.T) {
	images, labels := resnetBatch(rand.New(rand.NewPCG(3, 4)))
	for _, th := range []int{1, 2} {
		m := new(ResNet20)
		m.Init(1)
		m.Pool = rt.NewPool(th)
		trainsAllocFree(t, 3, func() float32 { return m.TrainStep(images, labels) })
		m.Pool.Close()
	}
	// And in bf16 mixed precision (//ocannl:model bf16).
	for _, th := range []int{1, 2} {
		m := new(ResNet20BF16)
		m.Init(1)
		m.Pool = rt.NewPool(th)
		trainsAllocFree(t, 3, func() float32 { return m.TrainStep(images, labels) })
		m.Pool.Close()
	}
}

// TestGPTTrains: the nanoGPT-size decoder (1.0 GiB of state, about a
// second per step on one core) trains on a random batch with the causal
// mask, without allocating. Skipped with -short.
func TestGPTTrains(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1.0 GiB model, seconds per step")
	}
	r := rand.New(rand.NewPCG(1, 2))
	tokens := new([GPTBatch][GPTContext]int32)
	targets := new([GPTBatch][GPTContext]int32)
	mask := new([GPTContext][GPTContext]float32)
	for b := range tokens {
		prev := int32(r.IntN(GPTVocab))
		for p := range GPTContext {
			next := int32(r.IntN(GPTVocab))
			tokens[b][p], targets[b][p] = prev, next
			prev = next
		}
	}
	for s := range mask {
		for k := 0; k <= s; k++ {
			mask[s][k] = 1
		}
	}
	m := new(GPT)
	m.Init(1)
	m.Pool = rt.NewPool(2)
	defer m.Pool.Close()
	// With the standard layers' defaults (PyTorch's initialization) the
	// 6-block pre-norm decoder starts within 10% of ln(vocabulary)
	// (issue 24 measured 9.39 with the seeds' uniform default).
	l0, err := m.TrainLoss(tokens, targets, mask)
	if err != nil {
		t.Fatal(err)
	}
	if l, want := float64(l0), math.Log(GPTVocab); math.Abs(l-want) > 0.1*want {
		t.Errorf("initial loss %.4f, not within 10%% of ln %d = %.4f", l, GPTVocab, want)
	} else {
		t.Logf("initial loss %.4f, ln %d = %.4f", l, GPTVocab, want)
	}
	trainsAllocFree(t, 3, func() float32 {
		l, err := m.TrainStep(tokens, targets, mask)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

// TestResNet20StartsAtChance: with the standard layers' defaults
// (PyTorch's initialization), the 20-layer ResNet without normalization
// starts within 10% of ln 10 on uniform random images, for every seed
// tried (issue 24 measured 956 with the seeds' uniform default).
func TestResNet20StartsAtChance(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	images := new([ResNetBatch][32][32][3]float32)
	labels := new([ResNetBatch][10]float32)
	for i := range images {
		for y := range images[i] {
			for x := range images[i][y] {
				for c := range images[i][y][x] {
					images[i][y][x][c] = r.Float32()
				}
			}
		}
		labels[i][r.IntN(10)] = 1
	}
	for seed := uint64(1); seed <= 5; seed++ {
		m := new(ResNet20)
		m.Init(seed)
		l := float64(m.TrainLoss(images, labels))
		t.Logf("seed %d: initial loss %.4f (ln 10 = %.4f)", seed, l, math.Log(10))
		if math.Abs(l-math.Log(10)) > 0.1*math.Log(10) {
			t.Errorf("seed %d: initial loss %.4f, not within 10%% of ln 10", seed, l)
		}
	}
}

// resnetBatch is a random ResNet-20 batch: normal pixels and one-hot
// labels.
func resnetBatch(r *rand.Rand) (*[ResNetBatch][32][32][3]float32, *[ResNetBatch][10]float32) {
	images := new([ResNetBatch][32][32][3]float32)
	labels := new([ResNetBatch][10]float32)
	for i := range images {
		for y := range images[i] {
			for x := range images[i][y] {
				for c := range images[i][y][x] {
					images[i][y][x][c] = float32(r.NormFloat64())
				}
			}
		}
		labels[i][r.IntN(10)] = 1
	}
	return images, labels
}
