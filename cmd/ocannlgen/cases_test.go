package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// casesDir locates the shared example cases: $OCANNLGEN_CASES, or
// ../shared/cases beside the repository.
func casesDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("OCANNLGEN_CASES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "cases")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared cases not found at %s", dir)
	}
	return dir
}

type expectation struct {
	Command   string                      `json:"command"`
	Tensors   map[string]map[string][]any `json:"tensors"`
	ErrorKind any                         `json:"error_kind"`
	Values    map[string][]float64        `json:"values"`
	Ops       []map[string]any            `json:"ops"`
	Padding   map[string][][2]int         `json:"padding"`
}

// TestSharedCases runs every shared case whose command is `infer` through
// `ocannlgen infer --json` and checks shapes or error kinds exactly as the
// reference runner does.
func TestSharedCases(t *testing.T) {
	dir := casesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	ran := 0
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".expect.json")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var exp expectation
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if exp.Command != "infer" {
			continue
		}
		ran++
		t.Run(id, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"infer", "--json", filepath.Join(dir, id+".ocl")}, nil, &stdout, &stderr)
			var out struct {
				Tensors []struct {
					Name   string `json:"name"`
					Batch  []any  `json:"batch"`
					Input  []any  `json:"input"`
					Output []any  `json:"output"`
				} `json:"tensors"`
				Error *struct {
					Kind    string `json:"kind"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("output is not JSON (exit %d): %s %s", code, stdout.String(), stderr.String())
			}
			if exp.ErrorKind != nil {
				want := fmt.Sprint(exp.ErrorKind)
				if code != 1 || out.Error == nil {
					t.Fatalf("want error %s, got exit %d: %s", want, code, stdout.String())
				}
				if !strings.Contains(want, out.Error.Kind) {
					t.Fatalf("error kind %s, want %s (%s)", out.Error.Kind, want, out.Error.Message)
				}
				return
			}
			if code != 0 || out.Error != nil {
				t.Fatalf("exit %d: %s", code, stdout.String())
			}
			got := map[string]map[string][]any{}
			for _, tn := range out.Tensors {
				got[tn.Name] = map[string][]any{"batch": tn.Batch, "input": tn.Input, "output": tn.Output}
			}
			for name, rows := range exp.Tensors {
				g, ok := got[name]
				if !ok {
					t.Errorf("tensor %s missing from output", name)
					continue
				}
				for kind, want := range rows {
					if !reflect.DeepEqual(normalize(g[kind]), normalize(want)) {
						t.Errorf("%s.%s = %v, want %v", name, kind, g[kind], want)
					}
				}
			}
		})
	}
	if ran < 30 {
		t.Fatalf("only %d infer cases found in %s; expected the shared sample (35)", ran, dir)
	}
}

// normalize makes JSON numbers and ints comparable.
func normalize(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		switch v := x.(type) {
		case float64:
			out[i] = fmt.Sprint(int(v))
		default:
			out[i] = fmt.Sprint(v)
		}
	}
	return out
}
