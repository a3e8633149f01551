package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestInferSchedule pins `ocannlgen infer --schedule` on a program and
// on model files (golden files under testdata; -update rewrites them),
// one of them a batch-256 CNN whose kernels run chains of parallel nests
// (every nest in a chain says so, and each chain lists its members), and
// checks that --kernels is a view of the same schedule: each kernel line
// it prints is a nest's kernel line there.
func TestInferSchedule(t *testing.T) {
	for _, c := range []struct{ file, golden string }{
		{"../../examples/programs/mlp.ocl", "schedule_mlp.golden"},
		{"../../examples/programs/moons.ocl", "schedule_moons.golden"},
		{"testdata/chains.ocl", "schedule_chains.golden"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"infer", "--schedule", c.file}, nil, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			sched := out.String()
			compareGolden(t, filepath.Join("testdata", c.golden), sched)
			for _, want := range []string{"# schedule: float32, parallel", "kernel: float32 dot kernel", "kernel: Go loops (", "Go loops: order", "parallel: "} {
				if !strings.Contains(sched, want) {
					t.Errorf("the schedule lacks %q", want)
				}
			}
			if c.golden == "schedule_chains.golden" {
				for _, want := range []string{"    chain 1: nest 1 of 2, one job\n", "# chain 2: 8 parts of 256 values, one job", "  the margin reset of net.max_pool#1/y (its rows)\n"} {
					if !strings.Contains(sched, want) {
						t.Errorf("the schedule lacks %q", want)
					}
				}
			}
			out.Reset()
			if code := run([]string{"infer", "--loops", "--kernels", c.file}, nil, &out, &errb); code != 0 {
				t.Fatalf("--kernels: exit %d: %s", code, errb.String())
			}
			n, in := 0, false
			for _, l := range strings.Split(out.String(), "\n") {
				switch {
				case strings.HasPrefix(l, "# kernels ("):
					in = true
				case l == "":
					in = false
				case in && strings.HasPrefix(l, "  "):
					n++
					if !strings.Contains(sched, "    kernel: "+strings.TrimSpace(l)+"\n") {
						t.Errorf("--kernels prints %q, which the schedule does not", l)
					}
				}
			}
			if n == 0 {
				t.Errorf("--kernels printed no kernel:\n%s", out.String())
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"infer", "--schedule", "--json", "../../examples/programs/mlp.ocl"}, nil, &out, &errb); code != 2 {
		t.Errorf("--schedule --json: exit %d, want 2", code)
	}
}

// TestInferScheduleBF16: with --bf16, --schedule and --kernels describe
// the contractions as the rt/bf16.Gemm calls of //ocannl:model bf16 (no
// float32 contraction kernel remains), for a program and for a model,
// and --kernels stays a view of the schedule.
func TestInferScheduleBF16(t *testing.T) {
	for _, file := range []string{"../../examples/programs/mlp.ocl", "testdata/chains.ocl"} {
		var out, errb bytes.Buffer
		if code := run([]string{"infer", "--schedule", "--bf16", file}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, errb.String())
		}
		sched := out.String()
		for _, want := range []string{"contractions on bf16 operands (rt/bf16.Gemm)", "kernel: bf16 contraction ", "(rt/bf16.Gemm: operands rounded to bf16"} {
			if !strings.Contains(sched, want) {
				t.Errorf("%s: the schedule lacks %q", file, want)
			}
		}
		for _, bad := range []string{"float32 dot kernel", "float32 broadcast kernel", "float32 m-vector kernel"} {
			if strings.Contains(sched, bad) {
				t.Errorf("%s: the bf16 schedule has a %q", file, bad)
			}
		}
		out.Reset()
		if code := run([]string{"infer", "--loops", "--kernels", "--bf16", file}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s --kernels: exit %d: %s", file, code, errb.String())
		}
		n := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "  bf16 contraction ") {
				n++
				if !strings.Contains(sched, "    kernel: "+strings.TrimSpace(l)+"\n") {
					t.Errorf("%s: --kernels prints %q, which the schedule does not", file, l)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: --kernels --bf16 printed no bf16 contraction:\n%s", file, out.String())
		}
	}
}
