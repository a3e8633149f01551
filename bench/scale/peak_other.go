//go:build !amd64

package main

// peakLoops: the peak loops are amd64 assembly only.
func peakLoops() []peakLoop { return nil }
