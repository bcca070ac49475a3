package recall

// The functions below are written in assembly (ascii_amd64.s), with SSE2,
// which every amd64 processor has; ascii.go holds them in Go
// (spaceMasks64Go, lowerASCII16Go, indexPair16Go), which ascii_other.go
// calls on other processors.

// spaceMasks64 writes the masks of spaceMasks for chunks runs of 64
// bytes from p to out, and reports false at the first run holding a byte
// of 0x80 or more or a NUL. It takes a few instructions per 16 bytes,
// where spaceBits takes about twenty-five per eight.
//
//go:noescape
func spaceMasks64(p *byte, chunks int, out *uint64) bool

// lowerASCII16 copies blocks runs of 16 bytes from src to dst, 'A' to 'Z'
// lowered, up to the first run holding a byte of 0x80 or more, and
// returns the bytes copied.
//
//go:noescape
func lowerASCII16(dst, src *byte, blocks int) int

// indexPair16 returns the least i below 16*blocks with p[i+a] == ca and
// p[i+b] == cb, or -1, comparing 16 places at a time; it reads p up to
// 16*blocks-1+max(a, b).
//
//go:noescape
func indexPair16(p *byte, blocks int, a, b int, ca, cb byte) int
