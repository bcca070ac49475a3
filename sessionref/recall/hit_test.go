package recall

import (
	"errors"
	"testing"
)

func TestFirstHit(t *testing.T) {
	for _, c := range []struct {
		name, text, query, want string
		at                      int
	}{
		{"word start wins over an earlier hit inside a word", "generated code, then rate limits", "rate", "rate", 21},
		{"inside a word when no word starts with it", "it was accurate", "rate", "rate", 11},
		{"earliest of several words", "the login test and the rate limit", "rate login", "login", 4},
		{"longer term at the same offset", "rate limiting shipped", `rate "rate limiting"`, "rate limiting", 0},
		{"case folded", "Die STRASSE ist lang", "straße", "STRASSE", 4},
		{"folding that grows a rune", "Die Straße ist lang", "STRASSE", "Straße", 4},
		{"CJK inside a run", "我们修复登录测试了", "登录", "登录", 12},
		{"phrase across a line break is not a phrase", "rate\nlimit, then rate limit", `"rate limit"`, "rate limit", 17},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, e, ok, err := FirstHit(c.text, c.query)
			if err != nil || !ok {
				t.Fatalf("FirstHit(%q, %q) = ok %v, err %v", c.text, c.query, ok, err)
			}
			if s != c.at || c.text[s:e] != c.want {
				t.Errorf("FirstHit(%q, %q) = [%d, %d) %q, want %q at %d", c.text, c.query, s, e, c.text[s:e], c.want, c.at)
			}
		})
	}
}

func TestFirstHitNone(t *testing.T) {
	if _, _, ok, err := FirstHit("nothing here", "rate"); ok || err != nil {
		t.Errorf("FirstHit of absent words = ok %v, err %v; want no hit and no error", ok, err)
	}
	var qe *QueryError
	if _, _, _, err := FirstHit("text", "   "); !errors.As(err, &qe) {
		t.Errorf("FirstHit of an empty query: err %v, want a *QueryError", err)
	}
}
