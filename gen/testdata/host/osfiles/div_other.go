//go:build !linux

package osfiles

func divisor() float32 { return 2.0 }
