package spec

import (
	"strings"
	"testing"
)

// errorCases lists one or more specs per error class with the expected
// column and a fragment of the expected message. slot selects ParseSlot
// instead of ParseEinsum.
var errorCases = []struct {
	spec string
	slot bool
	col  int
	msg  string
}{
	// Empty input.
	{"", false, 1, "empty spec"},
	{"   ", false, 1, "empty spec"},
	{"", true, 1, "empty spec"},
	{"\t\n", true, 1, "empty spec"},
	// Einsum structure.
	{"ij;jk", false, 6, "missing '=>'"},
	{"a", false, 2, "missing '=>'"},
	// '->' written for '=>': the error points at it and shows the fix.
	{"i,j;j,k->i,k", false, 8, `did you mean "i,j;j,k=>i,k"?`},
	{"ab->b", false, 3, `did you mean "ab=>b"?`},
	{"a => b => c", false, 8, "second '=>'"},
	{"a => b; c", false, 7, "result is a single slot"},
	{"a; b", true, 2, "single slot"},
	{"a => b", true, 3, "single slot"},
	// Row structure.
	{"a->b->c", true, 5, "at most one '->'"},
	{"a->b|c", true, 5, "must come before"},
	{"a|b|c", true, 4, "at most one '|'"},
	{"a, b c", true, 6, "expected ','"},
	{"a b, c", true, 3, "expected ','"},
	{"2i,", true, 2, "expected ','"},
	{"a,,b", true, 3, "two commas"},
	{",a", true, 1, "unexpected ','"},
	{"a|,b", true, 3, "unexpected ','"},
	// Row variables.
	{"... ...", true, 5, "at most one row variable"},
	{"..v.. a ..w..", true, 9, "at most one row variable"},
	{"..ab..", true, 4, "single letter"},
	{"..v", true, 1, "unterminated row variable"},
	{"a, ..v", true, 4, "unterminated row variable"},
	{"a, ..v,", true, 4, "unterminated row variable"},
	{"..", true, 1, "unterminated row variable"},
	{".. ..", true, 4, "row variable name"},
	{"..1..", true, 3, "row variable name"},
	{".._..", true, 3, "row variable name"},
	{"..v x,", true, 5, "expected '..'"},
	{"..v x", true, 5, "expected '..'"},
	{"..vx..", true, 4, "single letter"},
	{"..v..., a", true, 4, "expected '..'"},
	// Characters.
	{"a & b", true, 3, "'&' is reserved"},
	{"a$b", true, 2, "unexpected character '$'"},
	{"a, $b", true, 4, "unexpected character '$'"},
	{"a\xffb", true, 2, "unexpected byte 0xff"},
	{"a,\xc3\xa9", true, 3, "byte 0xc3"},
	{"a - b", true, 3, "unexpected character '-'"},
	{"a.", true, 2, "unexpected character '.'"},
	{"a => b > c", false, 8, "unexpected character '>'"},
	// Integers.
	{"99999999999999999999999999", true, 1, "too large"},
	{"a, 2147483649", true, 4, "too large"},
	{"3*i+2147483649", true, 5, "too large"},
	// Affine axes.
	{"stride*oh", true, 1, "stride must be an integer literal"},
	{"... | stride*oh+kh, stride*ow+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc..", false, 7,
		"stride must be an integer literal"},
	{"0*i", true, 1, "stride must be >= 1"},
	{"o<+0*k", true, 4, "dilation must be >= 1"},
	{"o<+d*k", true, 4, "dilation must be an integer literal"},
	{"o+k", true, 2, "convolution needs a padding mode: write `=+` (padded) or `<+` (valid)"},
	{"2*o+k", true, 4, "convolution needs a padding mode"},
	{"2*o+3*k", true, 4, "convolution needs a padding mode"},
	{"a, 2*b+c", true, 7, "convolution needs a padding mode"},
	{"i, o+k, j", true, 5, "convolution needs a padding mode"},
	{"a+bc", true, 2, "convolution needs a padding mode"},
	{"i, j -> 2*i+j", true, 12, "convolution needs a padding mode"},
	{"batch|input->3*output+1*kernel,", true, 22, "convolution needs a padding mode"},
	{"2*o+1+k", true, 4, "convolution needs a padding mode"},
	{"o=k", true, 3, "expected '+'"},
	{"o<", true, 3, "expected '+'"},
	{"o=+1+k+2", true, 7, "offset is given twice"},
	{"o<+", true, 4, "kernel label"},
	{"o<+_", true, 4, "kernel label"},
	{"o<+3", true, 5, "dilation*kernel"},
	{"o<+3*", true, 6, "kernel label"},
	{"o<+k+", true, 6, "integer offset"},
	{"o<+k+j", true, 6, "integer offset"},
	{"2*", true, 3, "label after the stride"},
	{"2*3", true, 3, "label after the stride"},
	{"2+i", true, 2, "unexpected '+' after integer 2"},
	{"2<+i", true, 2, "unexpected '<' after integer 2"},
	{"o+", true, 3, "offset or a kernel"},
	{"o+_", true, 3, "offset or a kernel"},
	{"2*i+1*", true, 4, "convolution needs a padding mode"},
	{"2*i+1 =+k", true, 7, "unexpected '=' after the affine axis"},
	{"2*i*3", true, 4, "unexpected '*' after the affine axis"},
	{"_*2", true, 2, "'_' can only be a plain label"},
	{"a,+b", true, 3, "expected an axis"},
	{"a*", true, 1, "stride must be an integer literal"},
	// Concatenation.
	{"a^0", true, 3, "must be >= 1"},
	{"0^a", true, 1, "must be >= 1"},
	{"a^2*b", true, 4, "cannot be affine"},
	{"a^b+1", true, 4, "cannot be affine"},
	{"2*a^b", true, 4, "cannot be affine"},
	{"o<+k^b", true, 5, "cannot be affine"},
	{"_^a", true, 2, "'_' can only be a plain label"},
	{"a^_", true, 3, "'_' cannot be a concatenation component"},
	{"a^", true, 3, "expected a label or an integer"},
	{"a^^b", true, 3, "expected a label or an integer"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		var err error
		if tc.slot {
			var s *Slot
			s, err = ParseSlot(tc.spec)
			if err == nil {
				t.Errorf("ParseSlot(%q) = %s, want an error", tc.spec, dumpSlot(s))
				continue
			}
		} else {
			var e *Einsum
			e, err = ParseEinsum(tc.spec)
			if err == nil {
				t.Errorf("ParseEinsum(%q) = %s, want an error", tc.spec, dumpEinsum(e))
				continue
			}
		}
		se := checkSpecError(t, tc.spec, err)
		t.Logf("%v", se)
		if se.Col != tc.col {
			t.Errorf("%q: error at column %d, want %d: %v", tc.spec, se.Col, tc.col, se)
		}
		if !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%q: message %q does not contain %q", tc.spec, se.Msg, tc.msg)
		}
	}
}

func TestErrorString(t *testing.T) {
	_, err := ParseSlot("a & b")
	want := `column 3 of spec "a & b": '&' is reserved`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
