package spec

import (
	"strings"
	"testing"
)

// digestExamples are the 41 example specs of the digest's §1.6 table (some
// rows hold several specs), with their expected parse in dumpEinsum
// notation. Where the table's prose disagrees with OCANNL's lexer the code
// wins: in "b00c" the digit run "00" is one fixed index 0.
var digestExamples = []struct {
	n    int
	spec string
	want string
}{
	{1, "ij;jk=>ik", "o[i j] ; o[j k] => o[i k]"},
	{2, "m n; n p => m p", "o[m n] ; o[n p] => o[m p]"},
	{3, "a, b; b, c => a, c", "o[a b] ; o[b c] => o[a c]"},
	{4, "...|ik; ...|kj => ...|ij",
		"b[...(batch)] o[i k] ; b[...(batch)] o[k j] => b[...(batch)] o[i j]"},
	{5, "... | ..k..->..i..; ... | ..j..->..k.. => ... | ..j..->..i..",
		"b[...(batch)] i[..k..] o[..i..] ; b[...(batch)] i[..j..] o[..k..] => b[...(batch)] i[..j..] o[..i..]"},
	{6, "a..s..;..s..b=>ab", "o[a ..s..] ; o[..s.. b] => o[a b]"},
	{6, "a, ..r..; ..r.., b => a, b", "o[a ..r..] ; o[..r.. b] => o[a b]"},
	{7, "i; i o => o", "o[i] ; o[i o] => o[o]"},
	{8, "i; j => i->j", "o[i] ; o[j] => i[i] o[j]"},
	{9, "i|j->k; l|m->n => il|jm->kn",
		"b[i] i[j] o[k] ; b[l] i[m] o[n] => b[i l] i[j m] o[k n]"},
	{10, "b|i->o => o|b->i", "b[b] i[i] o[o] => b[o] i[b] o[i]"},
	{11, "ab|cd->ef => cf|ae->db", "b[a b] i[c d] o[e f] => b[c f] i[a e] o[d b]"},
	{12, "b|i->o => b|i", "b[b] i[i] o[o] => b[b] o[i]"},
	{13, "ab|cd->ef => c|a->d", "b[a b] i[c d] o[e f] => b[c] i[a] o[d]"},
	{14, "...|...->... => 0", "b[...(batch)] i[...(input)] o[...(output)] => o[#0]"},
	{15, "...|... => 0", "b[...(batch)] o[...(output)] => o[#0]"},
	{16, "...|...->... => ...|...->0",
		"b[...(batch)] i[...(input)] o[...(output)] => b[...(batch)] i[...(input)] o[#0]"},
	{17, "...|1->... => ...|...", "b[...(batch)] i[#1] o[...(output)] => b[...(batch)] o[...(output)]"},
	{18, "2..v..|... => ..v..", "b[#2 ..v..] o[...(output)] => o[..v..]"},
	{19, "i=>ii", "o[i] => o[i i]"},
	{20, "i=>i0", "o[i] => o[i #0]"},
	{21, "ij=>i1j", "o[i j] => o[i #1 j]"},
	{22, "...|... => ...|...2", "b[...(batch)] o[...(output)] => b[...(batch)] o[...(output) #2]"},
	{23, "ijk => kji", "o[i j k] => o[k j i]"},
	{24, "..v..|...ijk => ..v..kji", "b[..v..] o[...(output) i j k] => o[..v.. k j i]"},
	{25, "i->...o => ...io", "i[i] o[...(output) o] => o[...(output) i o]"},
	{26, "...|i->1; ...|j...->i => ...|ij",
		"b[...(batch)] i[i] o[#1] ; b[...(batch)] i[j ...(input)] o[i] => b[...(batch)] o[i j]"},
	{27, "i->1; ij...->0 => ...->ji", "i[i] o[#1] ; i[i j ...(input)] o[#0] => i[...(input)] o[j i]"},
	{28, "bhwc => b00c", "o[b h w c] => o[b #0 c]"},
	{29, "... | ..d.. => ... | 0", "b[...(batch)] o[..d..] => b[...(batch)] o[#0]"},
	{30, "... s | h d; ... t | h d => ... s | t -> h",
		"b[...(batch) s] o[h d] ; b[...(batch) t] o[h d] => b[...(batch) s] i[t] o[h]"},
	{31, "... s | t -> h; ... t | h e => ... s | h e",
		"b[...(batch) s] i[t] o[h] ; b[...(batch) t] o[h e] => b[...(batch) s] o[h e]"},
	// 32 as written uses ppx-spliced identifier strides (an error, see
	// TestParseErrors); this is the spliced form with a valid marker.
	{32, "... | 2*oh<+kh, 2*ow<+kw, ..ic..; kh, kw, ..ic.. -> ..oc.. => ... | oh, ow, ..oc..",
		"b[...(batch)] o[A(2*oh+0 <+ 1*kh) A(2*ow+0 <+ 1*kw) ..ic..] ; i[kh kw ..ic..] o[..oc..] => b[...(batch)] o[oh ow ..oc..]"},
	{33, "...|2*oh<+wh, 2*ow<+ww, ..c..; wh, ww => ...|oh, ow, ..c..",
		"b[...(batch)] o[A(2*oh+0 <+ 1*wh) A(2*ow+0 <+ 1*ww) ..c..] ; o[wh ww] => b[...(batch)] o[oh ow ..c..]"},
	{34, "oh=+wh, ow=+ww; wh, ww => oh, ow",
		"o[A(1*oh+0 =+ 1*wh) A(1*ow+0 =+ 1*ww)] ; o[wh ww] => o[oh ow]"},
	{35, "o<+k; k => o", "o[A(1*o+0 <+ 1*k)] ; o[k] => o[o]"},
	{36, "... | ... -> ..., 2*i + 1 => ... | ... -> ..., i",
		"b[...(batch)] i[...(input)] o[...(output) A(2*i+1)] => b[...(batch)] i[...(input)] o[...(output) i]"},
	{37, "a; b => a^b", "o[a] ; o[b] => o[C[a b]]"},
	{37, "a; b; c => a^b^c", "o[a] ; o[b] ; o[c] => o[C[a b c]]"},
	{38, "a^b => a", "o[C[a b]] => o[a]"},
	{38, "a^b => b", "o[C[a b]] => o[b]"},
	{38, "a => a^b", "o[a] => o[C[a b]]"},
	{38, "b => a^b", "o[b] => o[C[a b]]"},
	{38, "a^b^c => b", "o[C[a b c]] => o[b]"},
	{39, "x, ...; y, ...; z, ... => x^y^z, ...",
		"o[x ...(output)] ; o[y ...(output)] ; o[z ...(output)] => o[C[x y z] ...(output)]"},
	{40, "...|...->... => ...|...->0,...",
		"b[...(batch)] i[...(input)] o[...(output)] => b[...(batch)] i[...(input)] o[#0 ...(output)]"},
	{40, "...|...-> bt0,...; ...|...-> bt1,... => ...|...-> bt0^bt1,...",
		"b[...(batch)] i[...(input)] o[bt0 ...(output)] ; b[...(batch)] i[...(input)] o[bt1 ...(output)] => b[...(batch)] i[...(input)] o[C[bt0 bt1] ...(output)]"},
	{41, "ij;jk;km=>im", "o[i j] ; o[j k] ; o[k m] => o[i m]"},
}

