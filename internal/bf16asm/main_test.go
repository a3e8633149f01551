package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDPBF16PSEncoding checks the encoder against encodings from GNU as
// (as, then objdump -d).
func TestDPBF16PSEncoding(t *testing.T) {
	for _, c := range []struct {
		d, s1, s2 int
		want      []byte
	}{
		{0, 24, 25, []byte{0x62, 0x92, 0x3e, 0x40, 0x52, 0xc1}},
		{1, 24, 25, []byte{0x62, 0x92, 0x3e, 0x40, 0x52, 0xc9}},
		{4, 24, 25, []byte{0x62, 0x92, 0x3e, 0x40, 0x52, 0xe1}},
		{0, 1, 2, []byte{0x62, 0xf2, 0x76, 0x48, 0x52, 0xc2}},    // vdpbf16ps zmm0, zmm1, zmm2
		{27, 29, 30, []byte{0x62, 0x02, 0x16, 0x40, 0x52, 0xde}}, // vdpbf16ps zmm27, zmm29, zmm30
		{16, 8, 17, []byte{0x62, 0xa2, 0x3e, 0x48, 0x52, 0xc1}},  // vdpbf16ps zmm16, zmm8, zmm17
	} {
		if got := evexDPBF16PS(c.d, c.s1, c.s2); !bytes.Equal(got, c.want) {
			t.Errorf("evexDPBF16PS(%d, %d, %d) = % x, want % x", c.d, c.s1, c.s2, got, c.want)
		}
	}
}

// TestCVTNE2PS2BF16Encoding checks the encoder against encodings from
// GNU as (as, then objdump -d).
func TestCVTNE2PS2BF16Encoding(t *testing.T) {
	for _, c := range []struct {
		d, s1, s2 int
		want      []byte
	}{
		{3, 2, 1, []byte{0x62, 0xf2, 0x6f, 0x48, 0x72, 0xd9}},    // vcvtne2ps2bf16 zmm3, zmm2, zmm1
		{16, 8, 17, []byte{0x62, 0xa2, 0x3f, 0x48, 0x72, 0xc1}},  // vcvtne2ps2bf16 zmm16, zmm8, zmm17
		{27, 29, 30, []byte{0x62, 0x02, 0x17, 0x40, 0x72, 0xde}}, // vcvtne2ps2bf16 zmm27, zmm29, zmm30
		{0, 1, 2, []byte{0x62, 0xf2, 0x77, 0x48, 0x72, 0xc2}},    // vcvtne2ps2bf16 zmm0, zmm1, zmm2
	} {
		if got := evexCVTNE2PS2BF16(c.d, c.s1, c.s2); !bytes.Equal(got, c.want) {
			t.Errorf("evexCVTNE2PS2BF16(%d, %d, %d) = % x, want % x", c.d, c.s1, c.s2, got, c.want)
		}
	}
}

// TestGeneratedFile: rt/bf16/kern_amd64.s and kerns_amd64.go are what
// the generator writes.
func TestGeneratedFile(t *testing.T) {
	got, err := os.ReadFile("../../rt/bf16/kern_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, generate()) {
		t.Error("rt/bf16/kern_amd64.s is stale: run go generate ./rt/bf16")
	}
	got, err = os.ReadFile("../../rt/bf16/kerns_amd64.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, stubs()) {
		t.Error("rt/bf16/kerns_amd64.go is stale: run go generate ./rt/bf16")
	}
}
