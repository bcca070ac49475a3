package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// Bounds on reading a mentioned file for its line range.
const (
	// maxLineScanBytes bounds how much of a file is read to count its
	// lines; past it a range is neither checked nor shown.
	maxLineScanBytes = 64 << 20
	// hoverMaxLines and hoverMaxBytes bound the lines a hover shows.
	hoverMaxLines = 40
	hoverMaxBytes = 4 << 10
)

// docFileMention is a file mention at byte offsets of a whole document.
type docFileMention struct {
	completion.Mention
	// Start and End are document offsets (the embedded ones are line
	// offsets).
	Start, End int
}

// fileMentionsIn finds the file mentions of text in order, leaving out
// `@` words inside session mentions (a label may hold one).
func fileMentionsIn(text string, m *Mapper) []docFileMention {
	sessions := sessionref.FindMentions(text)
	var out []docFileMention
	for n := 0; n < m.LineCount(); n++ {
		line, start := m.Line(n)
		for _, fm := range completion.FileMentions(line) {
			s, e := start+fm.Start, start+fm.End
			inside := false
			for _, sm := range sessions {
				if s < sm.End && e > sm.Start {
					inside = true
					break
				}
			}
			if !inside {
				out = append(out, docFileMention{Mention: fm, Start: s, End: e})
			}
		}
	}
	return out
}

// fileLines is what a bounded read of a mentioned file found.
type fileLines struct {
	// Count is the number of lines (a last line without a newline counts);
	// Known is false when the file is too large to count.
	Count int
	Known bool
	// Text holds the lines of the asked range (at most hoverMaxLines
	// lines and hoverMaxBytes bytes), newline-terminated; Cut says the
	// range holds more.
	Text string
	Cut  bool
}

