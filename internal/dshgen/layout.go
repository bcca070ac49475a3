package dshgen

import (
	"fmt"
	"path/filepath"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// The layout of SPEC §1.1 comes from package sessionref, so the generator
// and the reader agree on directory names by construction; layout_test.go
// pins those names to SPEC's examples and to the directories dsh created in
// the recorded fixtures, so a mistake there still fails a test.

// encodeSegment turns a session id into its directory name (§1.1).
func encodeSegment(id string) string { return layout.EncodeSegment(id) }

// projectKey turns a cwd into its project directory name, "--slug--" (§1.1).
func projectKey(cwd string) string { return layout.ProjectKey(cwd) }

// projectDir is the project directory name of a session: projectKey(cwd), or
// "_no-cwd" for a session without a cwd.
func projectDir(cwd string, hasCwd bool) string { return layout.ProjectDir(cwd, hasCwd) }

// Encoding says how a log file is stored (§1.2).
type Encoding int

// The two physical encodings.
const (
	// Raw is session.jsonl: one JSON value per line.
	Raw Encoding = iota
	// Zstd is session.jsonl.zstd: one zstd frame per append batch.
	Zstd
)

// String names the encoding as its file suffix does.
func (e Encoding) String() string {
	if e == Zstd {
		return "zstd"
	}
	return "jsonl"
}

// LogFileName is the file name of a log of the given generation: generation 0
// is session.jsonl, generation N ≥ 1 is session.vN.jsonl, with ".zstd" added
// for zstd logs.
func LogFileName(generation int, enc Encoding) string {
	name := "session.jsonl"
	if generation > 0 {
		name = fmt.Sprintf("session.v%d.jsonl", generation)
	}
	if enc == Zstd {
		name += ".zstd"
	}
	return name
}

// SessionDir is the directory dsh keeps a session's logs in under root.
func SessionDir(root, id, cwd string, hasCwd bool) string {
	return filepath.Join(root, projectDir(cwd, hasCwd), encodeSegment(id))
}

// EncodeSegment exposes the directory-name encoding of session ids used by
// this generator, so tests can name directories the way dsh does.
func EncodeSegment(id string) string { return encodeSegment(id) }

// ProjectDir exposes the project directory naming used by this generator.
func ProjectDir(cwd string, hasCwd bool) string { return projectDir(cwd, hasCwd) }
