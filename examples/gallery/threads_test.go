package main

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

// TestThreadsBitIdentical runs the gallery's kernels with parallel loop
// nests (they use rt.DefaultPool) on 1, 2 and 4 threads: the outputs are
// the same bits (%v prints the shortest representation that round-trips,
// so equal strings mean equal floats, signed zeros included). Run it
// under -race too.
func TestThreadsBitIdentical(t *testing.T) {
	ks := kernelsOrSkip(t)
	defer rt.SetDefaultPool(rt.SetDefaultPool(nil))
	for _, e := range entries() {
		switch e.name {
		case "MatMul256", "MatMul512", "MLPLayer", "SumBatch":
		default:
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			var want string
			for _, th := range []int{1, 2, 4} {
				args, _, err := operands(e.fn, ks[e.name], rand.New(rand.NewPCG(9, 9)))
				if err != nil {
					t.Fatal(err)
				}
				p := rt.NewPool(th)
				rt.SetDefaultPool(p)
				e.call(args)
				e.call(args) // outputs accumulate nothing: same result twice
				got := ""
				for _, a := range args {
					got += fmt.Sprint(reflect.ValueOf(a).Elem().Interface())
				}
				if n := testing.AllocsPerRun(2, func() { e.call(args) }); n != 0 {
					t.Errorf("%d threads: %v allocs per call", th, n)
				}
				p.Close()
				if th == 1 {
					want = got
				} else if got != want {
					t.Errorf("%d threads: outputs differ from 1 thread's", th)
				}
			}
		})
	}
}
