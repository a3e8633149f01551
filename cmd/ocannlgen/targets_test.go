package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/target"
)

// TestTargets: `ocannlgen targets` prints every target's description,
// the same text as its String method, and takes no arguments.
func TestTargets(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"targets"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, c := range []target.CPU{target.Generic(), target.AVX2(), target.AVX512()} {
		if !strings.Contains(out.String(), "# "+c.Name+"\n"+c.String()) {
			t.Errorf("the output lacks %s's description:\n%s", c.Name, out.String())
		}
	}
	if !strings.Contains(out.String(), "# CUDA\n"+target.GPU().String()) {
		t.Errorf("the output lacks the CUDA description")
	}
	if code := run([]string{"targets", "x"}, nil, &out, &errb); code != 2 {
		t.Errorf("targets x: exit %d, want 2", code)
	}
}
