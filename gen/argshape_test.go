package gen

import "testing"

// TestArgShapeErrors: a standard layer applied to a tensor with too few
// axes for it is a rank mismatch at the application, in the layer's
// terms (model/argshape.go); a layer of the model cites the operation in
// its body.
func TestArgShapeErrors(t *testing.T) {
	mustFail(t, modelSource("A", "let c1 = conv2d[16]", "loss train:", "input images : 32 | 64", "input labels : 32 | 10", "return cross_entropy(c1(images), labels)"), 8, 31,
		"rank-mismatch (entry train): conv2d c1 wants its argument as ... | oh, ow, ..ic.. (at least 2 output axes), but images has shape 32 | 64 (1 output axis); declare input images with at least 2 output axes")
	mustFail(t, modelSource("A", "entry predict:", "input images : 32 | 64", "return max_pool[2, 1](images)"), 6, 17,
		"rank-mismatch (entry predict): max_pool wants its argument as ... | oh, ow, ..c.. (at least 2 output axes), but images has shape 32 | 64 (1 output axis)")
	src := modelSource("A", `layer sum2(x) = x ++ "b | i, j => b | 0"`, "entry predict:", "input p : 4 | 2, 3, 5", "return sum2(p)")
	mustFail(t, src, 7, 17, "sum2 wants its argument as b | i, j (2 output axes, for the operation), but p has shape 4 | 2,3,5 (3 output axes); declare input p with 2 output axes")
	r, err := runPipeline(src)
	if err != nil || len(r.Errs) != 1 {
		t.Fatalf("%v %v", err, r.Errs)
	}
	const want = "rank-mismatch (entry predict): sum2 wants its argument as b | i, j (2 output axes, for the operation at p.go:4:28), but p has shape 4 | 2,3,5 (3 output axes); declare input p with 2 output axes"
	if got := r.Errs[0].Message(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
