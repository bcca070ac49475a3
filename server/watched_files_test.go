package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// workspaceSees reports whether dsh/files and completion both offer name
// for query.
func workspaceSees(h *harness, query, name string) (files, completion bool) {
	var res []fileResult
	h.mustCall(MethodFiles, map[string]any{"query": query}, &res)
	for _, r := range res {
		files = files || r.Path == name
	}
	uri := "file:///watch-" + query + ".md"
	pos := h.open(uri, "@"+query+cursor, EncodingUTF16)
	var list wireList
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &list)
	h.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	for _, it := range list.Items {
		completion = completion || it.Label == name
	}
	return files, completion
}

// waitSees polls until the workspace offers name for query (want) or
// stops offering it (!want).
func waitSees(t *testing.T, h *harness, query, name string, want bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		f, c := workspaceSees(h, query, name)
		if f == want && c == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: dsh/files %v, completion %v, want both %v", name, f, c, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// watchedFilesHarness serves a fake session index and the real workspace
// index of a fresh workspace, with the fsnotify watcher allowed.
func watchedFilesHarness(t *testing.T, o initOptions) (*harness, string) {
	t.Helper()
	opts, _, ws := testOptions(t)
	opts.Watch = watchModeFsnotify
	opts.OpenFiles = NewFilerefFactory(zap.NewNop())
	h := newHarness(t, opts)
	o.root = ws
	h.initialize(o)
	waitStatus(t, h, func(st statusResult) bool { return st.FilesIndexed > 0 })
	return h, ws
}

func fileEvents(changes ...fileEvent) map[string]any {
	return map[string]any{"changes": changes}
}

// TestWorkspaceWatchedByClient covers clients that register
// workspace/didChangeWatchedFiles: the server asks for a `**/*` watcher
// on the workspace, starts no watcher of its own, and applies what the
// client reports.
func TestWorkspaceWatchedByClient(t *testing.T) {
	for _, relative := range []bool{true, false} {
		t.Run(map[bool]string{true: "relative pattern", false: "glob string"}[relative], func(t *testing.T) {
			h, ws := watchedFilesHarness(t, initOptions{watchedFiles: true, relativePatterns: relative})

			var reg registrationParams
			c := h.await(lsptest.ServerCall("client/registerCapability"))
			if err := json.Unmarshal(c.Params, &reg); err != nil || len(reg.Registrations) == 0 {
				t.Fatalf("client/registerCapability %s: %v", c.Params, err)
			}
			r := reg.Registrations[0]
			if r.Method != "workspace/didChangeWatchedFiles" {
				t.Fatalf("registered %q", r.Method)
			}
			opts, _ := json.Marshal(r.RegisterOptions)
			wantGlob := `"globPattern":"**/*"`
			if relative {
				wantGlob = `"globPattern":{"baseUri":"` + pathToURI(ws) + `","pattern":"**/*"}`
			}
			if !strings.Contains(string(opts), wantGlob) {
				t.Errorf("registerOptions %s, want %s", opts, wantGlob)
			}
			var st statusResult
			h.mustCall(MethodStatus, nil, &st)
			if st.WorkspaceWatch != workspaceWatchClient {
				t.Errorf("workspace watch mode %q, want %q", st.WorkspaceWatch, workspaceWatchClient)
			}

			created := filepath.Join(ws, "sub dir", "zebra.txt")
			if err := os.MkdirAll(filepath.Dir(created), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(created, []byte("z"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A second file, created after zebra.txt and reported: once it
			// is visible, a watcher of the server's own would have had
			// zebra.txt's event first.
			reported := filepath.Join(ws, "yak.txt")
			if err := os.WriteFile(reported, []byte("y"), 0o644); err != nil {
				t.Fatal(err)
			}
			h.notify("workspace/didChangeWatchedFiles", fileEvents(fileEvent{URI: pathToURI(reported), Type: 1}))
			waitSees(t, h, "yak", "yak.txt", true)
			if f, c := workspaceSees(h, "zebra", "sub dir/zebra.txt"); f || c {
				t.Fatal("a file nobody reported became visible: the server watches the workspace itself")
			}
			h.notify("workspace/didChangeWatchedFiles", fileEvents(
				fileEvent{URI: pathToURI(filepath.Dir(created)), Type: 1},
				fileEvent{URI: pathToURI(created), Type: 1}))
			waitSees(t, h, "zebra", "sub dir/zebra.txt", true)

			deleted := filepath.Join(ws, "src", "parser.go")
			waitSees(t, h, "parser", "src/parser.go", true)
			if err := os.Remove(deleted); err != nil {
				t.Fatal(err)
			}
			h.notify("workspace/didChangeWatchedFiles", fileEvents(fileEvent{URI: pathToURI(deleted), Type: 3}))
			waitSees(t, h, "parser", "src/parser.go", false)
		})
	}
}

// TestWorkspaceWatchedByServer covers clients without dynamic
// registration of watched files: nothing is registered and the server's
// own watcher reports a created and a deleted file.
func TestWorkspaceWatchedByServer(t *testing.T) {
	h, ws := watchedFilesHarness(t, initOptions{})
	waitStatus(t, h, func(st statusResult) bool { return st.WorkspaceWatch == watchModeFsnotify })
	created := filepath.Join(ws, "zebra.txt")
	if err := os.WriteFile(created, []byte("z"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitSees(t, h, "zebra", "zebra.txt", true)
	if err := os.Remove(filepath.Join(ws, "src", "parser.go")); err != nil {
		t.Fatal(err)
	}
	waitSees(t, h, "parser", "src/parser.go", false)
	for _, c := range h.serverCalls() {
		if c.Method == "client/registerCapability" {
			t.Errorf("registered %s with a client that cannot watch files", c.Params)
		}
	}
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if st.WorkspaceWatch != watchModeFsnotify {
		t.Errorf("workspace watch mode %q, want fsnotify", st.WorkspaceWatch)
	}
}

// TestWatchedFileChangesDuringBuildAreKept reports a change while the
// workspace index is still building: it is applied once the index is
// published.
func TestWatchedFileChangesDuringBuildAreKept(t *testing.T) {
	opts, _, ws := testOptions(t)
	built, release := make(chan struct{}), make(chan struct{})
	build := NewFilerefFactory(zap.NewNop())
	// The index is walked before the file exists and published after the
	// client reported it.
	opts.OpenFiles = func(ctx context.Context, root string, excluded []string) (Files, error) {
		f, err := build(ctx, root, excluded)
		close(built)
		<-release
		return f, err
	}
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, watchedFiles: true})
	<-built
	created := filepath.Join(ws, "zebra.txt")
	if err := os.WriteFile(created, []byte("z"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.notify("workspace/didChangeWatchedFiles", fileEvents(fileEvent{URI: pathToURI(created), Type: 1}))
	// Notifications are handled in wire order: once this answers, the
	// change has been taken.
	h.mustCall(MethodStatus, nil, nil)
	close(release)
	waitStatus(t, h, func(st statusResult) bool { return st.FilesIndexed > 0 })
	var res []fileResult
	h.mustCall(MethodFiles, map[string]any{"query": "zebra"}, &res)
	if len(res) != 1 || res[0].Path != "zebra.txt" {
		t.Errorf("dsh/files zebra = %+v, want the file reported during the build", res)
	}
}

// TestSessionWatcherDegraded checks that a session watcher falling back to
// polling is said once with window/showMessage and stays in dsh/status.
func TestSessionWatcherDegraded(t *testing.T) {
	opts, fake, _ := testOptions(t)
	fake.degraded = "inotify watch limit reached"
	h := newHarness(t, opts)
	h.initialize(initOptions{})
	waitStatus(t, h, func(st statusResult) bool { return !st.Building })
	h.waitNote(func(n notification) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), fake.degraded)
	})
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if len(h.notesOf("window/showMessage")) != 1 {
		t.Errorf("%d showMessage, want one", len(h.notesOf("window/showMessage")))
	}
	if len(st.Degraded) != 1 || !strings.Contains(st.Degraded[0], fake.degraded) {
		t.Errorf("status degraded %q, want the polling reason", st.Degraded)
	}
}

// TestRefusedRegistrationFallsBackToWatcher covers a client that
// announces dynamic registration of watched files but refuses it: the
// server watches the workspace itself.
func TestRefusedRegistrationFallsBackToWatcher(t *testing.T) {
	opts, _, ws := testOptions(t)
	opts.Watch = watchModeFsnotify
	opts.OpenFiles = NewFilerefFactory(zap.NewNop())
	h := newHarness(t, opts)
	h.editor.Refuse("client/registerCapability")
	h.initialize(initOptions{root: ws, watchedFiles: true})
	waitStatus(t, h, func(st statusResult) bool { return st.FilesIndexed > 0 && st.WorkspaceWatch == watchModeFsnotify })
	if err := os.WriteFile(filepath.Join(ws, "zebra.txt"), []byte("z"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitSees(t, h, "zebra", "zebra.txt", true)
}
