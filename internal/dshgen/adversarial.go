package dshgen

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Case is one damaged or unusual store entry, with what SPEC requires a
// reader to do with it.
type Case struct {
	// Name is a short identifier of the case.
	Name string
	// Paths are the files or directories the case created.
	Paths []string
	// Expected are the facts a reader must report for the session, when it
	// must list it; nil when the session must be skipped.
	Expected *Expected
	// Want states the reader's required behaviour, citing SPEC.
	Want string
	// Finish, when set, completes a torn write; After are the facts once it
	// has run.
	Finish func() error
	After  *Expected
}

// caseSession is the common shape of adversarial sessions: one complete
// turn with a title, so the index has something to show.
func caseSession(id, cwd string) *Session {
	return NewSession(id).Cwd(cwd).Turn(func(t *Turn) {
		t.UserText("Summarise the open issues in the tracker.")
		t.Title("Summarise the open issues", "fallback")
		t.AssistantText("There are three open issues; two concern the parser.")
	})
}

// withPath fills Expected.Path and returns a pointer to it.
func withPath(e Expected, path string) *Expected {
	e.Path = path
	return &e
}

// UnparsableBeforeTurnEnd writes a log with an unparsable line inside a
// turn, followed by that turn's turn/end. §1.2: this is corruption — the
// session stays listed from its header and title, and dsh/prepare fails with
// READ_FAILED.
func UnparsableBeforeTurnEnd(root string, enc Encoding) (Case, error) {
	s := caseSession("case-unparsable-before-turn-end-"+enc.String(), "/work/cases/corrupt")
	s.Turn(func(t *Turn) {
		t.UserText("And the closed ones?")
		t.RawLine(`{"type":"assistant/message","seq":`)
		t.AssistantText("None were closed this week.")
	}).MarkCorrupt()
	path, err := s.Save(root, enc)
	if err != nil {
		return Case{}, err
	}
	return Case{Name: "unparsable-before-turn-end-" + enc.String(), Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "§1.2: an unparsable line followed later by a turn/end is corruption; list the session from header and title, dsh/prepare fails with READ_FAILED"}, nil
}

// UnparsableAfterTurnEnd writes a log whose last line is complete but
// unparsable and is not followed by any turn/end. In a raw log §1.2 calls
// only an unparsable line followed by a turn/end corruption, so the reader
// keeps everything before it and dsh/prepare succeeds. In a zstd log the
// line lies inside a complete frame, which dsh treats as corruption
// (issue 16 item 2): listed, but READ_FAILED.
func UnparsableAfterTurnEnd(root string, enc Encoding) (Case, error) {
	s := caseSession("case-unparsable-after-turn-end-"+enc.String(), "/work/cases/corrupt")
	want := s.Expected()
	s.NewBatch().RawLine(`{"type":"turn/start","seq":`)
	path, err := s.Save(root, enc)
	if err != nil {
		return Case{}, err
	}
	spec := "§1.2: an unparsable line not followed by a turn/end is not corruption; read the events before it, dsh/prepare succeeds"
	if enc == Zstd {
		want.Preparable = false
		spec = "issue 16 item 2: an unparsable line inside a complete zstd frame is corruption; list from header and title, dsh/prepare fails with READ_FAILED"
	}
	return Case{Name: "unparsable-after-turn-end-" + enc.String(), Paths: []string{path}, Expected: withPath(want, path), Want: spec}, nil
}

// TornTail writes a complete log, then appends a second turn torn in the
// middle of its last line (raw) or last frame (zstd). §1.2: not an error;
// the reader reads what is complete and treats the rest as not yet written.
// Case.Finish writes the rest; Case.After are the facts then.
func TornTail(root string, enc Encoding) (Case, error) {
	s := caseSession("case-torn-tail-"+enc.String(), "/work/cases/torn")
	path, err := s.Save(root, enc)
	if err != nil {
		return Case{}, err
	}
	before := s.Expected()
	s.Turn(func(t *Turn) {
		t.UserText("Which one is oldest?")
		t.Title("Oldest open issue", "provider")
		t.AssistantText("The oldest is the tokenizer crash, opened in March.")
	})
	finish, err := s.AppendTorn(path)
	if err != nil {
		return Case{}, err
	}
	return Case{Name: "torn-tail-" + enc.String(), Paths: []string{path}, Expected: withPath(before, path),
		Want:   "§1.2: a torn tail is not an error; read what is complete, pick the rest up once written",
		Finish: finish, After: withPath(s.Expected(), path)}, nil
}

