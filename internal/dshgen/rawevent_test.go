package dshgen

import (
	"bytes"
	"testing"
)

func TestSkipSeqAndRawUserText(t *testing.T) {
	s := NewSession("raw-1").Cwd("/w")
	s.UserText("a").SkipSeq(2).RawUserText(`x\ud800y`, true).SkipSeq(-1).RawUserText("1", false)
	raw, err := s.Bytes(Raw)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	if len(lines) != 4 {
		t.Fatalf("want header and 3 events, got %d lines:\n%s", len(lines), raw)
	}
	for i, want := range []string{`"seq":0,`, `"seq":3,`, `"seq":3,`} {
		if !bytes.Contains(lines[i+1], []byte(want)) {
			t.Errorf("event %d: want %s in %s", i, want, lines[i+1])
		}
	}
	if !bytes.Contains(lines[2], []byte(`"text":"x\ud800y"`)) {
		t.Errorf("the raw body must be written as given: %s", lines[2])
	}
	if !bytes.Contains(lines[3], []byte(`"text":1}`)) {
		t.Errorf("an unquoted body is a raw JSON value: %s", lines[3])
	}
	if got := s.LastSeq(); got != 3 {
		t.Errorf("LastSeq = %d, want 3", got)
	}
}
