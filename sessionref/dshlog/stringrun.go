package dshlog

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// plainStringRun returns the index of the first byte of b at or after j
// that is a quote, a backslash or a control character (below 0x20), or
// len(b). It goes 16 bytes at a time (stringRun16: SSE2 on amd64), then
// eight (SWAR), then one: a JSON string of conversation text holds an
// escape every 150 bytes or so, and eight at a time this loop was a
// third of the CPU of reading and projecting a log.
func plainStringRun(b []byte, j int) int {
	if blocks := (len(b) - j) / 16; blocks > 0 {
		k := stringRun16(&b[j], blocks)
		if k < 16*blocks {
			return j + k
		}
		j += 16 * blocks
	}
	for j+8 <= len(b) {
		if m := stringStops8(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	for j < len(b) {
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 {
			return j
		}
		j++
	}
	return j
}

// stringStops8 marks the high bit of each byte of x that is a quote, a
// backslash or below 0x20, exactly up to the lowest mark: a byte of the
// mask is set where x^'"' or x^'\\' has a zero byte or x a byte below
// 0x20, and borrows only run upwards.
func stringStops8(x uint64) uint64 {
	q, s := x^swarQuote, x^swarBack
	return ((q-swarOnes)&^q | (s-swarOnes)&^s | (x-swarSpace)&^x) & swarHighs
}

// stringRun16Go is stringRun16 in Go, eight bytes at a time: the one of
// other processors (stringrun_other.go), and the reference the assembly
// is tested against.
func stringRun16Go(p *byte, blocks int) int {
	b := unsafe.Slice(p, 16*blocks)
	for j := 0; j < len(b); j += 8 {
		if m := stringStops8(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	return len(b)
}
