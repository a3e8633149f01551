package spec

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// QuoteMax is about the most characters an error message quotes from
// its input: Quote and Clip shorten anything longer.
const QuoteMax = 80

// clipAt is how many characters of a shortened text are kept, leaving
// room for "..." and the length within QuoteMax.
const clipAt = 60

// Quote returns s quoted as Go's %q verb writes it, shortened when the
// quoted text would be longer than QuoteMax characters: the quoted
// beginning of s (whole characters, at most 60 in all), then "..." and
// the length of s,
//
//	"a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a1"... (2288890 bytes)
//
// Every error message of the spec, program and generator stages quotes
// user input (a spec, a name, a token, a directive) through Quote, so
// that a message stays short whatever the input (a 300,000-label spec
// is an error of a few hundred bytes, not of megabytes). Positions are
// values (an error's Pos, SpecCol and Related), never read from the
// message text, so shortening a quotation moves none of them; a
// citation's offset is taken from the text as built, after the
// quotation.
func Quote(s string) string { return QuoteWith(s, strconv.Quote) }

// QuoteWith is Quote with another quoting function (the program
// language's string syntax, say): quote(s), or when that is longer than
// QuoteMax, quote of the longest beginning of s whose quotation fits in
// 60 characters, then "..." and the length of s.
func QuoteWith(s string, quote func(string) string) string {
	if len(s) <= QuoteMax {
		if q := quote(s); len(q) <= QuoteMax {
			return q
		}
	}
	return quote(prefix(s, func(p string) bool { return len(quote(p)) <= clipAt })) + fmt.Sprintf("... (%d bytes)", len(s))
}

// Clip is Quote for text a message shows without quotes (a number, a
// row of a shape): s itself when it has at most QuoteMax bytes, or its
// beginning (whole characters, at most 60 bytes), "..." and its length.
func Clip(s string) string {
	if len(s) <= QuoteMax {
		return s
	}
	return prefix(s, func(p string) bool { return len(p) <= clipAt }) + fmt.Sprintf("... (%d bytes)", len(s))
}

// prefix returns the longest beginning of s, cut between characters,
// that fits (fits must hold for "" and be monotonic); only the first
// few hundred bytes of s are looked at.
func prefix(s string, fits func(string) bool) string {
	end := 0
	for end < len(s) {
		_, n := utf8.DecodeRuneInString(s[end:])
		if !fits(s[:end+n]) {
			break
		}
		end += n
	}
	return s[:end]
}
