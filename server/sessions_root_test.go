package server

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSessionsRootHomeIsExpanded: a client sends sessionsRoot as the user
// wrote it (`~/…` in a Neovim or Helix config); the server reads the store
// under $HOME, not `~` inside its working directory.
func TestSessionsRootHomeIsExpanded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeTestStore(t, filepath.Join(home, "store"), time.Now())
	for _, written := range []string{"~/store", "$HOME/store", "${HOME}/store"} {
		t.Run(written, func(t *testing.T) {
			opts, _, ws := testOptions(t)
			opts.OpenSessions = nil // the real index, reading what is on disk
			h := newHarness(t, opts)
			h.initialize(initOptions{root: ws, settings: map[string]any{"sessionsRoot": written, "watch": "off"}})
			st := waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed > 0 })
			if want := filepath.Join(home, "store"); st.SessionsRoot != want {
				t.Errorf("sessionsRoot %q read as %q, want %q", written, st.SessionsRoot, want)
			}
			if len(st.Degraded) != 0 {
				t.Errorf("degraded %q, want none", st.Degraded)
			}
		})
	}
}

// TestMissingSessionsRootIsReported: a root that does not exist lists no
// sessions, which is most often a mistyped setting: the user is told with
// window/showMessage, and dsh/status says so while it lasts.
func TestMissingSessionsRootIsReported(t *testing.T) {
	opts, _, ws := testOptions(t)
	opts.OpenSessions = nil
	missing := filepath.Join(t.TempDir(), "no", "such", "sessions")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionsRoot": missing, "watch": "off"}})
	n := h.waitNote(func(n notification) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "does not exist")
	})
	if !strings.Contains(string(n.Params), missing) || !strings.Contains(string(n.Params), `"type":2`) {
		t.Errorf("showMessage %s is not a warning naming %s", n.Params, missing)
	}
	st := waitStatus(t, h, func(st statusResult) bool { return !st.Building })
	if len(st.Degraded) != 1 || !strings.Contains(st.Degraded[0], missing) {
		t.Errorf("status degraded %q, want the missing root", st.Degraded)
	}
}