// readLines counts the lines of the workspace file rel and collects the
// lines of r (when r is valid and text is asked for), reading at most
// maxLineScanBytes. Without text it stops once line r.End is seen (Count
// is then r.End). Only regular files are read: a FIFO or device never
// blocks it.
func readLines(root, rel string, r completion.LineRange, text bool) (fileLines, error) {
	name := filepath.Join(root, filepath.FromSlash(rel))
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return fileLines{}, fmt.Errorf("%s is not a regular file", rel)
	}
	f, err := os.Open(name)
	if err != nil {
		return fileLines{}, fmt.Errorf("opening %s: %w", rel, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, maxLineScanBytes+1), 64<<10)
	var out fileLines
	var shown bytes.Buffer
	read := 0
	for {
		line, err := br.ReadSlice('\n')
		read += len(line)
		if len(line) > 0 {
			out.Count++
			n := out.Count
			if !text && r.Valid() && n >= r.End {
				out.Known = true
				return out, nil
			}
			if text && r.Valid() && n >= r.Start && n <= r.End {
				switch {
				case n-r.Start >= hoverMaxLines || shown.Len()+len(line) > hoverMaxBytes:
					out.Cut = true
				default:
					shown.Write(line)
					if line[len(line)-1] != '\n' {
						shown.WriteByte('\n')
					}
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: the rest of it is read by the next calls and
			// must not count as further lines.
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				read += len(line)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileLines{}, fmt.Errorf("reading %s: %w", rel, err)
		}
	}
	out.Known = read <= maxLineScanBytes
	out.Text = strings.ToValidUTF8(shown.String(), string(utf8.RuneError))
	return out, nil
}

// rangeProblem says what is wrong with line range r of the file mention
// whose path has the facts f, with its severity; "" when nothing is.
func rangeProblem(root string, fm completion.Mention, f fileref.FileFacts) (string, int) {
	r := *fm.Lines
	switch {
	case f.Kind == fileref.KindDirectory:
		return fmt.Sprintf("%s is a directory: a line range needs a file", fm.Path), severityError
	case r.Start < 1:
		return "lines are numbered from 1", severityWarning
	case r.End < r.Start:
		return fmt.Sprintf("the range %s is reversed: write L%d-%d", r, r.End, r.Start), severityWarning
	}
	lines, err := readLines(root, fm.Path, r, false)
	if err != nil || !lines.Known {
		return "", 0
	}
	if r.End > lines.Count {
		return fmt.Sprintf("%s has %s: the range %s is past its end", fm.Path, render.Plural(lines.Count, "line", "lines"), r), severityWarning
	}
	return "", 0
}

// fileMentionText is the hover of a file mention: the facts of its path
// and, for a line range of a file, the lines themselves (bounded, fenced
// by more backticks than any run inside them).
func (s *Server) fileMentionText(ctx context.Context, fm completion.Mention, markdown bool) string {
	text := s.fileFactsText(ctx, fm.Path, markdown)
	root := s.workspace()
	if fm.Lines == nil || root == "" {
		return text
	}
	f := fileref.StatMention(root, fm.Path)
	if f.Missing || f.OutsideWorkspace {
		return text
	}
	if msg, _ := rangeProblem(root, fm, f); msg != "" {
		return text + "\n\n" + msg
	}
	r := *fm.Lines
	lines, err := readLines(root, fm.Path, r, true)
	if err != nil || !lines.Known {
		return text + "\n\nLines " + r.String() + " not shown: the file is too large to read"
	}
	head := fmt.Sprintf("Lines %d–%d of %d", r.Start, r.End, lines.Count)
	if r.Start == r.End {
		head = fmt.Sprintf("Line %d of %d", r.Start, lines.Count)
	}
	if lines.Cut {
		head += fmt.Sprintf(" (the first %s shown)", render.Plural(strings.Count(lines.Text, "\n"), "line", "lines"))
	}
	if !markdown {
		return text + "\n\n" + head + "\n" + lines.Text
	}
	fence := render.Fence(lines.Text)
	return fmt.Sprintf("%s\n\n%s\n\n%s%s\n%s%s\n", text, head, fence, fenceLanguage(fm.Path), lines.Text, fence)
}

// fenceLanguage is the info string of a fence for path: its extension when
// that is a plain word ("go", "md"), else nothing.
func fenceLanguage(path string) string {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext == "" || len(ext) > 12 {
		return ""
	}
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return strings.ToLower(ext)
}

// PreparedFile is one file mention of a prepared message, as dsh/prepare
// returns it: the text keeps the mention as written (the agent reads the
// file itself), this says what it names.
type PreparedFile struct {
	// Path is the mentioned path, relative to the workspace root.
	Path string `json:"path"`
	// Kind is "file", "directory", "missing" or "outside" (the workspace).
	Kind string `json:"kind"`
	// Range is the line range written after the path, if any.
	Range *PreparedRange `json:"range,omitempty"`
}

// PreparedRange is a line range as written: lines from 1, end inclusive.
type PreparedRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// preparedFiles lists the file mentions of the texts in mention order.
func (s *Server) preparedFiles(texts []string) []PreparedFile {
	out := []PreparedFile{}
	root := s.workspace()
	for _, text := range texts {
		for _, fm := range fileMentionsIn(text, NewMapper(text, EncodingUTF8)) {
			pf := PreparedFile{Path: fm.Path, Kind: "outside"}
			if root != "" {
				switch f := fileref.StatMention(root, fm.Path); {
				case f.OutsideWorkspace:
				case f.Missing:
					pf.Kind = "missing"
				default:
					pf.Kind = string(f.Kind)
				}
			}
			if fm.Lines != nil {
				pf.Range = &PreparedRange{Start: fm.Lines.Start, End: fm.Lines.End}
			}
			out = append(out, pf)
		}
	}
	return out
}

// blockTexts are the texts of the text blocks among content blocks.
func blockTexts(blocks []json.RawMessage) []string {
	var out []string
	for _, b := range blocks {
		var tb struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &tb) == nil && tb.Type == "text" {
			out = append(out, tb.Text)
		}
	}
	return out
}