func TestDigestExamples(t *testing.T) {
	seen := map[int]bool{}
	for _, tc := range digestExamples {
		seen[tc.n] = true
		e, err := ParseEinsum(tc.spec)
		if err != nil {
			t.Errorf("#%d %q: %v", tc.n, tc.spec, err)
			continue
		}
		if got := dumpEinsum(e); got != tc.want {
			t.Errorf("#%d %q:\n got  %s\n want %s", tc.n, tc.spec, got, tc.want)
		}
		checkEinsumRoundTrip(t, tc.spec)
	}
	for n := 1; n <= 41; n++ {
		if !seen[n] {
			t.Errorf("digest example #%d is not covered", n)
		}
	}
}

// TestOCANNLParserTests covers test/einsum/test_einsum_parser.ml and
// test_conv_syntax.ml. Specs that OCANNL accepts with a plain '+' and
// leaves the padding mode to the ppx are errors here (TestParseErrors);
// their explicit-mode versions are checked instead.
func TestOCANNLParserTests(t *testing.T) {
	slots := []struct {
		spec string
		want string
	}{
		{"abc", "o[a b c]"},
		{"b|i->o", "b[b] i[i] o[o]"},
		{"a, b, c", "o[a b c]"},
		{"a, b,", "o[a b]"},
		{"2*o<+k", "o[A(2*o+0 <+ 1*k)]"},
		{"2*o=+3*k, x", "o[A(2*o+0 =+ 3*k) x]"},
		{"a, 2*b<+c", "o[a A(2*b+0 <+ 1*c)]"},
		{"i, o=+k, j", "o[i A(1*o+0 =+ 1*k) j]"},
		{"a<+bc", "o[A(1*a+0 <+ 1*bc)]"},
		{"i, j -> 2*i<+j", "i[i j] o[A(2*i+0 <+ 1*j)]"},
		{"batch|input->3*output<+1*kernel,", "b[batch] i[input] o[A(3*output+0 <+ 1*kernel)]"},
		{"2*output", "o[A(2*output+0)]"},
		{"3*i", "o[A(3*i+0)]"},
		{"input -> 2*output", "i[input] o[A(2*output+0)]"},
		{"regular, 3*strided", "o[regular A(3*strided+0)]"},
		{"a,b", "o[a b]"},
		{"a,2*b<+c", "o[a A(2*b+0 <+ 1*c)]"},
		{"ijk", "o[i j k]"},
		{"i->j", "i[i] o[j]"},
		{"...|ij", "b[...(batch)] o[i j]"},
		{"j...", "o[j ...(output)]"},
		{"...|j...->i", "b[...(batch)] i[j ...(input)] o[i]"},
		{"...|i->1", "b[...(batch)] i[i] o[#1]"},
		{"o=+k", "o[A(1*o+0 =+ 1*k)]"},
		{"o<+k", "o[A(1*o+0 <+ 1*k)]"},
		{"2*o=+k", "o[A(2*o+0 =+ 1*k)]"},
		{"o<+3*k", "o[A(1*o+0 <+ 3*k)]"},
		{"2*o=+3*k", "o[A(2*o+0 =+ 3*k)]"},
	}
	for _, tc := range slots {
		s, err := ParseSlot(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := dumpSlot(s); got != tc.want {
			t.Errorf("%q:\n got  %s\n want %s", tc.spec, got, tc.want)
		}
		checkSlotRoundTrip(t, tc.spec)
	}
}

// TestMoreConstructs covers the remaining forms of the brief: offsets in
// both positions, '_', integer concatenation components, whitespace inside
// affine axes, commas around row variables.
func TestMoreConstructs(t *testing.T) {
	slots := []struct {
		spec string
		want string
	}{
		{"2*x=+1+k", "o[A(2*x+1 =+ 1*k)]"},
		{"2*x=+k+1", "o[A(2*x+1 =+ 1*k)]"},
		{"2*x<+1+3*k", "o[A(2*x+1 <+ 3*k)]"},
		{"2*x<+3*k+1", "o[A(2*x+1 <+ 3*k)]"},
		{"x = + 4 + 2 * k", "o[A(1*x+4 =+ 2*k)]"},
		{"2*oh< + wh", "o[A(2*oh+0 <+ 1*wh)]"},
		{"2 * i + 1", "o[A(2*i+1)]"},
		{"i+1", "o[A(1*i+1)]"},
		{"1*i", "o[A(1*i+0)]"},
		{"1*i+0", "o[A(1*i+0)]"},
		{"o<+1*k", "o[A(1*o+0 <+ 1*k)]"},
		{"3^a", "o[C[3 a]]"},
		{"a^3", "o[C[a 3]]"},
		{"3^a^5", "o[C[3 a 5]]"},
		{"a ^ b ^ c, d", "o[C[a b c] d]"},
		{"_", "o[_]"},
		{"_, _", "o[_ _]"},
		{"a_b, _", "o[a_b _]"},
		{"_a", "o[_ a]"},
		{"..v.., a", "o[..v.. a]"},
		{"a ..v..", "o[a ..v..]"},
		{"a, ..v.. b,", "o[a ..v.. b]"},
		{"..v,.., a", "o[..v.. a]"},
		{"..long_name.., x", "o[..long_name.. x]"},
		{"...|..v.. -> h", "b[...(batch)] i[..v..] o[h]"},
		{"..batch..|...,", "b[..batch..] o[...(output)]"},
		{"12", "o[#12]"},
		{"a12", "o[a #12]"},
		{"a12,", "o[a12]"},
		{"0, 2147483648", "o[#0 #2147483648]"},
		{"007", "o[#7]"},
		{"|->", ""},
		{"->", ""},
		{"|", ""},
		{"a |", "b[a]"},
		{"-> a", "o[a]"},
		{"a ->", "i[a]"},
		{" \t\r\na\n", "o[a]"},
		{"a,b,c,", "o[a b c]"},
	}
	for _, tc := range slots {
		s, err := ParseSlot(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := dumpSlot(s); got != tc.want {
			t.Errorf("%q:\n got  %s\n want %s", tc.spec, got, tc.want)
		}
		checkSlotRoundTrip(t, tc.spec)
	}
	einsums := []struct {
		spec string
		want string
	}{
		{"=> a", " => o[a]"},
		{"a =>", "o[a] => "},
		{"; => ", " ;  => "},
		{"i => ", "o[i] => "},
		{"ab => ab", "o[a b] => o[a b]"},
		{"ab, => ab", "o[ab] => o[ab]"},
	}
	for _, tc := range einsums {
		e, err := ParseEinsum(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := dumpEinsum(e); got != tc.want {
			t.Errorf("%q:\n got  %q\n want %q", tc.spec, got, tc.want)
		}
		checkEinsumRoundTrip(t, tc.spec)
	}
}

func TestColumns(t *testing.T) {
	e, err := ParseEinsum("...|2*oh<+wh, 2^bc; x => ..v.., 0")
	if err != nil {
		t.Fatal(err)
	}
	r := e.RHS[0]
	if r.Col != 1 || r.Rows[Batch].VarCol != 1 {
		t.Errorf("slot/var col: %d %d", r.Col, r.Rows[Batch].VarCol)
	}
	a := r.Rows[Output].End[0]
	if a.Col != 5 || a.Affine.OverCol != 7 || a.Affine.Conv.KernelCol != 11 {
		t.Errorf("affine cols: %d %d %d", a.Col, a.Affine.OverCol, a.Affine.Conv.KernelCol)
	}
	c := r.Rows[Output].End[1]
	if c.Col != 15 || c.Concat[0].Col != 15 || c.Concat[1].Col != 17 {
		t.Errorf("concat cols: %d %+v", c.Col, c.Concat)
	}
	if e.RHS[1].Col != 21 || e.RHS[1].Rows[Output].End[0].Col != 21 {
		t.Errorf("second slot col: %d", e.RHS[1].Col)
	}
	l := e.LHS
	if l.Col != 26 || l.Rows[Output].VarCol != 26 || l.Rows[Output].End[0].Col != 33 {
		t.Errorf("lhs cols: %d %d %d", l.Col, l.Rows[Output].VarCol, l.Rows[Output].End[0].Col)
	}
	if !e.Multichar || e.Src == "" {
		t.Errorf("Multichar/Src not set")
	}
	s, err := ParseSlot("ab | c")
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows[Batch].End[1].Col != 2 || s.Rows[Output].End[0].Col != 6 {
		t.Errorf("single-char cols: %+v", s)
	}
}

func TestIsMultichar(t *testing.T) {
	cases := map[string]bool{
		"abc": false, "a,b,c": true, "2*a+b": true, "a+b": true, "a*b": true,
		"a^b": true, "a&b": true, "a|b->c": false, "...a..b": false,
		"a=>b": false, "a=b": true, "a=": true, "a<b": true, "": false,
		"a => b; c": false, "a= >b": true,
	}
	for s, want := range cases {
		if got := IsMultichar(s); got != want {
			t.Errorf("IsMultichar(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestPrinter(t *testing.T) {
	cases := []struct{ spec, want string }{
		{"b|i->o", "b | i -> o"},
		{"..v.., a", "..v.., a"},
		{"2*o<+3*k", "2*o<+3*k"},
		{"a^b^3", "a^b^3"},
		{"i+1", "1*i+1"},
		{"2*x=+k+1", "2*x=+1+k"},
		{"o<+1*k", "o<+k"},
		{"batch|input->output,", "batch | input -> output,"},
		{"..ab..,", "..ab..,"},
		{"ab,|c", "ab | c,"},
		{"ab|", "a, b |"},
		{"|->", "->"},
		{"_", "_"},
		{"12", "12"},
	}
	for _, tc := range cases {
		s, err := ParseSlot(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := s.String(); got != tc.want {
			t.Errorf("%q printed as %q, want %q", tc.spec, got, tc.want)
		}
	}
	ecases := []struct{ spec, want string }{
		{"b|i->o; i->h => b|h", "b | i -> o; i -> h => b | h"},
		{"ij;jk=>ik", "i, j; j, k => i, k"},
		{"ab, => x", "ab => x,"},
		{"x => ab,", "x => ab,"},
		{"ab, => ", "ab, =>"},
		{"=> a", "=> a"},
		{"...|...->... => 0", "... | ... -> ... => 0"},
	}
	for _, tc := range ecases {
		e, err := ParseEinsum(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("%q printed as %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// roundTripCorpus is a corpus of valid specs for the round-trip property.
func roundTripCorpus() []string {
	var out []string
	for _, tc := range digestExamples {
		out = append(out, tc.spec)
	}
	out = append(out,
		"b|i->o; i->h => b|h",
		"batch|input->3*output<+1*kernel,; kernel => batch|input->output",
		"...|...-> bt0,...; ...|...-> bt1,... => ...|...-> bt0^bt1,...",
		"3^a; a^3 => 3^a^5",
		"2*x=+1+3*k, _; k => x, _",
		"i+1 => i",
		"1*i => i",
		"ab, cd => cd, ab",
		"..long.., x; ..long.. => x",
		"a_b1 => a_b1",
		"0, 00, 2147483648 => 1",
		"=> a",
		"; => ",
		"a; b; c; d; e => a^b^c^d^e",
	)
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, src := range roundTripCorpus() {
		if err := checkEinsumRoundTrip(t, src); err != nil {
			t.Errorf("corpus spec %q does not parse: %v", src, err)
		}
		// Every slot of it also round-trips through ParseSlot.
		for _, part := range strings.FieldsFunc(strings.ReplaceAll(src, "=>", ";"), func(r rune) bool { return r == ';' }) {
			if strings.TrimSpace(part) == "" || IsMultichar(part) != IsMultichar(src) {
				continue
			}
			if err := checkSlotRoundTrip(t, part); err != nil {
				t.Errorf("corpus slot %q does not parse: %v", part, err)
			}
		}
	}
}
