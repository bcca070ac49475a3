package prepare

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// TestPrepareLargeMessageAllocatesLittle prepares a session whose one user
// message is 8 MiB, twice: each preparation allocates less than twice the
// message (the line is read into one buffer of its size, its text decoded
// over it, the spill rendered through a small buffer), and the second one
// reuses the spill of the first without writing it. Before, one
// preparation allocated about 19 times the message.
func TestPrepareLargeMessageAllocatesLittle(t *testing.T) {
	const size = 8 << 20
	s := logtest.NewStore(t)
	s.Simple("big", "/work/big", logtest.FixtureTime, logtest.UserMsg(0, strings.Repeat("0123456789abcdef", size/16)),
		logtest.AssistantMsg(1, "Done."), logtest.TitleEvent(2, "Big"))
	ix := buildIndex(s)
	spillDir := filepath.Join(t.TempDir(), "spill")
	text := "see " + sessionref.Mention("Big", "big")
	var first os.FileInfo
	for call := range 2 {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		res, err := PrepareText(context.Background(), ix.Snapshot(), "target", text, ModeReplace, nil, Limits{SpillDir: spillDir})
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatal(err)
		}
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc >= 2*size {
			t.Errorf("call %d allocated %.1f MiB for an %d MiB message, want < 2×", call+1, float64(alloc)/(1<<20), size>>20)
		}
		files := spillFilesUnder(t, spillDir)
		if len(files) != 1 {
			t.Fatalf("call %d: %d spill files, want 1", call+1, len(files))
		}
		// The prompt names the spill file inside JSON text, where a
		// Windows path's backslashes are escaped: look for its name.
		if name := filepath.Base(files[0]); !strings.Contains(res.AdditionalContext.Content[0].Text, name) {
			t.Errorf("call %d: the prompt does not name %s", call+1, name)
		}
		info, err := os.Stat(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() < size {
			t.Errorf("spill of %d bytes, less than the message", info.Size())
		}
		if first == nil {
			first = info
		} else if !os.SameFile(first, info) || !info.ModTime().Equal(first.ModTime()) {
			t.Errorf("the second preparation wrote the spill again")
		}
	}
}
