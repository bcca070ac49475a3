package userpath

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestExpand(t *testing.T) {
	home := func() (string, error) { return "/home/me", nil }
	for _, tc := range []struct {
		in, want string
		windows  bool
	}{
		{in: "~", want: "/home/me"},
		{in: "~/.dsh/sessions", want: filepath.Join("/home/me", ".dsh/sessions")},
		{in: "$HOME/.dsh/sessions", want: "/home/me/.dsh/sessions"},
		{in: "${HOME}/.cache/dsh-refls.log", want: "/home/me/.cache/dsh-refls.log"},
		{in: "/srv/$HOME/x/$HOME", want: "/srv//home/me/x//home/me"},
		// Left as written: another user's home, other variables, a tilde
		// inside a name, and a variable whose name only starts with HOME.
		{in: "~bob/sessions", want: "~bob/sessions"},
		{in: "$DSH_HOME/sessions", want: "$DSH_HOME/sessions"},
		{in: "/tmp/a~b", want: "/tmp/a~b"},
		{in: "$HOMEDIR/x", want: "$HOMEDIR/x"},
		{in: "/plain/path", want: "/plain/path"},
		{in: `~\dsh`, want: `~\dsh`},
		{in: `~\dsh`, want: filepath.Join("/home/me", "dsh"), windows: true},
		{in: `%userprofile%\.dsh\sessions`, want: `/home/me\.dsh\sessions`, windows: true},
		{in: `%USERPROFILE%\x`, want: `%USERPROFILE%\x`},
	} {
		if got := expand(tc.in, home, tc.windows); got != tc.want {
			t.Errorf("expand(%q, windows=%v) = %q, want %q", tc.in, tc.windows, got, tc.want)
		}
	}
}

func TestExpandWithoutHome(t *testing.T) {
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	if got := expand("~/.dsh", noHome, false); got != "~/.dsh" {
		t.Errorf("without a home directory, expand(~/.dsh) = %q, want it unchanged", got)
	}
}
