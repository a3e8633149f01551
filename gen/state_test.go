package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/internal/testutil"
)

// gpt2Small is a GPT-2-small-shaped model: 12 post-norm transformer
// blocks of width 768 (12-head attention, a 3072-wide ReLU MLP) on 8
// tokens, trained with AdamW. Its 85M parameters are held four times
// (Params, Grads and Adam's two moments): 1.27 GiB of float32, more than
// StateWarnBytes, though the parameters and gradients alone (0.63 GiB)
// are not.
func gpt2Small() string {
	var b strings.Builder
	b.WriteString("package p\n\n// GPT is GPT-2-small-shaped.\n//\n//ocannl:model\n")
	b.WriteString("//ocannl:layer block[d=768, ff=3072](x):\n")
	b.WriteString("//ocannl:let x1 = layer_norm(x + attention[heads=12, d_k=64, d_v=64](x))\n")
	b.WriteString("//ocannl:return layer_norm(x1 + linear[d](dense[ff](x1)))\n")
	prev := "x"
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "//ocannl:let b%d = block[]\n", i)
	}
	b.WriteString("//ocannl:loss train:\n//ocannl:input x : 1, 8 | 768\n//ocannl:input y : 1, 8 | 768\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "//ocannl:let h%d = b%d(%s)\n", i, i, prev)
		prev = fmt.Sprintf("h%d", i)
	}
	fmt.Fprintf(&b, "//ocannl:return ((%s - y) *. (%s - y)) ++ \"...|... => 0\"\n", prev, prev)
	b.WriteString("//ocannl:adamw lr=0.001\ntype GPT struct{ ocannlGPT }\n")
	return b.String()
}

// TestStateWarningCountsEverything: the size warning counts every buffer
// of the generated struct, Adam's moments included: a GPT-2-small-shaped
// model trained with AdamW warns (it did not when only the parameters,
// gradients and momentum were counted), with the struct's size, which
// Result.StateSizes reports too. An end-to-end check (OCANNLGEN_E2E=1):
// compiling the transformer takes seconds.
func TestStateWarningCountsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a 12-block transformer")
	}
	// In the default run, cmd/ocannlgen's TestStateWarning checks that
	// Adam's moments count (a one-layer model).
	testutil.EndToEnd(t)
	p, err := loadSource(gpt2Small())
	if err != nil {
		t.Fatal(err)
	}
	res, errs := generatePackage(p, Options{Check: true}, nil)
	if len(errs) > 0 {
		t.Fatalf("generation failed:\n%v", ErrorList(errs))
	}
	size := res.StateSizes["GPT"]
	// The parameters: per block, the attention's four 768x768 weights,
	// the MLP's 768x3072 and 3072x768 weights and their biases, two layer
	// norms (gamma, beta).
	perBlock := 4*768*768 + 768*3072 + 3072 + 3072*768 + 768 + 2*2*768
	params := int64(12 * perBlock)
	if min := 4 * 4 * params; size < min {
		t.Errorf("StateSizes[GPT] = %d, want at least %d (Params, Grads, adamM, adamV of %d float32 parameters)", size, min, params)
	}
	if len(res.Warnings) != 1 {
		t.Fatalf("warnings %v, want one", ErrorList(res.Warnings))
	}
	w := res.Warnings[0]
	want := fmt.Sprintf("warning: model GPT needs %s for its state (the struct ocannlGPT: %d float32 parameters; Params 324.3 MiB, Grads 324.3 MiB, Adam's first moments 324.3 MiB, Adam's second moments 324.3 MiB, ",
		byteSize(float64(size)), params)
	if w.Pos.Line != 5 || w.Pos.Column != 10 || !strings.HasPrefix(w.Msg, want) || !strings.HasSuffix(w.Msg, "more than the 1.0 GiB at which ocannlgen warns: a value of it may not fit in memory") {
		t.Errorf("warning %d:%d: %s\nwant 5:10: %s...", w.Pos.Line, w.Pos.Column, w.Msg, want)
	}
}
