package main

import (
	"encoding/gob"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/ocannlgen/ocannlgen/loopir"
)

// The gallery's tests compile the gallery (go/packages needs the go
// command) to get the interpreter's reference. A machine without a Go
// toolchain (the AVX-512 machine lent to a session, say) checks the
// kernels against a file recorded where the toolchain is:
//
//	go test ./examples/gallery -run TestRecordGalleryCases -args -recordgallery=/tmp/gallery.gob
//	go test -c -o gallery.test ./examples/gallery
//	# there, in a copy of examples/gallery:
//	./gallery.test -test.run TestRecordedGalleryCases -gallerycases=/tmp/gallery.gob
var (
	recordGallery = flag.String("recordgallery", "", "TestRecordGalleryCases writes every kernel's operands and the interpreter's output to this file")
	galleryCases  = flag.String("gallerycases", "", "TestRecordedGalleryCases checks the kernels against this file (written by TestRecordGalleryCases)")
)

// recordedCase is one kernel call: each parameter's cells in memory order
// (the output's initial contents too) and the interpreter's output.
type recordedCase struct {
	Name   string
	Elem   string
	Inputs [][]float64
	Want   []float64
}

// TestRecordGalleryCases writes, for every entry, the operands of seed 1
// and the interpreter's output to -recordgallery.
func TestRecordGalleryCases(t *testing.T) {
	if *recordGallery == "" {
		t.Skip("no -recordgallery file")
	}
	ks := kernelsOrSkip(t)
	var cases []recordedCase
	for _, e := range entries() {
		k := ks[e.name]
		args, inputs, err := operands(e.fn, k, rand.New(rand.NewPCG(1, 0x0ca111)))
		if err != nil {
			t.Fatal(err)
		}
		c := recordedCase{Name: e.name, Elem: k.Elem}
		for _, a := range args {
			flat := flatten(reflect.ValueOf(a))
			vals := make([]float64, flat.Len())
			for i := range vals {
				vals[i] = flat.Index(i).Float()
			}
			c.Inputs = append(c.Inputs, vals)
		}
		out := k.Params[len(k.Params)-1].Tensor
		if k.Elem == "float64" {
			st, err := loopir.RunWith[float64](k.Prog, inputs)
			if err != nil {
				t.Fatal(err)
			}
			c.Want = st.Values(out)
		} else {
			st, err := loopir.RunWith[float32](k.Prog, inputs)
			if err != nil {
				t.Fatal(err)
			}
			c.Want = st.Values(out)
		}
		cases = append(cases, c)
	}
	f, err := os.Create(*recordGallery)
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(cases); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRecordedGalleryCases runs every entry on the recorded operands and
// compares its output with the recorded interpreter output (the
// tolerances of TestKernelsMatchInterpreter), and checks that the call
// allocates nothing. Every entry must have a case.
func TestRecordedGalleryCases(t *testing.T) {
	if *galleryCases == "" {
		t.Skip("no -gallerycases file")
	}
	f, err := os.Open(*galleryCases)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []recordedCase
	if err := gob.NewDecoder(f).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	byName := map[string]recordedCase{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	for _, e := range entries() {
		t.Run(e.name, func(t *testing.T) {
			c, ok := byName[e.name]
			if !ok {
				t.Fatal("no recorded case")
			}
			args, err := recordedOperands(e.fn, c.Inputs)
			if err != nil {
				t.Fatal(err)
			}
			e.call(args)
			tol := tolF32
			if c.Elem == "float64" {
				tol = 1e-12
			}
			got := flatten(reflect.ValueOf(args[len(args)-1]))
			if got.Len() != len(c.Want) {
				t.Fatalf("output has %d cells, recorded %d", got.Len(), len(c.Want))
			}
			worst := 0.0
			for i, w := range c.Want {
				g := got.Index(i).Float()
				d := math.Abs(g-w) / math.Max(1, math.Abs(w))
				if math.IsNaN(g) != math.IsNaN(w) {
					d = math.Inf(1)
				}
				worst = math.Max(worst, d)
			}
			if worst > tol {
				t.Errorf("max relative error %.3g > %.0g", worst, tol)
			}
			if a := testing.AllocsPerRun(3, func() { e.call(args) }); a != 0 {
				t.Errorf("%v allocs per call, want 0", a)
			}
		})
	}
}

// recordedOperands allocates fn's arguments and fills them with the
// recorded cells.
func recordedOperands(fn any, inputs [][]float64) ([]any, error) {
	ft := reflect.TypeOf(fn)
	if ft.NumIn() != len(inputs) {
		return nil, fmt.Errorf("%d parameters, %d recorded", ft.NumIn(), len(inputs))
	}
	args := make([]any, len(inputs))
	for i, vals := range inputs {
		t := ft.In(i)
		var v reflect.Value
		if t.Kind() == reflect.Slice {
			v = reflect.MakeSlice(t, len(vals), len(vals))
		} else {
			v = reflect.New(t.Elem())
		}
		flat := flatten(v)
		if flat.Len() != len(vals) {
			return nil, fmt.Errorf("parameter %d holds %d cells, %d recorded", i, flat.Len(), len(vals))
		}
		for j, x := range vals {
			flat.Index(j).SetFloat(x)
		}
		args[i] = v.Interface()
	}
	return args, nil
}
