// Package jsjson writes and reads JSON as JavaScript does: the bytes of
// JSON.stringify (which escapes less than encoding/json), its tag-safe
// form, conversation text decoded as Buffer.toString and JSON.parse leave
// it (WTF-8, lone surrogates kept), and the arena such text is decoded
// into. It uses the standard library only.
package jsjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// JavaScript-compatible JSON.
//
// dsh is written in JavaScript, and the bytes it hashes, sizes and embeds
// are those of JSON.stringify. That function escapes only '"', '\', the
// short forms \b \f \n \r \t, other code points below U+0020 as \u00xx with
// lowercase hex, and lone surrogates. Go's encoding/json also escapes '<',
// '>', '&' (unless told not to), U+2028 and U+2029, and writes invalid UTF-8
// as \ufffd; the functions here undo those differences.
//
// A Go string may hold bytes that are not UTF-8, and a JavaScript string
// cannot. Each such byte is read as U+FFFD (what encoding/json's decoder,
// a range loop and EncodeSegment do) and written as the character U+FFFD
// itself, which JSON.stringify does not escape. Escaped lone surrogates in
// JSON that reaches Marshal through a json.Marshaler are read as U+FFFD
// too, as encoding/json reads them.

const (
	// hexLower are the digits of a \u escape; JSON.stringify writes them
	// lowercase.
	hexLower = "0123456789abcdef"
	// tagSafeLess is how a tag-safe serialisation writes '<', so that no
	// "</tag>" inside a string can close the element that embeds the JSON.
	tagSafeLess = `\u003c`
	// unicodeEscapeLen is the length of a \uXXXX escape.
	unicodeEscapeLen = 6
	// indentUnit is the indentation of MarshalIndent, as in
	// JSON.stringify(v, null, 2).
	indentUnit = "  "
)

// AppendString appends s as JavaScript's JSON.stringify(s) writes it,
// quotes included, and returns the extended buffer. Invalid UTF-8 bytes are
// written as U+FFFD, one each. s is read as UTF-8: the WTF-8 form of a lone
// surrogate (ED A0..BF xx) is three invalid bytes here, where AppendText,
// which writes conversation text decoded into WTF-8, writes the escape
// \udxxx; TestAppendString and TestAppendTextWritesLoneSurrogates show
// both. The server's appendJSONString writes encoding/json's bytes instead,
// for the reason its doc comment gives.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false, false) }

