package layout

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Path encodings of the session store (SPEC §1.1).
//
// dsh computes both encodings over the UTF-16 code units of a JavaScript
// string. A Go string is read as UTF-8; every byte that is not part of a
// valid UTF-8 sequence counts as U+FFFD, exactly as a range loop and
// encoding/json's decoder read it. An astral character is two code units and
// so becomes two escapes.

// NoCwdDir is the directory that holds the sessions that have no cwd.
const NoCwdDir = "_no-cwd"

const (
	// segmentEscape starts a four-digit escape of one UTF-16 code unit.
	segmentEscape = '~'
	// escapeLen is the length of one escape: the tilde and four hex digits.
	escapeLen = 5
	// projectKeyMaxUnits is how many code units of the slug dsh keeps; with
	// the "--" wrapping on both sides the name stays within the 255-byte
	// file-name limit of common file systems.
	projectKeyMaxUnits = 251
	// projectKeyRoot names the project directory of a cwd whose slug is empty
	// (for example "/").
	projectKeyRoot = "root"
	// projectKeyWrap surrounds every project key.
	projectKeyWrap = "--"
	// upperHex are the digits of an escape; dsh writes them uppercase.
	upperHex = "0123456789ABCDEF"
)

// isSafeUnit reports whether a UTF-16 code unit is copied unchanged into a
// segment or slug: [A-Za-z0-9._-]. The tilde is never safe.
func isSafeUnit(u uint16) bool {
	return u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9' ||
		u == '.' || u == '_' || u == '-'
}

// isSeparatorUnit reports whether a code unit separates path components in
// a cwd: '/', '\' and ':'.
func isSeparatorUnit(u uint16) bool {
	return u == '/' || u == '\\' || u == ':'
}

// appendEscape appends "~XXXX" for one code unit.
func appendEscape(dst []byte, u uint16) []byte {
	return append(dst, segmentEscape,
		upperHex[u>>12&0xF], upperHex[u>>8&0xF], upperHex[u>>4&0xF], upperHex[u&0xF])
}

// forEachUnit calls fn with every UTF-16 code unit of s, reading each
// invalid UTF-8 byte as U+FFFD.
func forEachUnit(s string, fn func(u uint16)) {
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			fn(uint16(hi))
			fn(uint16(lo))
			continue
		}
		fn(uint16(r))
	}
}

// EncodeSegment returns the directory name dsh gives the session id (SPEC
// §1.1): "." and ".." are escaped whole, otherwise each UTF-16 code unit in
// [A-Za-z0-9._-] is copied and every other unit becomes "~" and four
// uppercase hex digits. Invalid UTF-8 bytes are read as U+FFFD. The empty id
// encodes to the empty string, which names no directory.
func EncodeSegment(id string) string {
	switch id {
	case ".":
		return "~002E"
	case "..":
		return "~002E~002E"
	}
	safe := true
	for i := 0; i < len(id); i++ {
		if !isSafeUnit(uint16(id[i])) {
			safe = false
			break
		}
	}
	if safe {
		return id
	}
	buf := make([]byte, 0, len(id)+len(id)/2)
	forEachUnit(id, func(u uint16) {
		if isSafeUnit(u) {
			buf = append(buf, byte(u))
			return
		}
		buf = appendEscape(buf, u)
	})
	return string(buf)
}

// DecodeSegment is the inverse of EncodeSegment. It accepts only the
// canonical encoding of an id: an escape must be "~" and four uppercase hex
// digits, must not stand for a unit that is copied unescaped (except the
// whole-name forms of "." and ".."), surrogate escapes must pair up, and
// the name must not be empty, "." or "..".
func DecodeSegment(seg string) (string, error) {
	if seg == "" {
		return "", fmt.Errorf("decoding segment: empty name")
	}
	units := make([]uint16, 0, len(seg))
	for i := 0; i < len(seg); {
		c := seg[i]
		if c != segmentEscape {
			if !isSafeUnit(uint16(c)) {
				r, _ := utf8.DecodeRuneInString(seg[i:])
				return "", fmt.Errorf("decoding segment %q: byte %d: %q must be escaped", seg, i, r)
			}
			units = append(units, uint16(c))
			i++
			continue
		}
		u, ok := parseEscape(seg[i:])
		if !ok {
			return "", fmt.Errorf("decoding segment %q: byte %d: malformed escape, want ~ and four uppercase hex digits", seg, i)
		}
		units = append(units, u)
		i += escapeLen
	}
	id, err := unitsToString(units)
	if err != nil {
		return "", fmt.Errorf("decoding segment %q: %w", seg, err)
	}
	if EncodeSegment(id) != seg {
		return "", fmt.Errorf("decoding segment %q: not canonical, %q encodes to %q", seg, id, EncodeSegment(id))
	}
	return id, nil
}

// parseEscape reads "~XXXX" with uppercase hex digits at the start of s.
func parseEscape(s string) (uint16, bool) {
	if len(s) < escapeLen || s[0] != segmentEscape {
		return 0, false
	}
	var u uint16
	for i := 1; i < escapeLen; i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(d)
	}
	return u, true
}

// unitsToString turns UTF-16 code units into UTF-8, refusing lone
// surrogates, which a Go string cannot hold.
func unitsToString(units []uint16) (string, error) {
	buf := make([]byte, 0, len(units))
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)):
			if u >= 0xDC00 || i+1 == len(units) {
				return "", fmt.Errorf("unit %d: lone surrogate %04X", i, u)
			}
			r := utf16.DecodeRune(rune(u), rune(units[i+1]))
			if r == utf8.RuneError {
				return "", fmt.Errorf("unit %d: lone surrogate %04X", i, u)
			}
			buf = utf8.AppendRune(buf, r)
			i++
		default:
			buf = utf8.AppendRune(buf, rune(u))
		}
	}
	return string(buf), nil
}

// ProjectKey returns the project directory name of a cwd, wrapped as
// "--slug--" (SPEC §1.1): over UTF-16 code units, each run of '/', '\' and
// ':' becomes one '-', units in [A-Za-z0-9._-] are copied, other units
// become "~XXXX"; leading '-' are stripped, an empty slug becomes "root",
// and the slug keeps at most its first 251 units. Invalid UTF-8 bytes are
// read as U+FFFD.
func ProjectKey(cwd string) string {
	slug := make([]byte, 0, len(cwd)+2*len(projectKeyWrap))
	slug = append(slug, projectKeyWrap...)
	inSeparators := false
	forEachUnit(cwd, func(u uint16) {
		if isSeparatorUnit(u) {
			if !inSeparators {
				slug = append(slug, '-')
			}
			inSeparators = true
			return
		}
		inSeparators = false
		if isSafeUnit(u) {
			slug = append(slug, byte(u))
			return
		}
		slug = appendEscape(slug, u)
	})
	body := slug[len(projectKeyWrap):]
	for len(body) > 0 && body[0] == '-' {
		body = body[1:]
	}
	if len(body) == 0 {
		return projectKeyWrap + projectKeyRoot + projectKeyWrap
	}
	// The slug is ASCII, so code units and bytes coincide.
	if len(body) > projectKeyMaxUnits {
		body = body[:projectKeyMaxUnits]
	}
	return projectKeyWrap + string(body) + projectKeyWrap
}

// ProjectDir returns the directory under the sessions root that holds the
// sessions of cwd: ProjectKey(cwd), or NoCwdDir when the session has no cwd.
func ProjectDir(cwd string, hasCwd bool) string {
	if !hasCwd {
		return NoCwdDir
	}
	return ProjectKey(cwd)
}
