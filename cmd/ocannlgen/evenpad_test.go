package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEvenKernelPaddingPyTorchTwin runs a padded convolution with an even
// kernel (a 2x4 window on a 5x6 image) and compares it with PyTorch's
// results recorded in testdata/torch_even_kernel.json (written by
// torch_even_kernel.py, issue 27 item 4): ocannlgen pads the extra cell
// of an even window on the left, as seed 002 prescribes, so its output
// is PyTorch's with the input padded explicitly that way (k/2 cells
// before, k/2-1 after), and PyTorch's padding='same', which pads the
// extra cell on the right, is the same output shifted by one cell along
// both axes; PyTorch's result is ocannlgen's with the kernel grown to odd
// sizes by a leading row and column of zeros.
func TestEvenKernelPaddingPyTorchTwin(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "torch_even_kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var twin struct {
		X, W, Same, Left []float64
		WOdd             []float64 `json:"w_odd"`
		SameOdd          []float64 `json:"same_odd"`
	}
	if err := json.Unmarshal(raw, &twin); err != nil {
		t.Fatal(err)
	}
	const h, w, kh, kw = 5, 6, 2, 4
	if len(twin.X) != h*w || len(twin.W) != kh*kw || len(twin.Same) != h*w || len(twin.Left) != h*w ||
		len(twin.WOdd) != (kh+1)*(kw+1) || len(twin.SameOdd) != h*w {
		t.Fatalf("the fixture's sizes: %d %d %d %d %d %d", len(twin.X), len(twin.W), len(twin.Same), len(twin.Left), len(twin.WOdd), len(twin.SameOdd))
	}
	rows := func(v []float64, n int) string {
		var r []string
		for i := 0; i < len(v); i += n {
			var c []string
			for _, x := range v[i : i+n] {
				c = append(c, fmt.Sprint(x))
			}
			r = append(r, "["+strings.Join(c, "; ")+"]")
		}
		return "[" + strings.Join(r, "; ") + "]"
	}
	conv := func(kernel []float64, kh, kw int) []float64 {
		t.Helper()
		src := fmt.Sprintf("input x : %d, %d = %s\ninput w : %d, %d = %s\nlet y = x +* \"oh=+kh, ow=+kw; kh, kw => oh, ow\" w\n",
			h, w, rows(twin.X, w), kh, kw, rows(kernel, kw))
		code, out, errs := runCLI(t, src, "run", "--json", "-")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		var res struct {
			Tensors []struct {
				Name   string
				Values []float64
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		for _, tn := range res.Tensors {
			if tn.Name == "y" {
				return tn.Values
			}
		}
		t.Fatalf("no y in %s", out)
		return nil
	}
	y := conv(twin.W, kh, kw)
	if !slices.Equal(y, twin.Left) {
		t.Errorf("ocannlgen's padded convolution\n%v\nis not PyTorch's with the extra cell padded on the left\n%v", y, twin.Left)
	}
	if slices.Equal(y, twin.Same) {
		t.Errorf("ocannlgen's padded convolution is PyTorch's padding='same': %v", y)
	}
	for i := 1; i < h; i++ {
		for j := 1; j < w; j++ {
			if got, want := y[i*w+j], twin.Same[(i-1)*w+j-1]; got != want {
				t.Errorf("y[%d][%d] = %v, want padding='same''s [%d][%d] = %v (shifted by one cell)", i, j, got, i-1, j-1, want)
			}
		}
	}
	// PyTorch's padding='same' result, computed here: the kernel grown to
	// odd sizes by a leading row and column of zeros (docs/language.md).
	if !slices.Equal(twin.SameOdd, twin.Same) {
		t.Fatalf("in the fixture, the zero-grown odd kernel's padding='same' output is not the even kernel's")
	}
	if got := conv(twin.WOdd, kh+1, kw+1); !slices.Equal(got, twin.Same) {
		t.Errorf("the zero-grown odd kernel gives\n%v\nnot PyTorch's padding='same'\n%v", got, twin.Same)
	}
}
