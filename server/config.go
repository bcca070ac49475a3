package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/internal/userpath"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// Defaults of the configuration (§2.2, §2.3, §3).
const (
	defaultMaxReferences    = 3
	hardMaxReferences       = 3
	defaultCandidateLimit   = 50
	defaultFileMaxResults   = 20
	defaultContextFraction  = 0.2
	configSection           = "dsh"
	spillDirUnderUserCache  = "dsh-refls/spill"
	watchModeAuto           = "auto"
	watchModeOff            = "off"
	watchModeFsnotify       = "fsnotify"
	watchModePoll           = "poll"
	defaultExcludedDirGit   = ".git"
	defaultExcludedDirNodeM = "node_modules"
)

// Config is the client's configuration of §4.1, after validation and
// defaults.
type Config struct {
	SessionsRoot             string   `json:"sessionsRoot"`
	SessionID                string   `json:"sessionId"`
	Cwd                      string   `json:"cwd"`
	MaxReferences            int      `json:"maxReferences"`
	MaxReferenceBytes        int      `json:"maxReferenceBytes"`
	ReferenceContextFraction float64  `json:"referenceContextFraction"`
	ContextWindow            int      `json:"contextWindow"`
	CandidateLimit           int      `json:"candidateLimit"`
	FileMaxResults           int      `json:"fileMaxResults"`
	ExcludedDirectories      []string `json:"excludedDirectories"`
	SpillDir                 string   `json:"spillDir"`
	Watch                    string   `json:"watch"`
	// RecallSearch enables the index of what was said in sessions (issue
	// 13, on by default); off, no body index is built, read or stored, and
	// a stored copy is removed. Every session is indexed with its text on
	// disk in compressed blocks: on the 10,000-session / 3 GB bench store
	// the server's RSS with it stays within the 150 MB of SPEC §5 and
	// issue 13 (docs/search.md). With it on, dsh/candidates lists body
	// matches after dsh's title, id and cwd matches. The index is stored
	// beside the title-index cache and loaded at start, and a log that only
	// grew is read from where its last read ended (docs/search.md).
	RecallSearch bool `json:"recallSearch"`
	// CandidateOrder ranks sessions within a working-directory group:
	// "active" (last event first, the default) or "created" (SPEC §2.2,
	// dsh's order).
	CandidateOrder string `json:"candidateOrder"`
	// RedactSecrets replaces recognised credentials in recalled text by
	// "[redacted: <kind>]" before retention (sessionref/internal/secrets). Off by
	// default, so that dsh/prepare's output stays dsh's byte for byte.
	RedactSecrets bool `json:"redactSecrets"`
	// Frecency re-orders completion items that matched alike by how often
	// and how lately they were accepted in this workspace, and files open
	// in the editor first (server/frecency.go; on by default). Off,
	// nothing is recorded, read or written; the picks already saved stay
	// until the forget command removes them.
	Frecency bool `json:"frecency"`

	// SessionScope is the sessions completion lists when no switch is
	// typed: "all" (the default, as before), "workspace" or "recent"
	// (session_scope.go).
	SessionScope string `json:"sessionScope"`
	// ShowAutomationSessions lists the hidden kinds (subagent children,
	// webhook sessions, sessions without a prompt) in completion without
	// `@all:` (dshlog.Kind).
	ShowAutomationSessions bool `json:"showAutomationSessions"`

	// DirectoryTokenBudget is the token estimate above which a directory
	// mention is flagged, with quick fixes that narrow it
	// (directory_facts.go); 0 turns the check off.
	DirectoryTokenBudget int `json:"directoryTokenBudget"`
}

// DefaultConfig is the configuration before the client says anything.
func DefaultConfig() Config {
	spill := ""
	if dir, err := os.UserCacheDir(); err == nil {
		spill = filepath.Join(dir, filepath.FromSlash(spillDirUnderUserCache))
	}
	return Config{
		MaxReferences:            defaultMaxReferences,
		ReferenceContextFraction: defaultContextFraction,
		CandidateLimit:           defaultCandidateLimit,
		FileMaxResults:           defaultFileMaxResults,
		ExcludedDirectories:      []string{defaultExcludedDirGit, defaultExcludedDirNodeM},
		SpillDir:                 spill,
		Watch:                    watchModeAuto,
		RecallSearch:             true,
		CandidateOrder:           candidateOrderActive,
		Frecency:                 true,
		SessionScope:             sessionScopeAll,
		DirectoryTokenBudget:     defaultDirectoryTokenBudget,
	}
}

// Limits are the preparation limits this configuration implies.
func (c Config) Limits() prepare.Limits {
	return prepare.Limits{
		MaxReferences:            c.MaxReferences,
		MaxReferenceBytes:        c.MaxReferenceBytes,
		ContextWindow:            c.ContextWindow,
		ReferenceContextFraction: c.ReferenceContextFraction,
		SpillDir:                 c.SpillDir,
		RedactSecrets:            c.RedactSecrets,
	}
}

