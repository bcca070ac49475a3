package dshgen

import (
	"fmt"
	"strings"
	"time"
)

// DefaultDemoWorkspace is the workspace cwd DemoStore uses.
const DefaultDemoWorkspace = "/work/demo-workspace"

// Other projects of the demo store.
const (
	demoShop  = "/home/dev/webshop"
	demoNotes = "/home/dev/notes ünï"
)

// demoLongTurns is how many turns the long demo session has; with
// demoLongParagraphs paragraphs per reply it is roughly 100 KB, well over a
// small budget such as 16 KB, so preparing it truncates.
const (
	demoLongTurns      = 24
	demoLongParagraphs = 6
)

// DemoStore writes a small believable store under root for demos: 9 sessions
// over 3 projects (DefaultDemoWorkspace among them) and one without a cwd,
// dated relative to now, mixed as in a store upgraded to dsh 0.2: v0 and v3
// logs, a v4 session, and a v0 session with its migrated v4 generation.
func DemoStore(root string, now time.Time) error {
	_, err := DemoStoreFor(root, DefaultDemoWorkspace, now)
	return err
}

// DemoStoreFor is DemoStore with the workspace cwd given; it returns the
// facts of every session it wrote.
func DemoStoreFor(root, workspace string, now time.Time) ([]Expected, error) {
	ms := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
	type entry struct {
		s   *Session
		enc Encoding
	}
	var out []entry
	add := func(s *Session, enc Encoding) { out = append(out, entry{s, enc}) }

	add(NewSession("2b7e151c-7a2d-4c5e-9f01-0a6f3c1d9e21").Cwd(workspace).CreatedAt(ms(72*time.Hour)).
		Turn(func(t *Turn) {
			t.UserText("The login test fails about one run in ten. Find out why.")
			t.UserPlugin("@deepseek-ai/dsh-system-prompt", "Current runtime context: workspace-write.")
			t.Title("Fix flaky login test", "provider")
			t.Step(func() {
				t.ReasoningChunks("Look", " at", " the", " test", " first", ".")
				t.AssistantToolCall("call_read_1", "read", `{"file_path":"tests/login.spec.ts"}`)
				t.ToolResult("call_read_1", "await page.click('#submit');\nexpect(await page.title()).toBe('Home');", false)
			})
			t.Step(func() {
				t.TextChunks("The", " test", " reads", " the", " title", " too", " early", ".")
				t.AssistantReasoning("The assertion races the navigation.",
					"The test reads the page title before navigation finishes. Waiting for the URL to change first removes the race.")
			})
		}).
		Turn(func(t *Turn) {
			t.UserText("Make that change and run the test twenty times.")
			t.AssistantText("Done: `await page.waitForURL('**/home')` before the assertion; 20 of 20 runs pass.")
		}), Raw)

	rate := NewSession("5d9c0c8e-3f4a-4b61-8e2f-6a7b1c0d2e34").Cwd(workspace).CreatedAt(ms(50 * time.Hour))
	rate.Turn(func(t *Turn) {
		t.UserText("Add rate limiting to the public API: 100 requests per minute per key.")
		t.Title("Add rate limiting to the API", "provider")
		t.AssistantText("I will add a token bucket middleware in `api/middleware/ratelimit.go` keyed by API key.")
	})
	first, second := int64(1), rate.LastSeq()-1
	rate.Turn(func(t *Turn) {
		t.Checkpoint("Summary of earlier work: a token bucket rate limiter (100/min per key) was designed for the public API.", first, second)
		t.UserText("Now return a Retry-After header when a request is rejected.")
		t.AssistantText("Rejected requests now get `429` with `Retry-After` set to the seconds until the bucket refills.")
	})
	add(rate, Zstd)

	parentID := "8a1f4e2b-0c3d-4e5f-8a9b-1c2d3e4f5a6b"
	childID := "9b2a5f3c-1d4e-4f60-9bac-2d3e4f5a6b7c"
	add(NewSession(parentID).Cwd(workspace).CreatedAt(ms(30*time.Hour)).Turn(func(t *Turn) {
		t.UserText("Refactor the config loader so every package reads settings through one place.")
		t.Title("Refactor config loader", "fallback")
		t.AssistantToolCall("call_spawn_1", "subagent", `{"description":"Audit config call sites","prompt":"List every call site that reads configuration directly."}`)
		t.ToolResult("call_spawn_1", "started subagent "+childID, false)
		t.AssistantText("A subagent is auditing the call sites; I will refactor once it reports.")
	}), Zstd)
	add(NewSession(childID).Cwd(workspace).CreatedAt(ms(30*time.Hour-time.Minute)).Parent(parentID).
		Descriptor("Audit config call sites").
		Turn(func(t *Turn) {
			t.UserText("List every call site that reads configuration directly.")
			t.Title("List every call site that", "fallback")
			t.AssistantText("Seven call sites: cmd/server/main.go, internal/db/pool.go, internal/mail/smtp.go, internal/cache/redis.go, internal/auth/jwt.go, internal/jobs/cron.go, internal/http/cors.go.")
		}), Raw)

	long := NewSession("c4d5e6f7-0819-4a2b-8c3d-4e5f60718293").Cwd(workspace).CreatedAt(ms(6 * time.Hour))
	for i := range demoLongTurns {
		long.Turn(func(t *Turn) {
			t.UserText(fmt.Sprintf("Step %d of the billing migration: what changes, and what can go wrong?", i+1))
			if i == 0 {
				t.Title("Migration plan for the billing database", "provider")
			}
			t.AssistantText(demoParagraphs(i, demoLongParagraphs))
		})
	}
	add(long, Raw)

	add(NewSession("d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6").Cwd(demoShop).CreatedAt(ms(96*time.Hour)).
		Turn(func(t *Turn) {
			t.UserText("The checkout page wraps the price onto two lines on small phones.")
			t.Title("Checkout page layout", "fallback")
			t.AssistantLegacy("The price column has a fixed width of 80px; making it `min-content` keeps it on one line.")
			t.SteeringFlat("Also check the order summary on the same page.")
			t.AssistantLegacy("The order summary had the same fixed width; both now use `min-content`.")
		}), Raw)

	search := NewSession("e7f8a9b0-c1d2-4e3f-9a4b-5c6d7e8f9a0b").Cwd(demoShop).CreatedAt(ms(20 * time.Hour))
	search.Turn(func(t *Turn) {
		t.UserText("Product search takes two seconds. Investigate.")
		t.Title("Investigate slow product search", "provider")
		t.AssistantText("The search runs a LIKE query without an index.")
	})
	// The older generation holds only the first turn; the successor below is
	// the whole session in the v3 format, and the highest generation wins.
	if _, err := search.Save(root, Raw); err != nil {
		return nil, err
	}
	add(NewSession(search.ID()).Cwd(demoShop).CreatedAt(ms(20*time.Hour)).Generation(3).
		Turn(func(t *Turn) {
			t.UserText("Product search takes two seconds. Investigate.")
			t.SystemMessage("Context window is 80% full.")
			t.Title("Investigate slow product search", "provider")
			t.AssistantText("The search runs a LIKE query without an index.")
		}).
		Turn(func(t *Turn) {
			t.UserText("Add a trigram index and measure again.")
			t.AssistantText("With a pg_trgm GIN index the query takes 40 ms instead of 2 s.")
		}), Zstd)

	// A session dsh 0.2 started: format v4 only.
	add(NewV4Session("f0a1b2c3-d4e5-4f60-8172-839405a6b7c8").Cwd(demoNotes).CreatedAt(ms(3*time.Hour)).
		Turn(func(t *Turn) {
			t.SystemMessage("")
			t.UserText("Summarise this week's notes in five bullet points.")
			t.UserSource("runtime-context", "Current runtime context: workspace-write.")
			t.Title("Summarise this week's notes", "fallback")
			t.AssistantText("- Shipped rate limiting\n- Login test fixed\n- Billing migration planned\n- Search 50× faster\n- Config refactor started")
		}).
		Turn(func(t *Turn) {
			t.UserText("Turn that into an email to the team.")
			t.Title("Weekly notes <summary> & email", "user")
			t.AssistantText("Subject: This week\n\nHi all — rate limiting shipped, the login test is fixed, and search is 50× faster. Billing migration and config refactor are next.")
		}), Raw)

	// A session started before the upgrade and resumed in dsh 0.2: the
	// untouched original, and beside it the migrated v4 generation (one
	// large body frame) with a further turn and a newer title.
	const regexID = "0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9"
	regexQ := "What does the regex `^(?:\\d{3}-){2}\\d{4}$` match?"
	regexA := "Phone numbers like 555-123-4567: two groups of three digits with dashes, then four digits."
	original := NewSession(regexID).CreatedAt(ms(90 * time.Minute)).Turn(func(t *Turn) {
		t.UserText(regexQ)
		t.Title("Regex question", "fallback")
		t.AssistantText(regexA)
	})
	if _, err := original.Save(root, Zstd); err != nil {
		return nil, err
	}
	add(NewV4Session(regexID).CreatedAt(ms(90*time.Minute)).MigratedBody().
		Turn(func(t *Turn) {
			t.UserText(regexQ)
			t.Title("Regex question", "fallback")
			t.AssistantText(regexA)
		}).
		Turn(func(t *Turn) {
			t.UserText("And with an optional +1 prefix?")
			t.Title("Quick question about a regex", "provider")
			t.AssistantText("`^(?:\\+1 )?(?:\\d{3}-){2}\\d{4}$` also accepts +1 555-123-4567.")
		}), Zstd)

	facts := make([]Expected, 0, len(out))
	for _, e := range out {
		path, err := e.s.Save(root, e.enc)
		if err != nil {
			return nil, fmt.Errorf("writing demo session %s: %w", e.s.ID(), err)
		}
		x := e.s.Expected()
		x.Path = path
		facts = append(facts, x)
	}
	return facts, nil
}

