//go:build !(amd64 && gc && !purego)

package wino

// maxRows and maxRows2 are unused without the assembly kernels.
var (
	maxRows  = [5]int{0, 8, 8, 8, 6}
	maxRows2 = [3]int{0, 8, 6}
)

func bestTier() int { return tierGo }

func inputTiles(*float32, *float32, int, int, int, int) { panic("wino: no assembly in this build") }

func outputTiles(*float32, *float32, int, int, int, int, bool) {
	panic("wino: no assembly in this build")
}

func mulKernel(int, int, *float32, *float32, *float32, int, int, int, int, int, int, int, int, bool) {
	panic("wino: no assembly in this build")
}

func gradTiles(*float32, *float32, int, int, int, int, int) { panic("wino: no assembly in this build") }

func inputTiles2(*float32, *float32, int, int, int, int) { panic("wino: no assembly in this build") }

func outputTiles2(*float32, *float32, int, int, int, int, bool) {
	panic("wino: no assembly in this build")
}

func gradTiles2(*float32, *float32, int, int, int, int, int) {
	panic("wino: no assembly in this build")
}

func mulKernel2(int, int, *float32, *float32, *float32, int, int, int, int, int, int, int, int, bool) {
	panic("wino: no assembly in this build")
}
