package gocode

import (
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// namer allocates the identifiers of one generated function: every name
// it hands out is unique within the function, so a hoisted temporary
// never shadows a parameter, a tensor or a loop variable.
type namer struct {
	used map[string]bool
	// next is, per base, the suffix fresh tries first: names are never
	// released, so the smallest free suffix of a base only grows, and
	// starting where the last search ended gives the same names without
	// rescanning base2, base3, ... (quadratic in a large model's loop
	// variables and temporaries).
	next map[string]int
}

func newNamer() *namer {
	n := &namer{used: map[string]bool{}, next: map[string]int{}}
	// The package the generated code may import, and the predeclared
	// identifiers it relies on, are never handed out.
	n.used["math"] = true
	for _, s := range types.Universe.Names() {
		n.used[s] = true
	}
	return n
}

// reserve marks name as taken (a parameter, the function's own name).
func (n *namer) reserve(name string) { n.used[name] = true }

// fresh returns base if it is free, else base2, base3, ...
func (n *namer) fresh(base string) string {
	if base == "" {
		base = "t"
	}
	if !n.used[base] && !token.IsKeyword(base) {
		n.used[base] = true
		return base
	}
	for i := max(2, n.next[base]); ; i++ {
		s := base + strconv.Itoa(i)
		if !n.used[s] {
			n.used[s] = true
			n.next[base] = i + 1
			return s
		}
	}
}

// goName turns a tensor name (`_h1.1`, `w1`) into an identifier base.
func goName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "t"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "t" + s
	}
	return s
}

// validIdent reports whether s can name a parameter or a function of a
// generated file: a Go identifier that is not a keyword, not the blank
// identifier, not predeclared (the generated code uses len, max, min,
// panic, float32, ...) and not "math" (the one package it may import).
func validIdent(s string) bool {
	if !token.IsIdentifier(s) || s == "_" || s == "math" {
		return false
	}
	return types.Universe.Lookup(s) == nil
}
