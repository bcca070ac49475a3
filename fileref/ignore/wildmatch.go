package ignore

// This file is a faithful port of git's wildmatch.c (the matcher git uses for
// ignore patterns), so that corner cases such as "**" adjacency, bracket
// classes and escapes behave exactly as git applies them. It works on bytes,
// like git: multi-byte UTF-8 characters are matched byte by byte.

// wildResult mirrors git's WM_* return codes. The abort codes let a "*" stop
// retrying once the rest of the text cannot match anyway.
type wildResult int

const (
	wildMatch           wildResult = 0
	wildNoMatch         wildResult = 1
	wildAbortAll        wildResult = -1
	wildAbortToStarStar wildResult = -2
)

// wildPathname is git's WM_PATHNAME flag: "*" and "?" never match "/", and
// "**" is special only next to slashes.
const wildPathname = 1

// byteAt returns s[i], or 0 past the end; git's matcher relies on the NUL
// terminator, and file names never contain NUL.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isGlobSpecial reports whether c starts a wildcard construct in git's sense.
func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// wildmatch reports whether text matches pattern with git's semantics.
func wildmatch(pattern, text string, flags int) bool {
	return dowild(pattern, 0, text, 0, flags) == wildMatch
}

func dowild(pat string, p int, text string, t int, flags int) wildResult {
	patStart := 0
	for ; p < len(pat); t, p = t+1, p+1 {
		pCh := pat[p]
		tCh := byteAt(text, t)
		if tCh == 0 && pCh != '*' {
			return wildAbortAll
		}
		switch pCh {
		case '\\':
			// Literal match with the following character; a trailing
			// backslash compares against NUL and fails below.
			p++
			pCh = byteAt(pat, p)
			if tCh != pCh {
				return wildNoMatch
			}
			continue
		default:
			if tCh != pCh {
				return wildNoMatch
			}
			continue
		case '?':
			if flags&wildPathname != 0 && tCh == '/' {
				return wildNoMatch
			}
			continue
		case '*':
			var matchSlash bool
			p++
			if byteAt(pat, p) == '*' {
				prevP := p - 2
				for p++; byteAt(pat, p) == '*'; p++ {
				}
				if flags&wildPathname == 0 {
					// Without WM_PATHNAME, "**" is just "*".
					matchSlash = true
				} else if (prevP < patStart || pat[prevP] == '/') &&
					(byteAt(pat, p) == 0 || byteAt(pat, p) == '/' ||
						(byteAt(pat, p) == '\\' && byteAt(pat, p+1) == '/')) {
					// "**/" may match nothing at all: try the rest of
					// the pattern right here first.
					if byteAt(pat, p) == '/' && dowild(pat, p+1, text, t, flags) == wildMatch {
						return wildMatch
					}
					matchSlash = true
				} else {
					matchSlash = false
				}
			} else {
				matchSlash = flags&wildPathname == 0
			}
			if p >= len(pat) {
				// Trailing "**" matches everything; a trailing "*" only
				// when no slash remains.
				if !matchSlash {
					for i := t; i < len(text); i++ {
						if text[i] == '/' {
							return wildNoMatch
						}
					}
				}
				return wildMatch
			} else if !matchSlash && pat[p] == '/' {
				// One "*" followed by a slash matches exactly the next
				// path component.
				slash := -1
				for i := t; i < len(text); i++ {
					if text[i] == '/' {
						slash = i
						break
					}
				}
				if slash < 0 {
					return wildNoMatch
				}
				t = slash
				// The slash itself is consumed by the loop.
				continue
			}
			for {
				if tCh == 0 {
					break
				}
				// Advance quickly to the next occurrence of a literal
				// that follows the star.
				if !isGlobSpecial(pat[p]) {
					pCh = pat[p]
					for {
						tCh = byteAt(text, t)
						if tCh == 0 || (!matchSlash && tCh == '/') {
							break
						}
						if tCh == pCh {
							break
						}
						t++
					}
					if tCh != pCh {
						return wildNoMatch
					}
				}
				if m := dowild(pat, p, text, t, flags); m != wildNoMatch {
					if !matchSlash || m != wildAbortToStarStar {
						return m
					}
				} else if !matchSlash && tCh == '/' {
					return wildAbortToStarStar
				}
				t++
				tCh = byteAt(text, t)
			}
			return wildAbortAll
		case '[':
			p++
			pCh = byteAt(pat, p)
			if pCh == '^' {
				pCh = '!'
			}
			negated := pCh == '!'
			if negated {
				p++
				pCh = byteAt(pat, p)
			}
			var prevCh byte
			matched := false
			for {
				if pCh == 0 {
					return wildAbortAll
				}
				if pCh == '\\' {
					p++
					pCh = byteAt(pat, p)
					if pCh == 0 {
						return wildAbortAll
					}
					if tCh == pCh {
						matched = true
					}
				} else if pCh == '-' && prevCh != 0 && byteAt(pat, p+1) != 0 && byteAt(pat, p+1) != ']' {
					p++
					pCh = pat[p]
					if pCh == '\\' {
						p++
						pCh = byteAt(pat, p)
						if pCh == 0 {
							return wildAbortAll
						}
					}
					if tCh <= pCh && tCh >= prevCh {
						matched = true
					}
					pCh = 0 // so that prevCh becomes 0
				} else if pCh == '[' && byteAt(pat, p+1) == ':' {
					p += 2
					s := p
					for ; byteAt(pat, p) != 0 && pat[p] != ']'; p++ {
					}
					if byteAt(pat, p) == 0 {
						return wildAbortAll
					}
					i := p - s - 1
					if i < 0 || pat[p-1] != ':' {
						// No ":]": treat "[" as an ordinary member.
						p = s - 2
						pCh = '['
						if tCh == pCh {
							matched = true
						}
						prevCh = pCh
						p++
						pCh = byteAt(pat, p)
						if pCh == ']' {
							break
						}
						continue
					}
					ok, known := classMatch(pat[s:s+i], tCh)
					if !known {
						return wildAbortAll
					}
					if ok {
						matched = true
					}
					pCh = 0
				} else if tCh == pCh {
					matched = true
				}
				prevCh = pCh
				p++
				pCh = byteAt(pat, p)
				if pCh == ']' {
					break
				}
			}
			if matched == negated || (flags&wildPathname != 0 && tCh == '/') {
				return wildNoMatch
			}
			continue
		}
	}
	if t < len(text) {
		return wildNoMatch
	}
	return wildMatch
}

// classMatch evaluates a POSIX bracket class such as [:alpha:] on one byte.
// known is false for a class name git does not accept.
func classMatch(name string, c byte) (ok, known bool) {
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isDigit := c >= '0' && c <= '9'
	isAlpha := isUpper || isLower
	isSpace := c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	isPrint := c >= 0x20 && c < 0x7f
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isPrint && c != ' ', true
	case "lower":
		return isLower, true
	case "print":
		return isPrint, true
	case "punct":
		return isPrint && c != ' ' && !isAlpha && !isDigit, true
	case "space":
		return isSpace, true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
