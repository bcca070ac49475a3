package dshlog

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// TestReadLogLineAcrossFrames: a line split across two complete frames is
// read (dsh feeds frames to one line scanner); complete frames that end
// inside a line are corruption.
func TestReadLogLineAcrossFrames(t *testing.T) {
	line := userMsg(1, "split across two frames")
	head := zstdFrame([]string{v0Header})
	first := appendFrame(nil, []byte(userMsg(0, "a")+"\n"+line[:20]))
	second := appendFrame(nil, []byte(line[20:]+"\n"))
	data := append(append(append([]byte{}, head...), first...), second...)
	log, err := readTestLog(t, layout.EncodingZstd, data)
	if err != nil {
		t.Fatal(err)
	}
	want := []turn{{RoleUser, "a"}, {RoleUser, "split across two frames"}}
	if got := turnsOf(log); !reflect.DeepEqual(got, want) || log.lastSeq != 1 {
		t.Errorf("turns %+v last seq %d, want %+v and 1", got, log.lastSeq, want)
	}
	_, err = readTestLog(t, layout.EncodingZstd, append(append([]byte{}, head...), first...))
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Errorf("complete frames ending inside a line: err %v, want *CorruptError", err)
	}
}

// TestReadLogTornFramePrefix: a long last frame cut inside its last block
// still gives the complete lines of the blocks that decode (issue 16
// item 3: a 718-message log cut there captures through seq 717).
func TestReadLogTornFramePrefix(t *testing.T) {
	var lines []string
	for i := 0; i < 718; i++ {
		lines = append(lines, userMsg(int64(i), fmt.Sprintf("message %d %s", i, incompressible(600))))
	}
	data, _ := zstdLog(v0Header, nil)
	frame := zstdFrame(lines)
	cut := append(data, frame[:len(frame)-200]...)
	log, err := readTestLog(t, layout.EncodingZstd, cut)
	if err != nil {
		t.Fatal(err)
	}
	got := len(turnsOf(log))
	if got < 500 || got >= 718 || log.lastSeq != int64(got-1) {
		t.Errorf("%d messages through seq %d from a frame cut in its last block; want most of the 718, contiguous", got, log.lastSeq)
	}
	full, err := readTestLog(t, layout.EncodingZstd, append(data, frame...))
	if err != nil || full.lastSeq != 717 || len(turnsOf(full)) != 718 {
		t.Errorf("whole frame: %v, last seq %d", err, full.lastSeq)
	}
}
