//go:build !amd64

package recall

import "unsafe"

// spaceMasks64 is spaceMasksGo where no assembly does the job.
func spaceMasks64(p *byte, chunks int, out *uint64) bool {
	return spaceMasksGo(unsafe.Slice(p, 64*chunks), unsafe.Slice(out, 2*chunks))
}

// lowerASCII16 is lowerASCIIGo where no assembly does the job.
func lowerASCII16(dst, src *byte, blocks int) int {
	return lowerASCIIGo(unsafe.Slice(dst, 16*blocks), unsafe.Slice(src, 16*blocks))
}

// indexPair16 is indexPairGo where no assembly does the job.
func indexPair16(p *byte, blocks int, a, b int, ca, cb byte) int {
	return indexPairGo(unsafe.Slice(p, 16*blocks+max(a, b)), 16*blocks, a, b, ca, cb)
}
