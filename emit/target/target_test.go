package target

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
)

// TestSharedTuning: a generated amd64 package runs one schedule on every
// tier (the Go loops in the other branch), decided with its best tier's
// tuning, so the CPU targets must agree on it. A target that needs its
// own would need per-tier decisions in the emitter first.
func TestSharedTuning(t *testing.T) {
	g, a2, a5 := Generic(), AVX2(), AVX512()
	for _, c := range []CPU{a2, a5} {
		if !reflect.DeepEqual(c.Loops, g.Loops) || !reflect.DeepEqual(c.Parallel, g.Parallel) {
			t.Errorf("%s: Loops or Parallel differ from %s's", c.Name, g.Name)
		}
	}
	if !reflect.DeepEqual(a2.Kernels, a5.Kernels) {
		t.Errorf("the AVX2 and AVX-512 targets' Kernels differ:\n%+v\n%+v", a2.Kernels, a5.Kernels)
	}
	if !reflect.ValueOf(g.Kernels).IsZero() || !reflect.ValueOf(g.Vector).IsZero() {
		t.Errorf("the generic target has kernels or a vector tier")
	}
}

// TestEveryLimitSet: every int field of the tuning a target has is
// positive (a field added to a description but not to a target reads 0,
// which would silently turn a threshold off).
func TestEveryLimitSet(t *testing.T) {
	var check func(name string, v reflect.Value)
	check = func(name string, v reflect.Value) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			switch fv.Kind() {
			case reflect.Struct:
				if !fv.IsZero() {
					check(name+"."+f.Name, fv)
				}
			case reflect.Int:
				// Only the AVX-512 tier has the wide tile and blocks
				// the dot kernel's k (not measured on AVX2).
				if fv.Int() <= 0 && !((strings.HasPrefix(f.Name, "Wide") || f.Name == "DotKCBytes") && name == "amd64 AVX2+FMA.Vector") {
					t.Errorf("%s.%s = %d", name, f.Name, fv.Int())
				}
			}
		}
	}
	for _, c := range []CPU{Generic(), AVX2(), AVX512()} {
		check(c.Name, reflect.ValueOf(c))
	}
	check("CUDA", reflect.ValueOf(GPU()))
}

// TestFieldsDocumented: every field of a description says what it is
// (and, for a tuned limit, the measurement behind it).
func TestFieldsDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "target.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(x ast.Node) bool {
		st, ok := x.(*ast.StructType)
		if !ok {
			return true
		}
		for _, fl := range st.Fields.List {
			n++
			if fl.Doc == nil && len(fl.Names) > 0 {
				t.Errorf("field %s has no comment", fl.Names[0].Name)
			}
		}
		return true
	})
	if n < 40 {
		t.Errorf("found %d fields; the parse missed the descriptions", n)
	}
}

// TestString: the printed description names every tuning field with its
// value, and Generic's missing parts as none.
func TestString(t *testing.T) {
	s := AVX512().String()
	for _, want := range []string{"Name = amd64 AVX-512\n", "Parallel.MinGoIters = 32768\n", "Kernels.MinFlops = 1024\n", "Vector.WideTileMinM = 96\n", "Vector.Require = [AVX512F AVX512VL]\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("AVX512().String() lacks %q:\n%s", want, s)
		}
	}
	if g := Generic().String(); !strings.Contains(g, "Kernels = none\n") || !strings.Contains(g, "Vector = none\n") {
		t.Errorf("Generic().String():\n%s", g)
	}
	if g := GPU().String(); !strings.Contains(g, "Block = 256\n") {
		t.Errorf("GPU().String():\n%s", g)
	}
}
