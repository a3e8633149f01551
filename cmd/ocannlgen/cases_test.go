package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

type expectation struct {
	Command   string                      `json:"command"`
	Tensors   map[string]map[string][]any `json:"tensors"`
	ErrorKind any                         `json:"error_kind"`
	Values    map[string][]float64        `json:"values"`
	Ops       []map[string]any            `json:"ops"`
	Padding   map[string][][2]int         `json:"padding"`
}

// TestSharedCases runs every shared case through the command it names
// (`infer --json`, `infer --json --loops` or `run --json`) and checks what
// its expect file pins, as the reference runner does: shapes exactly,
// values within tolerance, padding exactly, op facts field by field, and
// error kinds.
func TestSharedCases(t *testing.T) {
	runCaseDir(t, testutil.CasesDir(t), 50)
}

// TestOCANNLCases runs the cases translated from OCANNL's own test suite
// that are committed with the repository (inference/testdata/ocannl_cases).
func TestOCANNLCases(t *testing.T) {
	runCaseDir(t, filepath.Join("..", "..", "inference", "testdata", "ocannl_cases"), 180)
}

func runCaseDir(t *testing.T, dir string, atLeast int) {
	files, err := filepath.Glob(filepath.Join(dir, "*.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	commands := map[string][]string{
		"infer":       {"infer", "--json"},
		"infer-loops": {"infer", "--json", "--loops"},
		"run":         {"run", "--json"},
	}
	if len(files) < atLeast {
		t.Fatalf("only %d cases found in %s; expected at least %d", len(files), dir, atLeast)
	}
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
		var rawExp map[string]json.RawMessage
		_ = json.Unmarshal(raw, &rawExp)
		t.Run(id, func(t *testing.T) {
			args, ok := commands[exp.Command]
			if !ok {
				t.Fatalf("unknown command %q", exp.Command)
			}
			var stdout, stderr bytes.Buffer
			code := run(append(append([]string{}, args...), filepath.Join(dir, id+".ocl")), nil, &stdout, &stderr)
			var out struct {
				Tensors []map[string]json.RawMessage `json:"tensors"`
				Ops     []map[string]json.RawMessage `json:"ops"`
				Error   *struct {
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
			byName := map[string]map[string]json.RawMessage{}
			for _, tn := range out.Tensors {
				var name string
				_ = json.Unmarshal(tn["name"], &name)
				byName[name] = tn
			}
			for name, rows := range exp.Tensors {
				g, ok := byName[name]
				if !ok {
					t.Errorf("tensor %s missing from output", name)
					continue
				}
				for kind, want := range rows {
					var got []any
					_ = json.Unmarshal(g[kind], &got)
					if !reflect.DeepEqual(normalize(got), normalize(want)) {
						t.Errorf("%s.%s = %v, want %v", name, kind, got, want)
					}
				}
			}
			rtol, atol := 1e-5, 1e-6
			if v, ok := rawExp["rtol"]; ok {
				_ = json.Unmarshal(v, &rtol)
			}
			if v, ok := rawExp["atol"]; ok {
				_ = json.Unmarshal(v, &atol)
			}
			for name, want := range exp.Values {
				var got []float64
				if err := json.Unmarshal(byName[name]["values"], &got); err != nil || len(got) != len(want) {
					t.Errorf("%s: values %s, want %d values", name, byName[name]["values"], len(want))
					continue
				}
				for i := range want {
					if math.Abs(got[i]-want[i]) > atol+rtol*math.Abs(want[i]) {
						t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
						break
					}
				}
			}
			for name, want := range exp.Padding {
				var got [][2]int
				_ = json.Unmarshal(byName[name]["padding"], &got)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s.padding = %v, want %v", name, got, want)
				}
			}
			for _, want := range exp.Ops {
				if reason := matchOp(out.Ops, want); reason != "" {
					t.Errorf("op %v: %s", want["lhs"], reason)
				}
			}
		})
	}
}

// matchOp reports why no op with the wanted lhs satisfies every pinned
// field ("" when one does).
func matchOp(ops []map[string]json.RawMessage, want map[string]any) string {
	reason := fmt.Sprintf("no op with lhs %v", want["lhs"])
	for _, op := range ops {
		var lhs string
		_ = json.Unmarshal(op["lhs"], &lhs)
		if lhs != want["lhs"] {
			continue
		}
		ok := true
		for _, key := range []string{"rhs", "op", "product", "lhs_index", "rhs_index", "zero_init", "accumulate"} {
			w, pinned := want[key]
			if !pinned {
				continue
			}
			var got any
			_ = json.Unmarshal(op[key], &got)
			if !reflect.DeepEqual(got, w) {
				ok = false
				reason = fmt.Sprintf("%s = %s, want %v", key, op[key], w)
				break
			}
		}
		if byName, pinned := want["rhs_index_by_name"].(map[string]any); ok && pinned {
			var names []string
			var idx [][]any
			_ = json.Unmarshal(op["rhs"], &names)
			_ = json.Unmarshal(op["rhs_index"], &idx)
			for rname, ridx := range byName {
				hit := false
				for k, n := range names {
					if n == rname && k < len(idx) && reflect.DeepEqual(idx[k], ridx) {
						hit = true
					}
				}
				if !hit {
					ok = false
					reason = fmt.Sprintf("rhs_index of %s is not %v", rname, ridx)
				}
			}
		}
		if ok {
			return ""
		}
	}
	return reason
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
