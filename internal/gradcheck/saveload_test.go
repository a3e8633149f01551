package gradcheck

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ocannlgen/ocannlgen/rt"
)

func TestSaveLoad(t *testing.T) {
	var a SaveA
	a.Init(3)
	for i := range a.Params.NetB {
		a.Params.NetB[i] = float64(i) + 0.25 // not the constant init
	}
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.Bytes()

	var b SaveA
	b.Init(99)
	if b.Params == a.Params {
		t.Fatal("different seeds gave equal parameters")
	}
	if err := b.Load(bytes.NewReader(saved)); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if b.Params != a.Params {
		t.Errorf("Load did not restore the parameters:\n got %v\nwant %v", b.Params, a.Params)
	}

	// The loaded model computes the same loss and gradients.
	var x [2][3]float64
	var r [2][4]float64
	for i := range 2 {
		for j := range 3 {
			x[i][j] = float64(i*3+j)/7 - 0.4
		}
		for j := range 4 {
			r[i][j] = float64(j-i) / 3
		}
	}
	if la, lb := a.Backward(&x, &r), b.Backward(&x, &r); la != lb || a.Grads != b.Grads {
		t.Errorf("after Load: loss %v, gradients %v; saved model: loss %v, gradients %v", lb, b.Grads, la, a.Grads)
	}

	// MarshalBinary and UnmarshalBinary encode the same file.
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, saved) {
		t.Error("MarshalBinary differs from Save")
	}
	var c SaveA
	if err := c.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if c.Params != a.Params {
		t.Error("UnmarshalBinary did not restore the parameters")
	}
}

func TestLoadRejectsOtherShape(t *testing.T) {
	var a SaveA
	a.Init(3)
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		t.Fatal(err)
	}
	var b SaveB
	b.Init(5)
	before := b.Params
	err := b.Load(bytes.NewReader(buf.Bytes()))
	if err == nil {
		t.Fatal("SaveB loaded SaveA's file, whose net.w has another shape")
	}
	t.Logf("error: %v", err)
	var se *rt.ShapeError
	if !errors.As(err, &se) {
		t.Errorf("error %v is not an *rt.ShapeError", err)
	} else if se.Name != "net.w" {
		t.Errorf("ShapeError names %q, want net.w", se.Name)
	}
	if msg := err.Error(); !strings.Contains(msg, `"net.w"`) || !strings.Contains(msg, "[4 3]") || !strings.Contains(msg, "[4 2]") {
		t.Errorf("error %q should name net.w and both shapes ([4 3] in the file, [4 2] expected)", msg)
	}
	if strings.Contains(err.Error(), `"net.b"`) || strings.Contains(err.Error(), `"w"`) {
		t.Errorf("error %q names a parameter whose shape matches", err)
	}
	if b.Params != before {
		t.Error("a rejected Load changed the parameters")
	}

	// A float32 model with the same identities and shapes is rejected too.
	var f SaveF32
	f.Init(5)
	before32 := f.Params
	if err := f.Load(bytes.NewReader(buf.Bytes())); err == nil {
		t.Error("a float32 model loaded a float64 file")
	} else {
		t.Logf("float32 model: %v", err)
		if !strings.Contains(err.Error(), "float") {
			t.Errorf("error %q does not mention the element type", err)
		}
	}
	if f.Params != before32 {
		t.Error("a rejected Load changed the float32 parameters")
	}

	// A truncated file is rejected and leaves the parameters alone.
	var a2 SaveA
	a2.Init(8)
	before2 := a2.Params
	if err := a2.Load(bytes.NewReader(buf.Bytes()[:buf.Len()-5])); err == nil {
		t.Error("a truncated file loaded")
	}
	if a2.Params != before2 {
		t.Error("a rejected Load changed the parameters")
	}
}