// ChecksumFailure writes a zstd log whose third frame (the second turn) is
// complete but fails its content checksum. §1.2: corruption — the session
// stays listed from its header and title (the title is in frame 2, which is
// intact), and dsh/prepare fails with READ_FAILED.
func ChecksumFailure(root string) (Case, error) {
	s := caseSession("case-checksum-failure", "/work/cases/corrupt")
	s.Turn(func(t *Turn) {
		t.UserText("List the parser issues.")
		t.AssistantText("Issue 12 and issue 19.")
	}).MarkCorrupt()
	data, err := s.Bytes(Zstd)
	if err != nil {
		return Case{}, err
	}
	frames, _, err := SplitFrames(data)
	if err != nil || len(frames) != 3 {
		return Case{}, fmt.Errorf("expected 3 frames, got %d: %v", len(frames), err)
	}
	// The last four bytes of a frame are its checksum; frames alias data.
	frames[2][len(frames[2])-1] ^= 0xFF
	path := s.Path(root, Zstd)
	if err := writeFile(path, data); err != nil {
		return Case{}, err
	}
	return Case{Name: "checksum-failure", Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "§1.2: a checksum failure in a complete frame is corruption; list from header and title, dsh/prepare fails with READ_FAILED"}, nil
}

// writeFile writes data to path, creating directories.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, fileMode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// hugeFill is the repeated text of a huge message.
const hugeFill = "lorem ipsum dolor sit amet "

// hugeChunk is how many bytes of the huge text are written at a time.
const hugeChunk = 1 << 16

