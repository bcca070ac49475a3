package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSetRunsOnTheServer types the whole set into a server built from
// this tree, then (--picks) replays its history of picks and types it
// again. It fails when the set cannot be run (malformed, or the server
// does not list the store) or a pick is not counted exactly once, never on
// the figures, which it logs.
func TestSetRunsOnTheServer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the server with:", err)
	}
	bin := filepath.Join(t.TempDir(), "dsh-refls")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/dsh-refls")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the server: %v\n%s", err, out)
	}
	s, err := parseSet(defaultSet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	res, err := run(ctx, config{bin: bin, set: s, worst: 10, readyWithin: time.Minute, picks: true}, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.outs["A"]); got != len(s.Queries) {
		t.Fatalf("%d outcomes for %d queries", got, len(s.Queries))
	}
	pr := res.picks["A"]
	if pr == nil || len(pr.after) != len(s.Queries) || len(pr.replayed) == 0 {
		t.Fatalf("the picks were not replayed: %+v", pr)
	}
	// Every pick ran its item's command (the edit was applied first, as an
	// editor does) and the server counted each once.
	if pr.commands != len(pr.replayed) || pr.counted != pr.commands {
		t.Errorf("%d picks, %d commands run, %d counted by the server: want all equal", len(pr.replayed), pr.commands, pr.counted)
	}
}
