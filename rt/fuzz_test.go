package rt

import (
	"bytes"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load, both as they are and framed as
// a file with a valid checksum (so that mutations reach the payload
// parser instead of stopping at the CRC). Load must never panic, and a
// successful Load must round-trip through Save.
func FuzzLoad(f *testing.F) {
	var buf bytes.Buffer
	if err := Save(&buf, sampleSet()); err != nil {
		f.Fatal(err)
	}
	file := buf.Bytes()
	f.Add(file)
	f.Add(file[20 : len(file)-4])
	f.Add(file[:len(file)/2])
	f.Add([]byte("OCGNPARM"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, wrap(data)} {
			ts := blank(sampleSet())
			if err := Load(bytes.NewReader(in), ts); err != nil {
				continue
			}
			var out bytes.Buffer
			if err := Save(&out, ts); err != nil {
				t.Fatalf("Save after a successful Load: %v", err)
			}
			again := blank(ts)
			if err := Load(&out, again); err != nil || !sameBits(ts, again) {
				t.Fatalf("loaded tensors do not round-trip: %v", err)
			}
		}
	})
}
