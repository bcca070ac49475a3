package completion

import "strings"

// Switch is a session scope typed at the start of an `@` token: `@here:`,
// `@recent:` or `@all:` (docs/sessions.md). It changes which sessions
// completion lists; files are still found by everything typed.
type Switch int

// The switches.
const (
	// SwitchNone: no switch typed; the sessionScope setting applies.
	SwitchNone Switch = iota
	// SwitchHere lists this workspace's sessions.
	SwitchHere
	// SwitchRecent lists the sessions active lately.
	SwitchRecent
	// SwitchAll lists every session, the hidden kinds too.
	SwitchAll
)

// switches are the words of the switches, each followed by ':' when typed.
var switches = [...]struct {
	word string
	sw   Switch
}{{"here", SwitchHere}, {"recent", SwitchRecent}, {"all", SwitchAll}}

// SplitSwitch returns the switch an unquoted token's query starts with and
// the session query after it. Only the lowercase words followed by ':'
// are switches, so `@all`, `@allowed.go` and `@here-doc.md` stay queries as
// typed, and a quoted token (`@"all: notes`) never holds one.
func SplitSwitch(tok Token) (Switch, string) {
	if tok.Quoted {
		return SwitchNone, tok.Query
	}
	for _, s := range switches {
		if rest, ok := strings.CutPrefix(tok.Query, s.word+":"); ok {
			return s.sw, rest
		}
	}
	return SwitchNone, tok.Query
}

// String is the switch as typed, without the `@`.
func (s Switch) String() string {
	for _, w := range switches {
		if w.sw == s {
			return w.word + ":"
		}
	}
	return ""
}
