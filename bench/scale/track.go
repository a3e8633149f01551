package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ocannlgen/ocannlgen/bench/models"
	"github.com/ocannlgen/ocannlgen/rt"
	"github.com/ocannlgen/ocannlgen/rt/bf16"
)

// trackSource draws the decoder's training batches for -track: sequences
// of a fixed random Markov chain in which each symbol has 4 successors
// (probabilities 0.4, 0.3, 0.2, 0.1), so that the loss falls from
// ln 256 = 5.55 towards the chain's entropy (1.28 nats) as the model
// learns the table; the same seed gives both runs the same batches.
type trackSource struct {
	r    *rand.Rand
	next [models.GPTVocab][4]int
}

func newTrackSource() *trackSource {
	s := &trackSource{r: rand.New(rand.NewPCG(11, 12))}
	for i := range s.next {
		for j := range s.next[i] {
			s.next[i][j] = s.r.IntN(models.GPTVocab)
		}
	}
	return s
}

func (s *trackSource) batch(tokens, targets *gptIDs) {
	for b := range tokens {
		cur := s.r.IntN(models.GPTVocab)
		for t := range models.GPTContext {
			u := s.r.Float64()
			j := 0
			for _, p := range []float64{0.4, 0.3, 0.2} {
				if u < p {
					break
				}
				u -= p
				j++
			}
			nxt := s.next[cur][j]
			tokens[b][t], targets[b][t] = int32(cur), int32(nxt)
			cur = nxt
		}
	}
}

// track trains the decoder in float32 (models.GPT) and in bf16
// (models.GPTBF16) from the same initialization on the same batches for
// steps steps each, prints the losses (each the mean of the last 10
// steps, every 50 steps) and whether the final bf16 loss is within 2% of
// float32's (issue 25's acceptance); it returns the exit status.
func track(steps, threads int) int {
	pool := rt.NewPool(threads)
	defer pool.Close()
	mask := new([models.GPTContext][models.GPTContext]float32)
	for s := range mask {
		for t := 0; t <= s; t++ {
			mask[s][t] = 1
		}
	}
	tokens, targets := new(gptIDs), new(gptIDs)
	run := func(name string, init func(), step func() float32) []float32 {
		init()
		src := newTrackSource()
		ls := make([]float32, steps)
		t0 := time.Now()
		for i := range ls {
			src.batch(tokens, targets)
			ls[i] = step()
			if (i+1)%50 == 0 || i+1 == steps {
				fmt.Printf("track model=%s step=%d loss=%.4f mean10=%.4f elapsed_s=%.0f\n", name, i+1, ls[i], mean10(ls[:i+1]), time.Since(t0).Seconds())
			}
		}
		return ls
	}
	f := new(models.GPT)
	f.Pool = pool
	lf := run("gpt-f32", func() { f.Init(1) }, func() float32 { return must(f.TrainStep(tokens, targets, mask)) })
	f = nil
	b := new(models.GPTBF16)
	b.Pool = pool
	lb := run("gpt-bf16", func() { b.Init(1) }, func() float32 { return must(b.TrainStep(tokens, targets, mask)) })
	a, c := mean10(lf), mean10(lb)
	rel := (c - a) / a
	ok := math.Abs(rel) <= 0.02
	fmt.Printf("trackresult steps=%d threads=%d f32_loss=%.4f bf16_loss=%.4f rel=%+.2f%% within2pct=%t bf16_tier=%v (losses: mean of the last 10 steps)\n",
		steps, threads, a, c, 100*rel, ok, bf16.Best())
	if !ok {
		return 1
	}
	return 0
}

func mean10(ls []float32) float64 {
	n := min(10, len(ls))
	s := 0.0
	for _, l := range ls[len(ls)-n:] {
		s += float64(l)
	}
	return s / float64(n)
}
