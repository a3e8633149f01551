package osfiles

// Lines is declared on Linux only.
const Lines = 3

func divisor() float32 { return 2 }
