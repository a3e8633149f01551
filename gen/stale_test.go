package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirectiveHash: the hash of a package directory changes with any
// //ocannl: line of its non-test sources (whatever their build
// constraints) and with nothing else; the generated test embeds it.
func TestDirectiveHash(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hash := func() string {
		t.Helper()
		h, err := directiveHash(dir)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	write("m.go", "package m\n\n//ocannl:model\n//ocannl:let net = mlp2[64, 32]\ntype M struct{ ocannlM }\n")
	base := hash()
	for _, c := range []struct {
		name, file, src string
		changes         bool
	}{
		{"a code change", "m.go", "package m\n\n// M is a model.\n//ocannl:model\n//ocannl:let net = mlp2[64, 32]\ntype M struct{ ocannlM }\n", false},
		{"indentation", "m.go", "package m\n\n  //ocannl:model\n\t//ocannl:let net = mlp2[64, 32]   \ntype M struct{ ocannlM }\n", false},
		{"a test file", "m_test.go", "package m\n\n//ocannl:let x = y\n", false},
		{"a generated file", "ocannl_gen.go", "package m\n\n//ocannl:let x = y\n", false},
		{"a changed directive", "m.go", "package m\n\n//ocannl:model\n//ocannl:let net = mlp2[128, 32]\ntype M struct{ ocannlM }\n", true},
		{"a file for another OS", "k_windows.go", "package m\n\n//ocannl:cuda\n", true},
	} {
		old, err := os.ReadFile(filepath.Join(dir, c.file))
		write(c.file, c.src)
		if got := hash(); (got != base) != c.changes {
			t.Errorf("%s: hash changed %v, want %v", c.name, got != base, c.changes)
		}
		if err == nil {
			write(c.file, string(old))
		} else if err := os.Remove(filepath.Join(dir, c.file)); err != nil {
			t.Fatal(err)
		}
		if hash() != base {
			t.Fatalf("%s: the hash did not come back", c.name)
		}
	}
	src, err := testFileSource("m", base)
	if err != nil {
		t.Fatal(err)
	}
	if !isGenerated(src) || !strings.Contains(string(src), `const ocannlDirectives = "`+base+`"`) || !strings.Contains(string(src), "run go generate") {
		t.Errorf("generated test:\n%s", src)
	}
	if _, err := directiveHash(filepath.Join(dir, "missing")); err == nil {
		t.Error("no error for a missing directory")
	}
}
