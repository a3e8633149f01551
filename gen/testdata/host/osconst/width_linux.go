package osconst

// Width is 4 on Linux.
const Width = 4
