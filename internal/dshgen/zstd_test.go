package dshgen

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// decodeFrame decompresses one frame, verifying its checksum.
func decodeFrame(t *testing.T, frame []byte) ([]byte, error) {
	t.Helper()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	return dec.DecodeAll(frame, nil)
}

// frameTexts splits a zstd log into frames and decodes each.
func frameTexts(t *testing.T, data []byte) []string {
	t.Helper()
	frames, rest, err := SplitFrames(data)
	if err != nil || len(rest) != 0 {
		t.Fatalf("splitting frames: %v (rest %d bytes)", err, len(rest))
	}
	var out []string
	for i, f := range frames {
		if !FrameHasChecksum(f) {
			t.Errorf("frame %d has no content checksum", i+1)
		}
		text, err := decodeFrame(t, f)
		if err != nil {
			t.Fatalf("frame %d: %v", i+1, err)
		}
		out = append(out, string(text))
	}
	return out
}

func TestZstdFramesFollowSpec(t *testing.T) {
	s := NewSession("frames").Cwd("/p").
		Descriptor("child").
		Turn(func(t *Turn) { t.UserText("one"); t.AssistantText("uno") }).
		Turn(func(t *Turn) { t.UserText("two"); t.AssistantText("dos") }).
		Title("loose", "user").Ignorable("x/y")
	data, err := s.Bytes(Zstd)
	if err != nil {
		t.Fatal(err)
	}
	texts := frameTexts(t, data)
	rawText, err := s.Bytes(Raw)
	if err != nil {
		t.Fatal(err)
	}
	header := string(s.headerBytes())
	// header | loose descriptor | turn 1 | turn 2 | loose title+ignorable
	wantLines := []int{1, 1, 4, 4, 2}
	if len(texts) != len(wantLines) {
		t.Fatalf("%d frames, want %d", len(texts), len(wantLines))
	}
	if texts[0] != header {
		t.Errorf("frame 1 = %q, want exactly the header line", texts[0])
	}
	for i, text := range texts {
		if !strings.HasSuffix(text, "\n") || strings.Count(text, "\n") != wantLines[i] {
			t.Errorf("frame %d holds %d lines (%q), want %d complete lines", i+1, strings.Count(text, "\n"), text, wantLines[i])
		}
	}
	if strings.Join(texts, "") != string(rawText) {
		t.Error("frames do not decode to the raw log")
	}
}

func TestZstdCLIReadsLogs(t *testing.T) {
	bin, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("zstd command not installed")
	}
	root := t.TempDir()
	s := everyEventSession("cli")
	path, err := s.Save(root, Zstd)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-dc", path).Output()
	if err != nil {
		t.Fatalf("zstd -dc: %v", err)
	}
	want, _ := s.Bytes(Raw)
	if !bytes.Equal(out, want) {
		t.Error("zstd -dc output differs from the raw log")
	}
}

func TestAppendAddsBatches(t *testing.T) {
	for _, enc := range []Encoding{Raw, Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			root := t.TempDir()
			s := NewSession("grow").Cwd("/p").Turn(func(t *Turn) { t.UserText("one") })
			path, err := s.Save(root, enc)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			s.Turn(func(t *Turn) { t.UserText("two"); t.Title("Two", "user") }).Ignorable("later")
			if err := s.Append(path); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.HasPrefix(after, before) {
				t.Fatal("append rewrote existing bytes")
			}
			checkAgainstExpected(t, path, s.Expected())
			if enc == Zstd {
				if got := len(frameTexts(t, after)); got != 4 {
					t.Errorf("%d frames after append, want header + 1 + 2 new", got)
				}
			}
			// Nothing new: appending again changes nothing.
			if err := s.Append(path); err != nil {
				t.Fatal(err)
			}
			again, _ := os.ReadFile(path)
			if !bytes.Equal(again, after) {
				t.Error("an empty append changed the file")
			}
		})
	}
}

func TestAppendTornLeavesTornTail(t *testing.T) {
	for _, enc := range []Encoding{Raw, Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			root := t.TempDir()
			s := NewSession("torn").Cwd("/p").Turn(func(t *Turn) { t.UserText("one") })
			path, err := s.Save(root, enc)
			if err != nil {
				t.Fatal(err)
			}
			complete, _ := os.ReadFile(path)
			s.Turn(func(t *Turn) { t.UserText("two"); t.AssistantText("three") })
			finish, err := s.AppendTorn(path)
			if err != nil {
				t.Fatal(err)
			}
			torn, _ := os.ReadFile(path)
			if len(torn) <= len(complete) || !bytes.HasPrefix(torn, complete) {
				t.Fatal("torn append wrote nothing or rewrote the log")
			}
			if enc == Raw {
				if torn[len(torn)-1] == '\n' {
					t.Error("raw torn tail ends in a newline")
				}
			} else {
				frames, rest, err := SplitFrames(torn)
				if err != nil || len(rest) == 0 || len(frames) != 2 {
					t.Errorf("want 2 complete frames and a partial one, got %d, rest %d, %v", len(frames), len(rest), err)
				}
			}
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			checkAgainstExpected(t, path, s.Expected())
		})
	}
}

func TestSplitFramesRejectsGarbage(t *testing.T) {
	if _, _, err := SplitFrames([]byte("not zstd at all")); err == nil {
		t.Error("garbage split without error")
	}
	frames, rest, err := SplitFrames(nil)
	if err != nil || len(frames) != 0 || len(rest) != 0 {
		t.Errorf("empty input: %d frames, rest %d, %v", len(frames), len(rest), err)
	}
}
