package main

import (
	"context"
	"math/rand"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// brute is the reference answer: every session's projection read with
// dshlog.ReadProjection and folded independently of the index (whole
// messages through cases.Fold), checked by plain substring search.
type brute struct {
	took      time.Duration
	textBytes int64
	sessions  int
	failed    int
	// hits[q] are the sessions holding every term of checks[q], newest first.
	hits map[string][]string
}

// terms splits a query as the index does for unquoted words.
func terms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(q, unicode.IsSpace) {
		out = append(out, cases.Fold().String(w))
	}
	return out
}

// project reads every listed session once, with two workers, and records
// which sessions hold each check query. sample receives one folded
// message text in every few, for picking queries; it runs on one goroutine.
func project(ctx context.Context, snap *titles.Snapshot, checks []string) *brute {
	t0 := time.Now()
	type res struct {
		i     int
		bytes int64
		ok    bool
		has   []bool
	}
	checkTerms := make([][]string, len(checks))
	for i, q := range checks {
		checkTerms[i] = terms(q)
	}
	out := make([]res, len(snap.Sessions))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fold := cases.Fold()
			for i := range next {
				r := res{i: i}
				p, err := dshlog.ReadProjection(ctx, snap.Sessions[i])
				if err == nil {
					r.ok = true
					texts := make([]string, len(p.Messages))
					for k, m := range p.Messages {
						r.bytes += int64(len(m.Text))
						texts[k] = fold.String(m.Text)
					}
					r.has = make([]bool, len(checks))
					for c, ts := range checkTerms {
						r.has[c] = allIn(ts, texts)
					}
				}
				out[i] = r
			}
		}()
	}
	for i := range snap.Sessions {
		next <- i
	}
	close(next)
	wg.Wait()
	b := &brute{took: time.Since(t0), sessions: len(snap.Sessions), hits: map[string][]string{}}
	for _, r := range out { // snap.Sessions is newest first
		if !r.ok {
			b.failed++
			continue
		}
		b.textBytes += r.bytes
		for c, q := range checks {
			if r.has[c] {
				b.hits[q] = append(b.hits[q], snap.Sessions[r.i].ID)
			}
		}
	}
	return b
}

func allIn(ts, texts []string) bool {
	for _, t := range ts {
		found := false
		for _, x := range texts {
			if strings.Contains(x, t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// pickQueries takes n 20-character windows starting at word starts of
// the projected text of random sessions, plus misses: a real word with a
// suffix no text holds.
func pickQueries(ctx context.Context, snap *titles.Snapshot, n int, seed int64) []string {
	rnd := rand.New(rand.NewSource(seed))
	var out []string
	for tries := 0; len(out) < n && tries < 50*n && len(snap.Sessions) > 0; tries++ {
		e := snap.Sessions[rnd.Intn(len(snap.Sessions))]
		p, err := dshlog.ReadProjection(ctx, e)
		if err != nil || len(p.Messages) == 0 {
			continue
		}
		text := p.Messages[rnd.Intn(len(p.Messages))].Text
		if len(text) < 40 {
			continue
		}
		at := rnd.Intn(len(text) - 30)
		for at < len(text) && text[at] != ' ' {
			at++
		}
		at++
		if at+20 > len(text) {
			continue
		}
		q := []rune{}
		for _, r := range text[at:] {
			if len(q) == 20 {
				break
			}
			if r == '\n' || r == '"' || !utf8.ValidRune(r) {
				r = ' '
			}
			q = append(q, r)
		}
		s := strings.TrimSpace(string(q))
		if utf8.RuneCountInString(s) < 10 {
			continue
		}
		out = append(out, s)
	}
	return append(out, misses...)
}

// misses end pickQueries' list: a real word with a suffix no text holds,
// every gram but the last few common.
var misses = []string{"deploymentzq", "watcherqxv"}

// prefixes are the keystrokes typing q, from 3 characters on.
func prefixes(q string) []string {
	r := []rune(q)
	var out []string
	for n := 3; n <= len(r); n++ {
		out = append(out, string(r[:n]))
	}
	return out
}

// checked are the prefixes whose answers are compared with brute force.
func checked(q string) []string {
	p := prefixes(q)
	var out []string
	for _, n := range []int{3, 6, 10} {
		if n-3 < len(p) {
			out = append(out, p[n-3])
		}
	}
	return append(out, q)
}
