package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFile: rt/wino/kern_amd64.s and kerns_amd64.go are what
// the generator writes.
func TestGeneratedFile(t *testing.T) {
	for _, f := range []struct {
		path string
		want []byte
	}{{"../../rt/wino/kern_amd64.s", generate()}, {"../../rt/wino/kerns_amd64.go", stubs()}} {
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s is stale: run go generate ./rt/wino", f.path)
		}
	}
}