// applyConfig returns base with the fields present in raw applied. raw is a
// JSON object; null or absent means no change. Every present field is
// type- and range-checked; the first invalid one is reported by name and
// nothing is applied. Unknown keys are returned so the caller can log them.
func applyConfig(base Config, raw json.RawMessage) (Config, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return base, nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return base, nil, &configError{Field: "(settings)", Msg: "must be a JSON object"}
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := base
	var unknown []string
	for _, k := range keys {
		v := fields[k]
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		var err error
		switch k {
		case "sessionsRoot":
			c.SessionsRoot, err = decodePath(v)
		case "sessionId":
			c.SessionID, err = decodeString(v)
		case "cwd":
			c.Cwd, err = decodePath(v)
		case "spillDir":
			c.SpillDir, err = decodePath(v)
		case "maxReferences":
			c.MaxReferences, err = decodeInt(v, 1, hardMaxReferences)
		case "maxReferenceBytes":
			c.MaxReferenceBytes, err = decodeInt(v, 1, -1)
		case "contextWindow":
			c.ContextWindow, err = decodeInt(v, 1, -1)
		case "candidateLimit":
			c.CandidateLimit, err = decodeInt(v, 1, -1)
		case "fileMaxResults":
			c.FileMaxResults, err = decodeInt(v, 1, fileref.MaxLimit)
		case "directoryTokenBudget":
			c.DirectoryTokenBudget, err = decodeInt(v, 0, -1)
		case "referenceContextFraction":
			var f float64
			if err = json.Unmarshal(v, &f); err != nil {
				err = fmt.Errorf("must be a number")
			} else if !(f > 0 && f <= 1) {
				err = fmt.Errorf("must be > 0 and ≤ 1, got %v", f)
			}
			c.ReferenceContextFraction = f
		case "excludedDirectories":
			var dirs []string
			if err = json.Unmarshal(v, &dirs); err != nil {
				err = fmt.Errorf("must be an array of strings")
			}
			for _, d := range dirs {
				if d == "" || strings.ContainsAny(d, `/\`) {
					err = fmt.Errorf("entries must be plain directory names, got %q", d)
				}
			}
			c.ExcludedDirectories = dirs
		case "recallSearch":
			if err = json.Unmarshal(v, &c.RecallSearch); err != nil {
				err = fmt.Errorf("must be true or false")
			}
		case "redactSecrets":
			if err = json.Unmarshal(v, &c.RedactSecrets); err != nil {
				err = fmt.Errorf("must be true or false")
			}
		case "frecency":
			if err = json.Unmarshal(v, &c.Frecency); err != nil {
				err = fmt.Errorf("must be true or false")
			}
		case "watch":
			var s string
			s, err = decodeString(v)
			switch s {
			case watchModeAuto, watchModeFsnotify, watchModePoll, watchModeOff:
			default:
				if err == nil {
					err = fmt.Errorf(`must be "auto", "fsnotify", "poll" or "off", got %q`, s)
				}
			}
			c.Watch = s
		case "sessionScope":
			c.SessionScope, err = decodeSessionScope(v)
		case "showAutomationSessions":
			if err = json.Unmarshal(v, &c.ShowAutomationSessions); err != nil {
				err = fmt.Errorf("must be true or false")
			}
		case "candidateOrder":
			c.CandidateOrder, err = decodeString(v)
			if err == nil && c.CandidateOrder != candidateOrderActive && c.CandidateOrder != candidateOrderCreated {
				err = fmt.Errorf(`must be "active" or "created", got %q`, c.CandidateOrder)
			}
		default:
			unknown = append(unknown, k)
		}
		if err != nil {
			return base, nil, &configError{Field: k, Msg: err.Error()}
		}
	}
	return c, unknown, nil
}

func decodeString(v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("must be a string")
	}
	return s, nil
}

// decodePath decodes a path setting with the home directory written out
// (`~`, `$HOME`): an editor hands settings over as written, with no shell
// to expand them, and a `~` left in would name a directory `~` inside the
// server's working directory (the workspace).
func decodePath(v json.RawMessage) (string, error) {
	s, err := decodeString(v)
	return userpath.Expand(s), err
}

// decodeInt decodes an integer in [lo, hi]; hi < 0 means no upper bound.
func decodeInt(v json.RawMessage, lo, hi int) (int, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || f != float64(int(f)) {
		return 0, fmt.Errorf("must be an integer")
	}
	n := int(f)
	if n < lo || (hi >= 0 && n > hi) {
		if hi >= 0 {
			return 0, fmt.Errorf("must be between %d and %d, got %d", lo, hi, n)
		}
		return 0, fmt.Errorf("must be ≥ %d, got %d", lo, n)
	}
	return n, nil
}
