package spec

import "testing"

// fuzzSeeds are in-code seeds shared by both fuzz targets; more live in
// testdata/fuzz/.
var fuzzSeeds = []string{
	"ij;jk=>ik",
	"b|i->o; i->h => b|h",
	"...|...->... => 0",
	"2..v..|... => ..v..",
	"a, ..r..; ..r.., b => a, b",
	"...|2*oh<+wh, 2*ow<+ww, ..c..; wh, ww => ...|oh, ow, ..c..",
	"oh=+wh, ow=+ww; wh, ww => oh, ow",
	"2*x=+1+3*k; k => x",
	"2*x<+3*k+1; k => x",
	"... | ... -> ..., 2*i + 1 => ... | ... -> ..., i",
	"x, ...; y, ...; z, ... => x^y^z, ...",
	"3^a; a^3 => 3^a^5",
	"_, a_b => _",
	"i+1 => 1*i",
	"a & b => a",
	"stride*oh+kh => oh",
	"o+k; k => o",
	"..ab.. => a",
	"99999999999 => 0",
	"a\xffb => a",
	"",
}

func FuzzParseEinsum(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkEinsumRoundTrip(t, src)
	})
}

func FuzzParseSlot(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"b|i->o", "...|..v.. -> h", "|->", "a^2, 2*b<+1*c+3", "..v,.., x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSlotRoundTrip(t, src)
	})
}
