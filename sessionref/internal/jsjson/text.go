package jsjson

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Conversation text as dsh holds it: a JavaScript string.
//
// dsh decodes a log line with Buffer.toString("utf8"), which replaces each
// maximal invalid UTF-8 subsequence by one U+FFFD (the WHATWG decoder), and
// then JSON.parse, which keeps an escaped lone surrogate ("\ud800") as a lone
// surrogate. Go strings from encoding/json lose both facts: one U+FFFD per
// invalid byte, and U+FFFD for a lone surrogate. Message text is therefore
// decoded here from the raw JSON token into WTF-8: well-formed text is
// UTF-8, and a lone surrogate is its three-byte generalised UTF-8 form
// (ED A0..BF 80..BF), which no UTF-8 text contains.
//
// WTF-8 keeps the byte counts dsh measures: Buffer.byteLength and
// TextEncoder count a lone surrogate as U+FFFD, three bytes, and so does
// len of its WTF-8 form. JSON.stringify writes a lone surrogate as the
// six-byte escape \udxxx (AppendText), and a head/tail cut decodes what it
// keeps with TextDecoder, so a kept lone surrogate becomes U+FFFD
// (WellFormed).

// DecodeText decodes a JSON string token (quotes included) of a log line
// as Buffer.toString then JSON.parse would, into WTF-8. It reports false when
// raw is not a string token.
func DecodeText(raw []byte) (string, bool) {
	body, ok := stringBody(raw)
	if !ok {
		return "", false
	}
	if utf8.Valid(body) {
		return unescapeString(body)
	}
	out, ok := appendTextRunes(make([]byte, 0, len(body)), body)
	if !ok {
		return "", false
	}
	return keepText(out, len(body)), true
}

// unescapeString is the text of body, valid UTF-8, as a string of its
// own: body itself when it has no escape, else its runs between escapes
// written into a builder of body's size, whose buffer is not zeroed first
// as a new slice's is.
func unescapeString(body []byte) (string, bool) {
	k := bytes.IndexByte(body, '\\')
	if k < 0 {
		return string(body), true
	}
	var b strings.Builder
	b.Grow(len(body))
	var esc [utf8.UTFMax]byte
	for i := 0; ; {
		b.Write(body[i : i+k])
		i += k
		if i == len(body) {
			break
		}
		out, next, ok := appendEscape(esc[:0], body, i)
		if !ok {
			return "", false
		}
		b.Write(out)
		i = next
		if k = bytes.IndexByte(body[i:], '\\'); k < 0 {
			k = len(body) - i
		}
	}
	if b.Len() < len(body)/2 {
		return strings.Clone(b.String()), true // see keepText
	}
	return b.String(), true
}

