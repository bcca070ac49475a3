package titles

import "testing"

func TestWindowsPathKey(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`C:\Users\me\proj`, `c:\users\ME\proj`, true},
		{`C:\Users\me\proj`, `c:/Users/me/proj`, true},
		{`C:\Users\me\proj\`, `c:\Users\me\proj`, true},
		{`C:\`, `c:/`, true},
		{`C:\Users\me\proj`, `C:\Users\me\proj2`, false},
		{`C:\Users\me\proj`, `D:\Users\me\proj`, false},
	} {
		if got := windowsPathKey(tc.a) == windowsPathKey(tc.b); got != tc.same {
			t.Errorf("%q and %q: the same directory on Windows %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
