//go:build !linux

package osconst

// Width is 8 elsewhere.
const Width = 8