// HugeLine writes a log whose second event is one user message of textBytes
// bytes of text (e.g. 64 MB), streamed so it is never held in memory,
// followed by a title and a reply. Readers must neither fail the index nor
// hold the line to read what follows: the title after the huge line is the
// title. Expected.Conversation is left nil (the huge text is hugeFill
// repeated and cut to textBytes, then the reply "Done.").
func HugeLine(root string, enc Encoding, textBytes int64) (Case, error) {
	s := NewSession("case-huge-line-" + enc.String()).Cwd("/work/cases/huge")
	path := s.Path(root, enc)
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return Case{}, fmt.Errorf("creating session directory: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return Case{}, fmt.Errorf("creating %s: %w", path, err)
	}
	defer f.Close()
	var zenc *zstd.Encoder
	if enc == Zstd {
		if zenc, err = newEncoder(); err != nil {
			return Case{}, err
		}
		if _, err := f.Write(zenc.EncodeAll(s.headerBytes(), nil)); err != nil {
			return Case{}, fmt.Errorf("writing %s: %w", path, err)
		}
		zenc.Reset(f)
	} else if _, err := f.Write(s.headerBytes()); err != nil {
		return Case{}, fmt.Errorf("writing %s: %w", path, err)
	}
	var out *bufio.Writer
	if zenc != nil {
		out = bufio.NewWriterSize(zenc, hugeChunk)
	} else {
		out = bufio.NewWriterSize(f, hugeChunk)
	}
	// Build the surrounding events with the builder, then splice the text in
	// where a marker string stands.
	const marker = "\x00HUGE\x00"
	s.TurnStart().UserText(marker).Title("Paste of a very long build log", "user").AssistantText("Done.").TurnEnd("completed")
	for _, b := range s.batches {
		for _, l := range b.lines {
			line := string(l)
			head, tail, found := strings.Cut(line, `\u0000HUGE\u0000`)
			if !found {
				out.WriteString(line)
				out.WriteByte('\n')
				continue
			}
			out.WriteString(head)
			fill := strings.Repeat(hugeFill, hugeChunk/len(hugeFill))
			for left := textBytes; left > 0; {
				n := min(left, int64(len(fill)))
				out.WriteString(fill[:n])
				left -= n
			}
			out.WriteString(tail)
			out.WriteByte('\n')
		}
	}
	if err := out.Flush(); err != nil {
		return Case{}, fmt.Errorf("writing %s: %w", path, err)
	}
	if zenc != nil {
		if err := zenc.Close(); err != nil {
			return Case{}, fmt.Errorf("finishing frame of %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return Case{}, fmt.Errorf("closing %s: %w", path, err)
	}
	e := s.Expected()
	e.Conversation = nil
	return Case{Name: "huge-line-" + enc.String(), Paths: []string{path}, Expected: withPath(e, path),
		Want: "a single line far larger than any buffer: index reads past it (title comes after it), prepare reads it or fails with a clear error, never exhausts memory"}, nil
}

// InvalidUTF8 writes a raw log whose user message contains bytes that are
// not UTF-8 (0xFF, 0xFE and a cut three-byte sequence) inside a JSON string.
// §1.2 says logs are UTF-8; the line is otherwise valid JSON. A reader must
// not lose the session; Expected is what dsh reads (Buffer.toString, the
// WHATWG decoder): one U+FFFD per maximal invalid subsequence, so 0xFF and
// 0xFE give one each and the cut sequence E2 82 gives one.
func InvalidUTF8(root string) (Case, error) {
	bad := "caf\xff\xfe and \xe2\x82 end"
	s := NewSession("case-invalid-utf8").Cwd("/work/cases/bytes")
	s.Turn(func(t *Turn) {
		t.RawLine(fmt.Sprintf(`{"type":"user/message","seq":1,"time":%d,"data":{"content":[{"type":"text","text":"%s"}],"source":{"kind":"user"},"role":"user","id":"6f1b2a4e-1d0c-4b7e-9a55-2f1d3c4b5a69"},"surfaceOp":"append"}`, s.clock, bad))
		// The raw line above took seq 1; keep the builder's count in step.
		t.nextSeq++
		t.clock += t.tick
		t.proj.appendItem(surfaceItem{seq: 1, kept: true, role: "user", text: "caf\uFFFD\uFFFD and \uFFFD end"})
		t.Title("Invalid bytes in a prompt", "fallback")
		t.AssistantText("Received.")
	})
	path, err := s.Save(root, Raw)
	if err != nil {
		return Case{}, err
	}
	return Case{Name: "invalid-utf8", Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "§1.2 logs are UTF-8: a line with invalid bytes inside a string must not crash the reader nor hide the session; decode with U+FFFD replacement or skip the line with a logged reason"}, nil
}

// NULInText writes a log whose user text contains U+0000, written escaped
// as \u0000 the way JSON requires. The line is valid JSON; the character is
// part of the text and must survive into the projection.
func NULInText(root string, enc Encoding) (Case, error) {
	s := NewSession("case-nul-in-text-" + enc.String()).Cwd("/work/cases/bytes").Turn(func(t *Turn) {
		t.UserText("scope\x00AGENTS.md is a path with a NUL")
		t.Title("NUL in a prompt", "fallback")
		t.AssistantText("Noted.")
	})
	path, err := s.Save(root, enc)
	if err != nil {
		return Case{}, err
	}
	return Case{Name: "nul-in-text-" + enc.String(), Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "escaped NUL is ordinary text: keep it in the projection"}, nil
}

// nulPadding is how many NUL bytes a crashed writer leaves at the tail.
const nulPadding = 4096

// NULPadding writes a raw log followed by a run of NUL bytes without a
// newline, as a file system leaves a preallocated tail after a crash. It is
// an unterminated last line: §1.2 treats it as a torn tail, not an error.
func NULPadding(root string) (Case, error) {
	s := caseSession("case-nul-padding", "/work/cases/bytes")
	data, err := s.Bytes(Raw)
	if err != nil {
		return Case{}, err
	}
	data = append(data, make([]byte, nulPadding)...)
	path := s.Path(root, Raw)
	if err := writeFile(path, data); err != nil {
		return Case{}, err
	}
	return Case{Name: "nul-padding", Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "§1.2: NUL bytes without a newline are an unterminated last line — a torn tail; read everything before it"}, nil
}

// EmptyFile writes a zero-byte session.jsonl in a well-formed session
// directory. There is no header, so the reader skips it with a logged
// reason (§1.1, §1.3).
func EmptyFile(root string) (Case, error) {
	path := filepath.Join(SessionDir(root, "case-empty-file", "/work/cases/empty", true), LogFileName(0, Raw))
	if err := writeFile(path, nil); err != nil {
		return Case{}, err
	}
	return Case{Name: "empty-file", Paths: []string{path},
		Want: "no header line: skip the session with a logged reason (or treat it as not yet written), keep serving"}, nil
}

// HeaderOnly writes a log with a header and no events. The session is
// listed under its id; capturedThroughSeq is null and the conversation
// empty (§1.6).
func HeaderOnly(root string, enc Encoding) (Case, error) {
	s := NewSession("case-header-only-" + enc.String()).Cwd("/work/cases/empty")
	path, err := s.Save(root, enc)
	if err != nil {
		return Case{}, err
	}
	return Case{Name: "header-only-" + enc.String(), Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "§1.6: list under the id; capturedThroughSeq null, empty conversation"}, nil
}

// DuplicateIDs writes two well-formed sessions with the same id in two
// project directories (different cwds). §1.1: ids that appear twice are
// skipped with a logged reason — neither is shown.
func DuplicateIDs(root string) (Case, error) {
	const id = "case-duplicate-id"
	var paths []string
	for _, cwd := range []string{"/work/cases/dup-a", "/work/cases/dup-b"} {
		s := caseSession(id, cwd)
		path, err := s.Save(root, Raw)
		if err != nil {
			return Case{}, err
		}
		paths = append(paths, path)
	}
	return Case{Name: "duplicate-ids", Paths: paths,
		Want: "§1.1: an id that appears twice is skipped with a logged reason; neither copy is shown"}, nil
}

// IdentityMismatchID writes a log whose header id does not encode to its
// directory name. §1.1: skipped with a logged reason, never shown.
func IdentityMismatchID(root string) (Case, error) {
	s := caseSession("case-identity-header-id", "/work/cases/identity")
	path := filepath.Join(SessionDir(root, "case-identity-directory-id", "/work/cases/identity", true), LogFileName(0, Raw))
	if err := s.SaveAs(path, Raw); err != nil {
		return Case{}, err
	}
	return Case{Name: "identity-mismatch-id", Paths: []string{path},
		Want: "§1.1: the header id must encode to the directory name; skip with a logged reason"}, nil
}

// IdentityMismatchCwd writes a log whose header cwd does not map to the
// project directory it is in. §1.1: skipped with a logged reason.
func IdentityMismatchCwd(root string) (Case, error) {
	const id = "case-identity-cwd"
	s := caseSession(id, "/work/cases/header-cwd")
	path := filepath.Join(SessionDir(root, id, "/work/cases/other-cwd", true), LogFileName(0, Raw))
	if err := s.SaveAs(path, Raw); err != nil {
		return Case{}, err
	}
	return Case{Name: "identity-mismatch-cwd", Paths: []string{path},
		Want: "§1.1: the header cwd must map to the project directory; skip with a logged reason"}, nil
}

// FlatLayout writes a well-formed log directly into a project directory as
// <project>/<name>.jsonl. §1.1: ignored with a logged reason.
func FlatLayout(root string) (Case, error) {
	const id = "case-flat-layout"
	s := caseSession(id, "/work/cases/flat")
	path := filepath.Join(root, projectDir("/work/cases/flat", true), id+".jsonl")
	if err := s.SaveAs(path, Raw); err != nil {
		return Case{}, err
	}
	return Case{Name: "flat-layout", Paths: []string{path},
		Want: "§1.1: a log directly in a project directory is ignored with a logged reason"}, nil
}

// Version5 writes a v5 log with a title. §1.3: listed by header and title;
// dsh/prepare refuses it with a "written by a newer dsh" READ_FAILED.
func Version5(root string, enc Encoding) (Case, error) {
	s := NewSession("case-version-5-" + enc.String()).Cwd("/work/cases/newer").Version(5).Turn(func(t *Turn) {
		t.UserText("Written by a dsh from the future.")
		t.Title("Future session", "fallback")
		t.AssistantText("Hello from v5.")
	})
	path, err := s.Save(root, enc)
	if err != nil {
		return Case{}, err
	}
	return Case{Name: "version-5-" + enc.String(), Paths: []string{path}, Expected: withPath(s.Expected(), path),
		Want: "§1.3: list by header and title; dsh/prepare fails with READ_FAILED saying the log was written by a newer dsh"}, nil
}

// SymlinkLoop writes a well-formed session and, beside it, symlinks that
// form loops: a session directory pointing at its own project directory and
// a project directory pointing at the root. Scanning must terminate, not
// follow them into a loop, and keep the real session listed.
func SymlinkLoop(root string) (Case, error) {
	s := caseSession("case-symlink-neighbour", "/work/cases/links")
	path, err := s.Save(root, Raw)
	if err != nil {
		return Case{}, err
	}
	project := filepath.Dir(s.Dir(root))
	loopSession := filepath.Join(project, "case-symlink-loop")
	loopProject := filepath.Join(root, projectKey("/work/cases/links-loop"))
	if err := os.Symlink(".", loopSession); err != nil {
		return Case{}, fmt.Errorf("creating symlink %s: %w", loopSession, err)
	}
	if err := os.Symlink(root, loopProject); err != nil {
		return Case{}, fmt.Errorf("creating symlink %s: %w", loopProject, err)
	}
	return Case{Name: "symlink-loop", Paths: []string{path, loopSession, loopProject}, Expected: withPath(s.Expected(), path),
		Want: "symlinks looping back into the store are not followed into a loop; the scan ends and the real session stays listed"}, nil
}

// UnreadableDir writes a well-formed session whose directory has mode 000.
// The reader skips it with a logged reason and keeps serving. Processes
// running as root ignore the mode: check PermissionsEnforced before
// asserting the skip.
func UnreadableDir(root string) (Case, error) {
	s := caseSession("case-unreadable-dir", "/work/cases/perm")
	path, err := s.Save(root, Raw)
	if err != nil {
		return Case{}, err
	}
	dir := s.Dir(root)
	if err := os.Chmod(dir, 0); err != nil {
		return Case{}, fmt.Errorf("making %s unreadable: %w", dir, err)
	}
	return Case{Name: unreadableDirName, Paths: []string{dir, path},
		Want: "an unreadable session directory is skipped with a logged reason; other sessions stay listed; never crash"}, nil
}

// PermissionsEnforced reports whether an unreadable directory really cannot
// be read by this process (false when running as root).
func PermissionsEnforced(dir string) bool {
	_, err := os.ReadDir(dir)
	return err != nil
}

// RestoreReadable gives an UnreadableDir case's directory its mode back, so
// t.TempDir can remove it.
func RestoreReadable(c Case) error {
	if len(c.Paths) == 0 {
		return nil
	}
	if err := os.Chmod(c.Paths[0], dirMode); err != nil {
		return fmt.Errorf("restoring mode of %s: %w", c.Paths[0], err)
	}
	return nil
}

// unreadableDirName is the Name of the UnreadableDir case.
const unreadableDirName = "unreadable-dir"

// RestoreAllReadable gives the directory of each UnreadableDir case among
// cases its mode back (RestoreReadable) and leaves the other cases alone:
// what a test that wrote AllCases calls before its root is removed.
func RestoreAllReadable(cases []Case) error {
	var errs []error
	for _, c := range cases {
		if c.Name == unreadableDirName {
			errs = append(errs, RestoreReadable(c))
		}
	}
	return errors.Join(errs...)
}

// AllCases writes every adversarial case under root, in both encodings where
// the case has two. Callers must call RestoreAllReadable
// before removing root.
func AllCases(root string) ([]Case, error) {
	type maker func() (Case, error)
	var makers []maker
	for _, enc := range []Encoding{Raw, Zstd} {
		makers = append(makers,
			func() (Case, error) { return UnparsableBeforeTurnEnd(root, enc) },
			func() (Case, error) { return UnparsableAfterTurnEnd(root, enc) },
			func() (Case, error) { return TornTail(root, enc) },
			func() (Case, error) { return NULInText(root, enc) },
			func() (Case, error) { return HeaderOnly(root, enc) },
			func() (Case, error) { return Version5(root, enc) },
		)
	}
	makers = append(makers,
		func() (Case, error) { return ChecksumFailure(root) },
		func() (Case, error) { return InvalidUTF8(root) },
		func() (Case, error) { return NULPadding(root) },
		func() (Case, error) { return EmptyFile(root) },
		func() (Case, error) { return DuplicateIDs(root) },
		func() (Case, error) { return IdentityMismatchID(root) },
		func() (Case, error) { return IdentityMismatchCwd(root) },
		func() (Case, error) { return FlatLayout(root) },
		func() (Case, error) { return SymlinkLoop(root) },
		func() (Case, error) { return UnreadableDir(root) },
	)
	cases := make([]Case, 0, len(makers))
	for _, m := range makers {
		c, err := m()
		if err != nil {
			return cases, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}
