//go:build !(amd64 && gc && !purego)

package bf16

func supported(t Tier) bool { return t == Go }

func allowed(Tier) bool { return true }

func cvtRow(*uint32, *float32, int) { panic("bf16: no assembly in this build") }

func cvtPairs16(*uint32, *float32, int, int) { panic("bf16: no assembly in this build") }

func cvtPairs32(*uint32, *float32, int, int) { panic("bf16: no assembly in this build") }

func cvtWindows(*uint32, int, *float32, int, int, int) { panic("bf16: no assembly in this build") }

// hasAsmPack: the AVX512_BF16 packing routines exist in this build.
const hasAsmPack = false

func cvtPairs16m(*uint32, int, *float32, int, int, int) { panic("bf16: no assembly in this build") }

func pairsH16(*uint32, *uint16, int, int) { panic("bf16: no assembly in this build") }

func pairsH32(*uint32, *uint16, int, int) { panic("bf16: no assembly in this build") }

func cvtN(*uint16, *float32, int) { panic("bf16: no assembly in this build") }

func transpose16(*uint32, int, *uint32, int, int) { panic("bf16: no assembly in this build") }

func copyRuns(*uint32, int, *uint16, int, int, *[4]int, int) {
	panic("bf16: no assembly in this build")
}

func cvtColumns16(*uint32, int, *float32, int, int) { panic("bf16: no assembly in this build") }

func cvtRows16(*uint32, int, *float32, int, int, int) { panic("bf16: no assembly in this build") }

func cvtRowsN(*uint16, int, *float32, int, int, int) { panic("bf16: no assembly in this build") }
