package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// Shorten cuts s to at most n runes, on one line.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Plural writes n with the singular or plural noun.
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Bytes writes a byte count as a person reads it: "512 bytes", "44 KB",
// "3.2 MB" (1 KB = 1024 bytes).
func Bytes(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// Age says how long before now the time createdAtMs (Unix ms) was.
func Age(now time.Time, createdAtMs int64) string {
	d := now.Sub(time.UnixMilli(createdAtMs))
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	default:
		return strconv.Itoa(int(d.Hours()/24)) + "d ago"
	}
}

// ErrorText is the human text of an error for a person to read: the
// contract codes it carries are taken out (a diagnostic's code and a
// JSON-RPC error's data.code carry them once).
func ErrorText(err error) string {
	msg := err.Error()
	for _, c := range sessionref.AllCodes {
		msg = strings.ReplaceAll(msg, string(c)+": ", "")
	}
	return msg
}
