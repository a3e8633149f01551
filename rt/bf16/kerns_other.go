//go:build !(amd64 && gc && !purego)

package bf16

// kernBF16s is empty in this build (no assembly).
var kernBF16s [15]func(kp int, a, b *uint32, c *float32, ldc int, load bool)

// kernF32x512s is empty in this build (no assembly).
var kernF32x512s [15]func(kp int, a, b *float32, c *float32, ldc int, load bool)

// kernF32x2s is empty in this build (no assembly).
var kernF32x2s [7]func(kp int, a, b *float32, c *float32, ldc int, load bool)

// kernBF16ps is empty in this build (no assembly).
var kernBF16ps [15]func(np, kp int, a, b *uint32, c *float32, ldc int, load bool)

// kernBF16n16s is empty in this build (no assembly).
var kernBF16n16s [15]func(kp int, a, b *uint32, c *float32, ldc int, load bool)

func kernBF16aRows(int, int, *[3]int, *uint16, int, *uint32, *float32, int, bool) {
	panic("bf16: no assembly in this build")
}

func kernBF16n16aRows(int, int, *[3]int, *uint16, int, *uint32, *float32, int, bool) {
	panic("bf16: no assembly in this build")
}
