package recall

// The function below is written in assembly (ascii_amd64.s), with SSE2,
// which every amd64 processor has; ascii_other.go has it in Go.

// spaceMasks64 writes the masks of spaceMasks for chunks runs of 64
// bytes from p to out, and reports false at the first run holding a byte
// of 0x80 or more or a NUL. It takes a few instructions per 16 bytes,
// where spaceBits takes about twenty-five per eight.
//
//go:noescape
func spaceMasks64(p *byte, chunks int, out *uint64) bool
