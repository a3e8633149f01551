package gocode

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
)

// kernelNote matches the comment the emitter writes before a kernel
// call's dispatch: the kernel's description.
var kernelNote = regexp.MustCompile(`(?m)^\s*// ((?:the zero fill absorbed: )?float(?:32|64) [a-z -]+(?:kernel| reduction kernel).*)\.$`)

// regionFill matches a fill run as a map kernel without operands (not a
// loop nest: the schedule does not list fills' kernels yet).
var regionFill = regexp.MustCompile(`\(c = [-+]?(Inf|[0-9.e+-]+)\)`)

// TestScheduleMatchesRendering: the schedule (`ocannlgen infer
// --schedule`) is the emitter's: for forward and backward kernels of
// contractions, maps, reductions, pooling and absorbed fills, the
// kernels schedule.Plan lists, in order, are the kernels the rendered
// function dispatches to (serial code, so that no nest is split).
func TestScheduleMatchesRendering(t *testing.T) {
	bs := []*built{
		prepare(t, ecase{"MLP", "float32", `input x : 32 | 784
input w : 784 -> 128
input b : 128
let h = relu((w * x) + b)
let s = h ++ "... | ... -> i => ... | i"`, []pspec{pa("x"), pa("w"), pa("b"), out(pa("h")), out(pa("s"))}}),
		prepare(t, ecase{"Softmax", "float64", `input x : 64 | 300
let e = exp x
let z = e ++ "... | i => ... | 0"
let p = e /. z`, []pspec{pa("x"), out(pa("p"))}}),
		prepareBackward(t, ecase{"PoolBackward", "float32", poolLossSrc, []pspec{pa("x"), out(pa("l"))}}, "l", []string{"x"}),
		prepareBackward(t, ecase{"LayerBackward", "float32", `input x : 32 | 64
input w : 64 -> 48
let y = relu(w * x)
let l = (y *. y) ++ "...|... => 0"`, []pspec{pa("x"), pa("w"), out(pa("l"))}}, "l", []string{"w", "x"}),
	}
	for _, b := range bs {
		t.Run(b.k.Name, func(t *testing.T) {
			src, err := Render(&desc.File{Package: "p", Kernels: []*desc.Kernel{b.k}}, Options{Asm: asm.NewSet(asm.Tiers()...)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range kernelNote.FindAllStringSubmatch(funcText(t, string(src), b.k.Name), -1) {
				if !regionFill.MatchString(m[1]) {
					got = append(got, m[1])
				}
			}
			s := schedule.Plan(b.k.Prog, schedule.Options{Elem: b.k.Elem, Targets: asm.Tiers(), Keep: paramSet(b.k.Params), Outputs: outputSet(b.k.Params)})
			var want []string
			for _, n := range s.Nests {
				if n.Kernel.Family == schedule.GoLoops {
					continue
				}
				d := n.Kernel.Describe(s.Tiers)
				if n.FillMode == schedule.FillAbsorbed && n.Kernel.Family == schedule.Map {
					d = "the zero fill absorbed: " + d
				}
				want = append(want, d)
			}
			if len(want) == 0 {
				t.Fatalf("no kernel in the schedule:\n%s", s)
			}
			if !slices.Equal(got, want) {
				t.Errorf("the rendered kernels differ from the schedule's:\n--- rendered\n%s\n--- schedule\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), s)
			}
		})
	}
}

// TestScheduleSplitMatchesRendering: a nest the schedule splits is
// rendered as that many parts on the pool, and one it keeps serial for
// its stack local is rendered without parts.
func TestScheduleSplitMatchesRendering(t *testing.T) {
	src := "input x : 32 | 784\ninput w : 784 -> 128\nlet h = w * x\nlet y = relu h"
	for _, c := range []struct {
		name   string
		params []pspec
		stack  bool // h is a local on the stack
	}{
		{"LayerSplit", []pspec{pa("x"), pa("w"), out(pa("h")), out(pa("y"))}, false},
		{"LayerStack", []pspec{pa("x"), pa("w"), out(pa("y"))}, true},
	} {
		b := prepare(t, ecase{c.name, "float32", src, c.params})
		out, err := Render(&desc.File{Package: "p", Kernels: []*desc.Kernel{b.k}}, Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true})
		if err != nil {
			t.Fatal(err)
		}
		fn := funcText(t, string(out), b.k.Name)
		s := schedule.Plan(b.k.Prog, schedule.Options{Elem: "float32", Targets: asm.Tiers(), Parallel: true, Keep: paramSet(b.k.Params), Outputs: outputSet(b.k.Params)})
		n := s.Nests[0]
		if n.Split == nil != c.stack || n.Stack != c.stack || !n.Worth {
			t.Fatalf("%s: split %v stack %v worth %v:\n%s", c.name, n.Split, n.Stack, n.Worth, s)
		}
		if c.stack {
			if strings.Contains(fn, " parts of ") {
				t.Errorf("%s: the schedule keeps the product serial, the rendering splits it:\n%s", c.name, fn)
			}
			continue
		}
		if want := fmt.Sprintf("// %d parts of ", n.Parts); !strings.Contains(fn, want) {
			t.Errorf("%s: the schedule splits into %d parts, the rendering has no %q:\n%s", c.name, n.Parts, want, fn)
		}
	}
}

// TestSchedulePartialSumsMatchRendering: a bias gradient (a small output
// summed over a long batch) has no output loop to split; the schedule
// splits its batch into fixed partial sums, and so does the rendering.
func TestSchedulePartialSumsMatchRendering(t *testing.T) {
	b := prepare(t, ecase{"BiasGrad", "float32", "input g : 4096 | 16\nlet db = g ++ \"... | i => i\"", []pspec{pa("g"), out(pa("db"))}})
	out, err := Render(&desc.File{Package: "p", Kernels: []*desc.Kernel{b.k}}, Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true})
	if err != nil {
		t.Fatal(err)
	}
	fn := funcText(t, string(out), b.k.Name)
	s := schedule.Plan(b.k.Prog, schedule.Options{Elem: "float32", Targets: asm.Tiers(), Parallel: true, Keep: paramSet(b.k.Params), Outputs: outputSet(b.k.Params)})
	n := s.Nests[len(s.Nests)-1]
	if !n.Partial || n.Split == nil {
		t.Fatalf("the schedule has no partial sums:\n%s", s)
	}
	if want := fmt.Sprintf("// The %d partial sums, added in part order.", n.Parts); !strings.Contains(fn, want) {
		t.Errorf("the schedule has %d partial sums, the rendering no %q:\n%s", n.Parts, want, fn)
	}
	if !strings.Contains(s.String(), fmt.Sprintf("parallel: partial sums over i%d in %d parts", n.Split.Var, n.Parts)) {
		t.Errorf("the printed schedule lacks the partial sums:\n%s", s)
	}
}

// TestScheduleBF16MatchesRendering: in a bf16 kernel (desc.Kernel.BF16)
// the schedule describes the contraction as the rt/bf16.Gemm call the
// code makes and splits it as the code does (m, not n, when m is at
// least as long: both operands are packed per part), which differs
// from the float32 kernel's split here.
func TestScheduleBF16MatchesRendering(t *testing.T) {
	src := "input x : 512 | 256\ninput w : 256 | 128\nlet h = x +* \"b | k; k | n => b | n\" w"
	splits := map[bool]int{}
	for _, bf := range []bool{false, true} {
		b := prepare(t, ecase{fmt.Sprintf("BF16%v", bf), "float32", src, []pspec{pa("x"), pa("w"), out(pa("h"))}})
		b.k.BF16 = bf
		opt := Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true}
		code, err := Render(&desc.File{Package: "p", Kernels: []*desc.Kernel{b.k}}, opt)
		if err != nil {
			t.Fatal(err)
		}
		fn := funcText(t, string(code), b.k.Name)
		s, err := Schedule(b.k, opt)
		if err != nil {
			t.Fatalf("bf16 %v: %v\n%s", bf, err, s)
		}
		n := s.Nests[0]
		if n.Split == nil {
			t.Fatalf("bf16 %v: no split:\n%s", bf, s)
		}
		splits[bf] = n.Split.Var
		if want := fmt.Sprintf("// %d parts of i%d", n.Parts, n.Split.Var); !strings.Contains(fn, want) {
			t.Errorf("bf16 %v: the schedule splits i%d into %d parts, the rendering has no %q:\n%s", bf, n.Split.Var, n.Parts, want, fn)
		}
		text := s.String()
		gemm := strings.Contains(text, "kernel: bf16 contraction 512x128x256 (rt/bf16.Gemm") && strings.Contains(text, "# schedule: float32, contractions on bf16 operands")
		if gemm != bf || strings.Contains(string(code), "bf16.Gemm(") != bf {
			t.Errorf("bf16 %v: the schedule names rt/bf16.Gemm: %v, the code calls it: %v:\n%s", bf, gemm, strings.Contains(string(code), "bf16.Gemm("), text)
		}
	}
	if splits[false] == splits[true] {
		t.Errorf("float32 and bf16 split the same loop i%d; the case no longer tells them apart", splits[true])
	}
}
