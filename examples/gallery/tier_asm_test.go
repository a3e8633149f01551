//go:build amd64 && gc && !purego

package main

// hasAsm: this build links the assembly kernels.
const hasAsm = true
