package recall

import (
	"encoding/binary"
	"unsafe"
)

// Three passes over text are done 16 bytes at a time or more, by SSE2 on
// amd64 (ascii_amd64.s) and by the functions named ...Go below elsewhere:
// two over every byte of a build's text, the folding of ASCII
// (lowerASCII) and the white space the tokeniser splits it at
// (spaceMasks), and a search's for the term it checks in a block
// (indexPair, finder.go). BenchmarkBuildStageTokens of dshgen text, one
// core: 342 M instructions before spaceMasks, 278 M after (callgrind,
// -19%); BenchmarkBuildStageFold 0.38-0.47 CPU-s per GB before
// lowerASCII, 0.10-0.13 after.

// spaceMasks writes the white space of s, all of whose 64-byte runs it
// covers, to masks, two words per run: bit k of masks[2w] is set when
// s[64w+k] is ASCII white space (' ', '\t', '\n', '\v', '\f', '\r'), of
// masks[2w+1] when it is ' '. It reports false, with masks partly
// written, when s holds a byte that is not ASCII, or a NUL (which
// addASCII leaves to add, as it does the rest). len(s) is a multiple of
// 64 and masks holds 2*len(s)/64 words.
func spaceMasks(s []byte, masks []uint64) bool {
	chunks := len(s) / 64
	if chunks == 0 {
		return true
	}
	_ = masks[2*chunks-1]
	return spaceMasks64(&s[0], chunks, &masks[0])
}

// spaceMasks64Go is spaceMasks64 in Go, eight bytes at a time
// (spaceBits): the one of other processors (ascii_other.go), and the
// reference the assembly is tested against.
func spaceMasks64Go(p *byte, chunks int, out *uint64) bool {
	s, masks := unsafe.Slice(p, 64*chunks), unsafe.Slice(out, 2*chunks)
	for w := range chunks {
		var sp, one uint64
		for i := 0; i < 64; i += 8 {
			x := binary.LittleEndian.Uint64(s[64*w+i:])
			if (x-0x0101010101010101|x)&0x8080808080808080 != 0 {
				return false // a byte of 0x80 or more, or a NUL
			}
			all, blank := spaceBits(x)
			sp |= all << i
			one |= blank << i
		}
		masks[2*w], masks[2*w+1] = sp, one
	}
	return true
}

// maskRuns is how many runs of 64 bytes addASCII has spaceMasks read at
// a time: a few KB, so that a huge message needs no masks of its size.
const maskRuns = 64

// spaceBits returns the ASCII white space (' ', '\t', '\n', '\v', '\f',
// '\r') among the eight bytes of x, all below 0x80, as bit k for byte k,
// and the spaces (' ') alone.
func spaceBits(x uint64) (all, blank uint64) {
	const (
		ones  = 0x0101010101010101
		high  = 0x8080808080808080
		low7  = 0x7f7f7f7f7f7f7f7f
		space = 0x20 * ones
	)
	// No sum below carries into the next byte: every byte is below 0x80.
	t := x ^ space
	isSpace := ^(t + low7) & high                                      // t == 0
	inRange := (x + (0x80-0x09)*ones) &^ (x + (0x80-0x0e)*ones) & high // 0x09 <= b <= 0x0d
	m := isSpace | inRange
	// Gather the high bits: the bit of byte k lands on bit 56+k.
	const gather = 0x0102040810204080
	return (m >> 7) * gather >> 56, (isSpace >> 7) * gather >> 56
}

// tailMasks is spaceMasks of s, shorter than 64 bytes: the bits past its
// end are set in sp (white space) and clear in one (spaces).
func tailMasks(s []byte) (sp, one uint64, ascii bool) {
	for i, c := range s {
		if c >= 0x80 || c == 0 {
			return 0, 0, false
		}
		if byteClass[c] == classSpace {
			sp |= 1 << i
		}
		if c == ' ' {
			one |= 1 << i
		}
	}
	return sp | ^uint64(0)<<len(s), one, true
}

// lowerASCII copies the longest prefix of s that is ASCII, in runs of 16
// bytes, to dst with 'A' to 'Z' lowered, and returns its length: at most
// len(s) rounded down to 16, which dst has room for.
func lowerASCII(dst []byte, s string) int {
	blocks := len(s) / 16
	if blocks == 0 {
		return 0
	}
	_ = dst[16*blocks-1]
	return lowerASCII16(&dst[0], unsafe.StringData(s), blocks)
}

// lowerASCII16Go is lowerASCII16 in Go, eight bytes at a time
// (lowerASCII8): the one of other processors (ascii_other.go), and the
// reference the assembly is tested against.
func lowerASCII16Go(dst, src *byte, blocks int) int {
	d, s := unsafe.Slice(dst, 16*blocks), unsafe.Slice(src, 16*blocks)
	n := 0
	for ; n < len(s); n += 16 {
		x := binary.LittleEndian.Uint64(s[n:])
		y := binary.LittleEndian.Uint64(s[n+8:])
		if (x|y)&0x8080808080808080 != 0 {
			break
		}
		binary.LittleEndian.PutUint64(d[n:], lowerASCII8(x))
		binary.LittleEndian.PutUint64(d[n+8:], lowerASCII8(y))
	}
	return n
}

// indexPair returns the least i below places with s[i+a] == ca and
// s[i+b] == cb, checking places rounded down to a multiple of 16;
// covered is how many it checked (i is -1 when none matched there).
// places-1+max(a, b) is below len(s).
func indexPair(s string, places, a, b int, ca, cb byte) (i, covered int) {
	blocks := places / 16
	if blocks <= 0 {
		return -1, 0
	}
	_ = s[16*blocks-1+max(a, b)]
	return indexPair16(unsafe.StringData(s), blocks, a, b, ca, cb), 16 * blocks
}

// indexPair16Go is indexPair16 in Go, one place at a time: the one of
// other processors (ascii_other.go), and the reference the assembly is
// tested against.
func indexPair16Go(p *byte, blocks int, a, b int, ca, cb byte) int {
	s := unsafe.Slice(p, 16*blocks+max(a, b))
	for i := range 16 * blocks {
		if s[i+a] == ca && s[i+b] == cb {
			return i
		}
	}
	return -1
}
