package editors

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSkipIfPassedEarlierWaitsForTheStep: while the CI step still writes
// its events (PATH.part), the check waits for PATH and then finds a pass
// only where one is recorded; with neither file, or past the deadline, it
// says why (and the test then runs).
func TestSkipIfPassedEarlierWaitsForTheStep(t *testing.T) {
	const pkg = "github.com/dsh-refls/dsh-refls/editors"
	for _, tt := range []struct {
		name        string
		action      string // the step's verdict; "" writes no file at all
		ends        bool   // the step renames PATH.part to PATH when waited for
		wantPass    bool
		wantErr     bool
		wantWaiting bool
	}{
		{"pass", "pass", true, true, false, true},
		{"fail", "fail", true, false, false, true},
		{"no step", "", false, false, true, false},
		{"step never ends", "pass", false, false, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.json")
			const name = "TestVSCodeExtension"
			if tt.action != "" {
				ev := fmt.Sprintf(`{"Action":"run","Package":%q,"Test":%q}`+"\n"+`{"Action":%q,"Package":%q,"Test":%q}`+"\n",
					pkg, name, tt.action, pkg, name)
				if err := os.WriteFile(path+ranPartSuffix, []byte(ev), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			waited := false
			waiting := func() {
				waited = true
				if tt.ends {
					if err := os.Rename(path+ranPartSuffix, path); err != nil {
						t.Error(err)
					}
				}
			}
			deadline := time.Now().Add(time.Minute)
			if !tt.ends {
				deadline = time.Now().Add(300 * time.Millisecond)
			}
			passed, err := passedIn(path, name, deadline, waiting)
			if passed != tt.wantPass || (err != nil) != tt.wantErr || waited != tt.wantWaiting {
				t.Errorf("passed %v, error %v, waited %v; want %v, an error %v, waited %v", passed, err, waited, tt.wantPass, tt.wantErr, tt.wantWaiting)
			}
		})
	}
}