// appendString is JSON.stringify(s), quotes included: s read as WTF-8 (a
// lone surrogate's three bytes written as its \udxxx escape) or as UTF-8
// (those bytes, like any invalid byte, written as U+FFFD each), with
// every '<' as \u003c when tagSafe.
func appendString(dst []byte, s string, wtf8, tagSafe bool) []byte {
	plain := plainTable(tagSafe)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendRune(dst, rune(c), tagSafe)
			i++
			start = i
			continue
		}
		if r, ok := surrogateAt(s, i); wtf8 && ok {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', hexLower[r>>12], hexLower[r>>8&0xF], hexLower[r>>4&0xF], hexLower[r&0xF])
			i += 3
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendRune appends one code point as JSON.stringify writes it.
func appendRune(dst []byte, r rune, tagSafe bool) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '<':
		if tagSafe {
			return append(dst, tagSafeLess...)
		}
		return append(dst, '<')
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexLower[r>>4], hexLower[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// runeLen is len(appendRune(nil, r, tagSafe)).
func runeLen(r rune, tagSafe bool) int {
	switch r {
	case '"', '\\', '\b', '\f', '\n', '\r', '\t':
		return 2
	case '<':
		if tagSafe {
			return len(tagSafeLess)
		}
		return 1
	}
	if r < 0x20 {
		return unicodeEscapeLen
	}
	return utf8.RuneLen(r)
}

// Marshal returns the JSON encoding of v as encoding/json produces it
// (object keys in struct field order, map keys sorted), with every string,
// keys included, rewritten the way JSON.stringify writes it. Numbers stay
// encoding/json's: a float64 gets the shortest form JavaScript also prints,
// a json.Number or json.RawMessage number is copied as written.
func Marshal(v any) ([]byte, error) {
	raw, err := marshalGo(v)
	if err != nil {
		return nil, err
	}
	return rewriteJSON(make([]byte, 0, len(raw)), raw, false), nil
}

// MarshalTagSafe is Marshal with every '<' written as \u003c (six bytes),
// the tag-safe serialisation of SPEC §2.3.4: the result can sit between
// "<referenced-sessions>" tags without any string closing them.
func MarshalTagSafe(v any) ([]byte, error) {
	raw, err := marshalGo(v)
	if err != nil {
		return nil, err
	}
	return rewriteJSON(make([]byte, 0, len(raw)), raw, true), nil
}

// MarshalIndent is Marshal laid out like JSON.stringify(v, null, 2):
// two spaces per level, "key": value, empty arrays and objects kept as []
// and {}.
func MarshalIndent(v any) ([]byte, error) {
	compact, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(compact) * 2)
	if err := json.Indent(&out, compact, "", indentUnit); err != nil {
		return nil, fmt.Errorf("indenting JSON: %w", err)
	}
	return out.Bytes(), nil
}

// marshalGo runs encoding/json. Its HTML escapes (\u003c, \u003e,
// \u0026) are undone or kept by the rewrite like any other escape;
// json.Marshal is used rather than an Encoder with HTML escaping off because
// it allocates its result once instead of growing a buffer, which matters
// for megabyte snapshots.
func marshalGo(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	return raw, nil
}

// rewriteJSON copies the valid, compact JSON src to dst and rewrites every
// string token as JSON.stringify would write the string it denotes. Run on
// json.Marshal output the result is never longer than src unless a
// json.RawMessage holds invalid UTF-8 (one byte becomes U+FFFD, three), so
// callers size dst as len(src).
func rewriteJSON(dst, src []byte, tagSafe bool) []byte {
	for i := 0; i < len(src); {
		q := bytes.IndexByte(src[i:], '"')
		if q < 0 {
			return append(dst, src[i:]...)
		}
		dst = append(dst, src[i:i+q+1]...)
		var n int
		dst, n = rewriteStringBody(dst, src[i+q+1:], tagSafe)
		i += q + 1 + n
	}
	return dst
}

// plainTables[tagSafe][c] is true for the bytes a string body keeps as
// they are: printable ASCII except '"', '\' and, when tag-safe, '<'.
// Ordinary text costs one lookup per byte. (Testing eight bytes at a time
// measured no faster on conversation text, where a newline, quote or tab
// comes every few dozen bytes.)
var plainTables = func() (t [2][256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[0][c] = c != '"' && c != '\\'
		t[1][c] = t[0][c] && c != '<'
	}
	return t
}()

// plainTable returns the table of plainTables for tagSafe.
func plainTable(tagSafe bool) *[256]bool {
	if tagSafe {
		return &plainTables[1]
	}
	return &plainTables[0]
}

// nextNotPlain returns the index of the first byte from i on that is not
// plain (see plainTables), or len(src).
func nextNotPlain(src []byte, i int, tagSafe bool) int {
	plain := plainTable(tagSafe)
	for i < len(src) && plain[src[i]] {
		i++
	}
	return i
}

// rewriteStringBody rewrites the body of one JSON string token that starts
// at src[0] (after its opening quote). It appends the JavaScript form of the
// body and the closing quote to dst, and returns how many bytes of src it
// consumed, closing quote included.
func rewriteStringBody(dst, src []byte, tagSafe bool) ([]byte, int) {
	start := 0
	i := 0
	for {
		if i = nextNotPlain(src, i, tagSafe); i >= len(src) {
			break
		}
		switch c := src[i]; {
		case c == '"':
			dst = append(dst, src[start:i]...)
			return append(dst, '"'), i + 1
		case c == '\\':
			dst = append(dst, src[start:i]...)
			r, n := decodeEscape(src[i:])
			dst = appendRune(dst, r, tagSafe)
			i += n
			start = i
		case c < utf8.RuneSelf:
			// '<' when tag-safe, or a control character, which is not valid
			// inside a JSON string: encoding/json never emits one, but
			// escaping it keeps the output valid whatever happens.
			dst = append(dst, src[start:i]...)
			dst = appendRune(dst, rune(c), tagSafe)
			i++
			start = i
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, src[start:i]...)
				dst = utf8.AppendRune(dst, utf8.RuneError)
				i++
				start = i
				continue
			}
			i += size
		}
	}
	// An unterminated string cannot come from encoding/json; copy it as is.
	return append(dst, src[start:]...), len(src)
}

// decodeEscape reads the escape at src[0] ('\') of a valid JSON string and
// returns the code point it denotes and its length. A surrogate pair
// written as two \u escapes is one code point; a lone surrogate is U+FFFD,
// as encoding/json reads it.
func decodeEscape(src []byte) (rune, int) {
	if len(src) < 2 {
		return utf8.RuneError, len(src)
	}
	switch src[1] {
	case '"', '\\', '/':
		return rune(src[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := ParseHex4(src[2:])
		if !ok {
			return utf8.RuneError, 2
		}
		if !utf16.IsSurrogate(r) {
			return r, unicodeEscapeLen
		}
		if r < 0xDC00 && len(src) >= 2*unicodeEscapeLen && src[6] == '\\' && src[7] == 'u' {
			if lo, ok := ParseHex4(src[8:]); ok {
				if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
					return pair, 2 * unicodeEscapeLen
				}
			}
		}
		return utf8.RuneError, unicodeEscapeLen
	}
	return utf8.RuneError, 2
}

// ParseHex4 reads four hex digits of either case.
func ParseHex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
