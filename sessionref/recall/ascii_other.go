//go:build !amd64

package recall

// Where no assembly does the job, the functions of ascii_amd64.s are
// those in Go of ascii.go.

func spaceMasks64(p *byte, chunks int, out *uint64) bool { return spaceMasks64Go(p, chunks, out) }

func lowerASCII16(dst, src *byte, blocks int) int { return lowerASCII16Go(dst, src, blocks) }

func indexPair16(p *byte, blocks int, a, b int, ca, cb byte) int {
	return indexPair16Go(p, blocks, a, b, ca, cb)
}
