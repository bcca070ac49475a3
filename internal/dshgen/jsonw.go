package dshgen

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// obj is a JSON object whose keys keep the order dsh writes them in.
type obj []kv

// kv is one member of an obj.
type kv struct {
	k string
	v any
}

// with returns o with one more member.
func (o obj) with(k string, v any) obj { return append(o, kv{k, v}) }

// appendJSON appends the JSON text of v. It writes strings the way
// JavaScript's JSON.stringify does (dsh is a JavaScript program): only `"`,
// `\`, and control characters are escaped; `<`, `>` and `&` are not.
// Invalid UTF-8 is written as U+FFFD, one per invalid byte, like a lone
// surrogate would be in a well-formed file. Values of unsupported types
// panic: they are programming errors inside this package.
func appendJSON(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return appendJSString(dst, x)
	case bool:
		return strconv.AppendBool(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case obj:
		dst = append(dst, '{')
		for i, m := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSString(dst, m.k)
			dst = append(dst, ':')
			dst = appendJSON(dst, m.v)
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case []int64:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, e, 10)
		}
		return append(dst, ']')
	case []int:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(e), 10)
		}
		return append(dst, ']')
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSString(dst, e)
		}
		return append(dst, ']')
	default:
		panic(fmt.Sprintf("dshgen: cannot write %T as JSON", v))
	}
}

// hexDigits are the lowercase digits JSON.stringify uses in \u escapes.
const hexDigits = "0123456789abcdef"

// appendJSString appends s as a JSON string literal, escaped as
// JSON.stringify escapes it.
func appendJSString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// sanitizeText is the text a JSON reader gets back after appendJSString
// wrote s: invalid bytes become U+FFFD, one each.
func sanitizeText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(out)
}
