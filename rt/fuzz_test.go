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

// FuzzLoadCheckpoint feeds arbitrary bytes to LoadCheckpoint. It must
// never panic, and a successful load must round-trip through
// SaveCheckpoint with the same step.
func FuzzLoadCheckpoint(f *testing.F) {
	var buf bytes.Buffer
	if err := SaveCheckpoint(&buf, 17, "adam", sampleSet()); err != nil {
		f.Fatal(err)
	}
	file := buf.Bytes()
	f.Add(file)
	f.Add(file[:len(file)/2])
	f.Add(file[:40])
	f.Add([]byte("OCGNCKPT"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts := blank(sampleSet())
		step, err := LoadCheckpoint(bytes.NewReader(data), "adam", ts)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := SaveCheckpoint(&out, step, "adam", ts); err != nil {
			t.Fatalf("SaveCheckpoint after a successful LoadCheckpoint: %v", err)
		}
		again := blank(ts)
		if s, err := LoadCheckpoint(&out, "adam", again); err != nil || s != step || !sameBits(ts, again) {
			t.Fatalf("a loaded checkpoint does not round-trip: step %d -> %d, %v", step, s, err)
		}
	})
}
