package ignore

// This file is a faithful port of git's wildmatch.c (the matcher git uses for
// ignore patterns), so that corner cases such as "**" adjacency, bracket
// classes and escapes behave exactly as git applies them. It works on bytes,
// like git: multi-byte UTF-8 characters are matched byte by byte.
//
// git's matcher backtracks: every "*" retries the rest of the pattern at
// each later position, so "*a*a*a*a*a*a*a*a*a*a*b" against a long run of
// "a" takes time exponential in the number of stars. The port keeps git's
// control flow (and so its answers) but memoises it once a match has made
// more than wildBudget recursive calls: the result of matching the pattern
// from position p against the text from position t depends on (p, t)
// alone, and so does the outcome of a star's retry loop, which is the same
// for every text position the loop passes. With both tables a match costs
// O(P·T) steps plus O(T) per star state for the trailing-star scans, where
// P is the number of star states of the pattern and T the text length.

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

// wildBudget is how many recursive calls a match may make before it is
// restarted with memo tables. Ordinary patterns ("*.log", "doc/**/*.txt")
// stay far below it and never allocate; only pathological ones pay for
// the tables.
const wildBudget = 256

// wildOverBudget unwinds a match that ran out of budget.
const wildOverBudget wildResult = -3

// wildmatch reports whether text matches pattern with git's semantics.
func wildmatch(pattern, text string, flags int) bool {
	m := wildMatcher{pat: pattern, text: text, flags: flags, budget: wildBudget}
	r := m.dowild(0, 0)
	if r == wildOverBudget {
		m = wildMatcher{pat: pattern, text: text, flags: flags, memo: true}
		r = m.dowild(0, 0)
	}
	return r == wildMatch
}

// wildMatcher is one match of text against pat.
type wildMatcher struct {
	pat, text string
	flags     int
	// budget counts down the recursive calls a match without memo tables
	// may still make.
	budget int
	// memo is set when the tables below are used. rows maps a pattern
	// position to its row in calls and stars (-1 when it has none yet);
	// an entry is 0 while unknown, else the wildResult plus memoOffset.
	memo  bool
	rows  []int32
	calls [][]int8
	stars [][]int8
	// steps counts the recursive calls of a memoised match (tests hold it
	// to its polynomial bound).
	steps int
}

// memoOffset makes every wildResult (-2…1) a nonzero table entry.
const memoOffset = 3

// row returns the memo rows of pattern position p, creating them.
func (m *wildMatcher) row(p int) (calls, stars []int8) {
	if m.rows == nil {
		m.rows = make([]int32, len(m.pat)+1)
		for i := range m.rows {
			m.rows[i] = -1
		}
	}
	r := m.rows[p]
	if r < 0 {
		r = int32(len(m.calls))
		m.rows[p] = r
		m.calls = append(m.calls, make([]int8, len(m.text)+1))
		m.stars = append(m.stars, make([]int8, len(m.text)+1))
	}
	return m.calls[r], m.stars[r]
}

// call is a recursive dowild(p, t), memoised or budgeted.
func (m *wildMatcher) call(p, t int) wildResult {
	if !m.memo {
		if m.budget--; m.budget < 0 {
			return wildOverBudget
		}
		return m.dowild(p, t)
	}
	m.steps++
	calls, _ := m.row(p)
	if v := calls[t]; v != 0 {
		return wildResult(v) - memoOffset
	}
	r := m.dowild(p, t)
	calls, _ = m.row(p) // the tables may have grown
	calls[t] = int8(r + memoOffset)
	return r
}

func (m *wildMatcher) dowild(p int, t int) wildResult {
	pat, text, flags := m.pat, m.text, m.flags
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
					if byteAt(pat, p) == '/' {
						switch m.call(p+1, t) {
						case wildMatch:
							return wildMatch
						case wildOverBudget:
							return wildOverBudget
						}
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
			return m.starLoop(p, t, matchSlash)
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
		default:
			if tCh != pCh {
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

// starLoop is git's retry loop of a star followed by pattern position p:
// it tries the rest of the pattern at text position t and each later one.
// Its outcome depends only on p (which fixes matchSlash) and t, and is
// the same from every position the loop passes, so with memo tables each
// (p, t) is looped over once.
func (m *wildMatcher) starLoop(p, t int, matchSlash bool) wildResult {
	pat, text := m.pat, m.text
	var stars []int8
	start := t
	if m.memo {
		_, stars = m.row(p)
		if v := stars[t]; v != 0 {
			return wildResult(v) - memoOffset
		}
	}
	r := wildAbortAll
	tCh := byteAt(text, t)
	for {
		if tCh == 0 {
			break
		}
		if stars != nil && t > start {
			if v := stars[t]; v != 0 {
				r = wildResult(v) - memoOffset
				break
			}
		}
		// Advance quickly to the next occurrence of a literal that
		// follows the star.
		if !isGlobSpecial(pat[p]) {
			pCh := pat[p]
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
				r = wildNoMatch
				break
			}
		}
		if res := m.call(p, t); res != wildNoMatch {
			if res == wildOverBudget {
				return wildOverBudget
			}
			if !matchSlash || res != wildAbortToStarStar {
				r = res
				break
			}
		} else if !matchSlash && tCh == '/' {
			r = wildAbortToStarStar
			break
		}
		t++
		tCh = byteAt(text, t)
	}
	if m.memo {
		_, stars = m.row(p) // the tables may have grown
		for i := start; i <= t && i < len(stars); i++ {
			stars[i] = int8(r + memoOffset)
		}
	}
	return r
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
