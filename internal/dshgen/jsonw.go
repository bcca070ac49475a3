package dshgen

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref"
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
// JavaScript's JSON.stringify does (dsh is a JavaScript program), with
// sessionref.AppendJSString, the escaper whose tests compare it with node:
// only `"`, `\`, and control characters are escaped; `<`, `>` and `&` are
// not. Invalid UTF-8 is written as U+FFFD, one per invalid byte, like a lone
// surrogate would be in a well-formed file. The logs are the reader's input,
// so sharing the escaper does not make a test check the code against itself:
// the reader decodes them with its own decoder. Values of unsupported types
// panic: they are programming errors inside this package.
func appendJSON(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return sessionref.AppendJSString(dst, x)
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
			dst = sessionref.AppendJSString(dst, m.k)
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
			dst = sessionref.AppendJSString(dst, e)
		}
		return append(dst, ']')
	default:
		panic(fmt.Sprintf("dshgen: cannot write %T as JSON", v))
	}
}

// sanitizeText is the text a JSON reader gets back after
// sessionref.AppendJSString wrote s: invalid bytes become U+FFFD, one each,
// as a conversion to runes reads them.
func sanitizeText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
