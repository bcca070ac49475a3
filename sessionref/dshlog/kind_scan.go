package dshlog

import (
	"bytes"
	"encoding/json"
)

// promptFast is promptOf without decoding the message's content: it walks
// the line's keys, skips every value but the data's source (and its
// message's), and decodes only that small object. A user message's text is
// most of its line (kilobytes), and decoding it for each session's first
// prompt was a fifth of a cold build's CPU on the 10,000-session bench
// store. ok is false when the line is not shaped as dsh writes it (a key
// with an escape or in another case, a value of an unexpected type): then
// promptOf decides. On valid JSON the two agree (FuzzPromptFast).
func promptFast(line []byte, v4 bool) (p Prompt, ok bool) {
	// A key read twice is left to promptOf: encoding/json decodes the
	// second value into what the first left (a plugin name survives a
	// second source without one).
	var src, msgSrc []byte // raw source values; nil: absent
	var datas, srcs, msgs, msgSrcs int
	i, ok := objectKeys(line, skipSpace(line, 0), func(key []byte, at int) (int, bool) {
		if string(key) != "data" {
			return skipValue(line, at)
		}
		if datas++; datas > 1 || at >= len(line) || line[at] != '{' {
			return 0, false
		}
		return objectKeys(line, at, func(key []byte, at int) (int, bool) {
			switch string(key) {
			case "source":
				end, ok := skipValue(line, at)
				if srcs++; !ok || srcs > 1 {
					return 0, false
				}
				src = line[at:end]
				return end, true
			case "message":
				if msgs++; msgs > 1 || at >= len(line) || line[at] != '{' {
					return 0, false // null or another type: promptOf decides
				}
				return objectKeys(line, at, func(key []byte, at int) (int, bool) {
					end, ok := skipValue(line, at)
					if !ok {
						return 0, false
					}
					if string(key) == "source" {
						if msgSrcs++; msgSrcs > 1 {
							return 0, false
						}
						msgSrc = line[at:end]
					}
					return end, true
				})
			}
			return skipValue(line, at)
		})
	})
	if !ok || skipSpace(line, i) != len(line) {
		return PromptNone, false
	}
	if msgs > 0 {
		src = msgSrc
	}
	kind, plugin := sourceUser, ""
	if v4 {
		kind = ""
	}
	if src != nil {
		if src[0] != '{' {
			return PromptNone, false
		}
		var s messageSource
		if json.Unmarshal(src, &s) != nil {
			return PromptNone, false
		}
		kind, plugin = s.Kind, s.Plugin
	}
	return promptFromSource(kind, plugin, v4), true
}

// objectKeys walks the object that starts at line[i] ('{'), calling value
// for each key with the offset of its value; value returns where the value
// ends. It returns the offset after the object. A key with an escape, or
// one that equals a key promptOf reads in another case (encoding/json
// matches keys without regard to case), is not walked: ok is false.
func objectKeys(line []byte, i int, value func(key []byte, at int) (int, bool)) (int, bool) {
	if i >= len(line) || line[i] != '{' {
		return 0, false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return 0, false
		}
		end := bytes.IndexByte(line[i+1:], '"')
		if end < 0 {
			return 0, false
		}
		key := line[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 || foldedReadKey(key) {
			return 0, false
		}
		i = skipSpace(line, i+2+end)
		if i >= len(line) || line[i] != ':' {
			return 0, false
		}
		var ok bool
		if i, ok = value(key, skipSpace(line, i+1)); !ok {
			return 0, false
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return 0, false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// foldedReadKey reports whether key is one of the keys promptOf's decoding
// reads, spelled in another case ("Data", "SOURCE").
func foldedReadKey(key []byte) bool {
	for _, k := range [...]string{"data", "source", "message", "kind", "plugin"} {
		if len(key) == len(k) && string(key) != k && bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// skipValue returns the offset just after the JSON value at line[i]. It
// checks the value's brackets and strings, not its every byte: the caller
// is told only where it ends.
func skipValue(line []byte, i int) (int, bool) {
	depth := 0
	for i < len(line) {
		switch c := line[i]; c {
		case '"':
			end, ok := skipString(line, i)
			if !ok {
				return 0, false
			}
			i = end
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return 0, false
			}
			depth--
			i++
		case ',', ':':
			if depth == 0 {
				return 0, false
			}
			i++
		default:
			// A number, a literal or white space.
			start := i
			for i < len(line) && !jsonDelimiter(line[i]) {
				i++
			}
			if depth == 0 {
				if len(bytes.TrimSpace(line[start:i])) == 0 {
					return 0, false
				}
				return i, true
			}
		}
		if depth == 0 {
			return i, true
		}
	}
	return 0, false
}

// jsonDelimiter reports whether c ends a number or a literal.
func jsonDelimiter(c byte) bool {
	switch c {
	case '"', '{', '}', '[', ']', ',', ':':
		return true
	}
	return false
}

// skipString returns the offset after the string that starts at line[i]
// ('"'): the next quote not escaped, found a block at a time.
func skipString(line []byte, i int) (int, bool) {
	for j := i + 1; ; {
		q := bytes.IndexByte(line[j:], '"')
		if q < 0 {
			return 0, false
		}
		j += q
		slashes := 0
		for k := j - 1; k > i && line[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 0 {
			return j + 1, true
		}
		j++
	}
}