// demoSentences make up the long demo session's replies.
var demoSentences = []string{
	"The billing tables move to the new cluster one schema at a time.",
	"Writes go to both databases while the backfill runs, and reads switch only after the checksums match.",
	"The invoice numbering sequence must be copied with a safety gap so that no number is ever reused.",
	"Foreign keys to the customers table are checked after each batch, not per row, to keep the backfill fast.",
	"If replication lag passes thirty seconds, the backfill pauses until it recovers.",
	"Rollback means pointing reads back at the old cluster; nothing on the old side is deleted until a week later.",
	"Monthly reports run against a snapshot so that they never see a half-migrated month.",
	"Each step ends with a dry run in staging that uses last night's production dump.",
}

// demoParagraphs builds n paragraphs of the long session's reply for turn i.
func demoParagraphs(i, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d.\n\n", i+1)
	for p := range n {
		for k := range len(demoSentences) {
			b.WriteString(demoSentences[(i+p+k)%len(demoSentences)])
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String())
}

// DemoNoise writes n sessions in workspace, each newer than every session
// of the demo store, whose text holds common words that contain "rate" or
// "gen" inside them ("generated code", "separate code", "accurate"), and
// whose titles hold none of them: what a real store holds plenty of, and
// what a body search that matches inside words ranked above the file named
// "rate plan.md" for @rate. Their ids start with "noise-".
func DemoNoise(root, workspace string, now time.Time, n int) error {
	lines := []string{
		"The generated code compiles; keep the separate code paths as they are.",
		"Regenerate the client and check the accurate figures in the separate report.",
		"Moderate changes only: the generated code is reviewed separately.",
	}
	for i := range n {
		s := NewSession(fmt.Sprintf("noise-%03d", i)).Cwd(workspace).CreatedAt(now.Add(-time.Duration(i+1) * time.Minute).UnixMilli()).
			Turn(func(t *Turn) {
				t.UserText(lines[i%len(lines)])
				t.Title(fmt.Sprintf("Code review %d", i+1), "provider")
				t.AssistantText(lines[(i+1)%len(lines)])
			})
		if _, err := s.Save(root, Raw); err != nil {
			return fmt.Errorf("writing noise session %d: %w", i, err)
		}
	}
	return nil
}