// keepText returns the decoded text out as a string. out is not used
// again, so the string takes its bytes without a copy, unless escapes made
// the text much shorter than the buffer of size bytes it lies in: then
// the text is copied and the buffer left to the collector.
func keepText(out []byte, size int) string {
	if len(out) < size/2 {
		return string(out)
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// DecodeTextRunes is DecodeText a rune at a time (appendTextRunes).
func DecodeTextRunes(raw []byte) (string, bool) {
	body, ok := stringBody(raw)
	if !ok {
		return "", false
	}
	out, ok := appendTextRunes(nil, body)
	return string(out), ok
}

// stringBody is the body of raw, a JSON string token, without its
// quotes; false when raw is not quoted.
func stringBody(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// DecodeTextInPlace is DecodeText writing the text over raw itself, so a
// long message costs no second copy of its bytes. The caller gives raw away:
// it must not read or write raw (or the buffer it lies in) afterwards,
// except through the string returned. When raw's bytes are not valid UTF-8
// (an invalid byte decodes to three bytes of U+FFFD, so the text could
// outgrow its token) the text is decoded into a new buffer instead.
func DecodeTextInPlace(raw []byte) (string, bool) {
	body, ok := stringBody(raw)
	if !ok {
		return "", false
	}
	if !utf8.Valid(body) {
		return DecodeText(raw)
	}
	// Every step reads its input before writing, and writes no more bytes
	// than it read (an escape decodes to fewer bytes than it spells, valid
	// UTF-8 to itself), so the output never overtakes the input.
	out, ok := appendUnescaped(body[:0:len(body)], body, true)
	if !ok {
		return "", false
	}
	return keepText(out, len(raw)), true
}

// appendTextRunes appends the decoded text of the string token body
// (quotes removed) to out, a rune at a time: how text of invalid UTF-8 is
// decoded (one U+FFFD per maximal subpart), and the reference the faster
// paths for valid UTF-8 are tested against.
func appendTextRunes(out, body []byte) ([]byte, bool) {
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			var ok bool
			if out, i, ok = appendEscape(out, body, i); !ok {
				return out, false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size <= 1 {
				out = append(out, "\uFFFD"...)
				i += maximalSubpart(body[i:])
				continue
			}
			out = append(out, body[i:i+size]...)
			i += size
		}
	}
	return out, true
}

// appendUnescaped is appendTextRunes for a body of valid UTF-8, which
// decodes to itself but for its escapes: the runs between them are copied
// whole. With inPlace, out is body[:0] (DecodeTextInPlace), and the run
// before the first escape is already where it belongs.
func appendUnescaped(out, body []byte, inPlace bool) ([]byte, bool) {
	for i := 0; ; {
		k := bytes.IndexByte(body[i:], '\\')
		if k < 0 {
			k = len(body) - i
		}
		if inPlace && len(out) == i {
			out = out[:i+k]
		} else {
			out = append(out, body[i:i+k]...)
		}
		i += k
		if i == len(body) {
			return out, true
		}
		var ok bool
		if out, i, ok = appendEscape(out, body, i); !ok {
			return out, false
		}
	}
}

// appendEscape appends the text of the escape at body[i] (a backslash) and
// returns the index after it; a high surrogate escape followed by a low
// one is one code point, a lone surrogate is kept (WTF-8). ok is false for
// an escape JSON does not have.
func appendEscape(out, body []byte, i int) (_ []byte, next int, ok bool) {
	if i+1 >= len(body) {
		return out, i, false
	}
	esc := body[i+1]
	i += 2
	switch esc {
	case '"', '\\', '/':
		out = append(out, esc)
	case 'b':
		out = append(out, '\b')
	case 'f':
		out = append(out, '\f')
	case 'n':
		out = append(out, '\n')
	case 'r':
		out = append(out, '\r')
	case 't':
		out = append(out, '\t')
	case 'u':
		r, ok := ParseHex4(body[i:])
		if !ok {
			return out, i, false
		}
		i += 4
		if r >= 0xD800 && r < 0xDC00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
			if lo, ok := ParseHex4(body[i+2:]); ok && lo >= 0xDC00 && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
		}
		out = appendWTF8(out, r)
	default:
		return out, i, false
	}
	return out, i, true
}

// appendWTF8 appends r, a surrogate code point included, in WTF-8.
func appendWTF8(dst []byte, r rune) []byte {
	if isSurrogate(r) {
		return append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
	return utf8.AppendRune(dst, r)
}

func isSurrogate(r rune) bool { return r >= 0xD800 && r < 0xE000 }

// maximalSubpart is the length of the maximal subpart of an ill-formed
// UTF-8 sequence at the start of b (Unicode §3.9, the WHATWG decoder): the
// bytes that begin a well-formed sequence but do not complete it, or one
// byte that can begin none. b must not start with a well-formed sequence.
func maximalSubpart(b []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// surrogateAt reports whether s[i:] starts with the WTF-8 form of a lone
// surrogate, and returns that surrogate.
func surrogateAt(s string, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2]&0xC0 == 0x80 {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

// AppendText appends JSON.stringify(s) of the WTF-8 string s, quotes
// included; with tagSafe every '<' is \u003c. A lone surrogate is written
// as \udxxx, as JSON.stringify does; other invalid bytes as U+FFFD.
func AppendText(dst []byte, s string, tagSafe bool) []byte {
	return appendString(dst, s, true, tagSafe)
}

// TextLen is len(AppendText(nil, s, tagSafe)) without building it.
func TextLen(s string, tagSafe bool) int {
	plain := plainTable(tagSafe)
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				n++
			} else {
				n += runeLen(rune(c), tagSafe)
			}
			i++
			continue
		}
		if _, ok := surrogateAt(s, i); ok {
			n += unicodeEscapeLen
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += utf8.RuneLen(utf8.RuneError)
		} else {
			n += size
		}
		i += size
	}
	return n
}

// WellFormed is s after TextEncoder and TextDecoder: each lone surrogate
// becomes U+FFFD, which has the same three-byte length.
func WellFormed(s string) string {
	if !strings.Contains(s, "\xed") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if _, ok := surrogateAt(s, i); ok {
			b[i], b[i+1], b[i+2] = 0xEF, 0xBF, 0xBD
			i += 2
		}
	}
	return string(b)
}

// Fragments splits the WTF-8 string s into pieces of at most n code
// points, a lone surrogate counting as one (the /[\s\S]{1,64}/gu of dsh's
// spill transcript). The empty string has no pieces.
func Fragments(s string, n int) []string {
	var out []string
	EachFragment(s, n, func(f string) { out = append(out, f) })
	return out
}

// EachFragment calls fn with each piece of Fragments(s, n), in order,
// without collecting them.
func EachFragment(s string, n int, fn func(string)) {
	count, start := 0, 0
	for i := 0; i < len(s); {
		if count == n {
			fn(s[start:i])
			start, count = i, 0
		}
		size := 3
		if _, ok := surrogateAt(s, i); !ok {
			_, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		count++
	}
	if start < len(s) {
		fn(s[start:])
	}
}
