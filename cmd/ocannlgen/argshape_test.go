package main

import (
	"encoding/json"
	"testing"
)

// TestInferLayerArgShape: infer reports a convolution over flat images
// as the generator does (gen's TestArgShapeErrors, golden's conv2dflat),
// at the application, in the layer's terms, with its kind in --json.
func TestInferLayerArgShape(t *testing.T) {
	src := "let c1 = conv2d[16]\nloss train:\n    input images : 32 | 64\n    input labels : 32 | 10\n    return cross_entropy(c1(images), labels)\n"
	const msg = "conv2d c1 wants its argument as ... | oh, ow, ..ic.. (at least 2 output axes), but images has shape 32 | 64 (1 output axis); declare input images with at least 2 output axes"
	code, _, errs := runCLI(t, src, "infer", "-")
	if want := "<stdin>:5:26: rank-mismatch: " + msg + "\n"; code != 1 || errs != want {
		t.Errorf("exit %d\n got %q\nwant %q", code, errs, want)
	}
	code, out, _ := runCLI(t, src, "infer", "--json", "-")
	var got struct {
		Error struct {
			Kind, Message string
			Line, Col     int
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if e := got.Error; e.Kind != "rank-mismatch" || e.Message != msg || e.Line != 5 || e.Col != 26 {
		t.Errorf("--json: got %+v", e)
	}
}
