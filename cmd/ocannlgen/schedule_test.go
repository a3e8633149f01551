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
