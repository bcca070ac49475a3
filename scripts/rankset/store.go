package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// The store of the ranking set: the sessions of one person over a month,
// in three projects and none. The workspace the set is typed in is the
// ledger project (workspace.go); the others are elsewhere on the disk.
// Everything is fixed — ids, times, text — so every run lists the same
// sessions in the same order, and the queries in testdata/queries.json can
// name them by id.
const (
	projLedger     = "/home/mara/src/ledger"
	projStorefront = "/home/mara/src/storefront"
	projNotes      = "/home/mara/notes"
)

// start is the time of day 0; a session of day d starts d days later.
var start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func day(d float64) int64 {
	return start.Add(time.Duration(d * float64(24*time.Hour))).UnixMilli()
}

// The log formats written: v0 (dsh 0.1), v2 and v3 (later 0.1.x), v4
// (dsh 0.2), raw or zstd.
type format struct {
	version int
	enc     dshgen.Encoding
}

var (
	v0  = format{0, dshgen.Raw}
	v0z = format{0, dshgen.Zstd}
	v2  = format{2, dshgen.Raw}
	v3z = format{3, dshgen.Zstd}
	v4  = format{4, dshgen.Raw}
	v4z = format{4, dshgen.Zstd}
)

// exchange is one turn: what the user asked and what the assistant said.
type exchange struct{ user, assistant string }

// spec is one ordinary session: a title set after the first request
// ("" for none), one turn per exchange.
type spec struct {
	id, cwd string // cwd "" writes none
	day     float64
	format  format
	title   string
	turns   []exchange
}

// The sessions the queries name. Their ids are random v4 UUIDs, as dsh's.
const (
	idRounding    = "3f75b21f-6fb4-4760-a631-8fec6943484e"
	idRateLimit   = "8933af3d-356c-49da-bdf1-fb088d375302"
	idPostgres    = "c06292fb-a23c-4d7b-ba1b-5b2ac37d1653"
	idWebhooks    = "369593cf-d498-45bc-9a8f-884b9f6517a4"
	idCurrency    = "f33ebf9c-4108-4f68-bcc0-6732f45f1895"
	idCurrencySub = "2161e130-9d81-4571-9288-68ebd15af51a"
	idFlaky       = "4b075e5b-e016-44f6-8d77-0e1292c56716"
	idDockerfile  = "f0c45583-af56-4667-9be1-eb69fda0e4ec"
	idAuditLog    = "ba7f248a-a748-496e-a803-3bf4eb685289"
	idStatement   = "92efbdc4-c4d6-4375-97cb-528b2092de59"
	idUntitled    = "0355c1b7-9bc5-472a-aa6b-13aaef2864f1"
	idVAT         = "01a228b4-e2c0-4d33-b063-802e8bc5e7b7"
	idLint        = "3ddb03a5-5232-4a57-a144-a9ff4b44b34d"
	idRefund      = "84605eb6-a39d-4009-b65c-18feb790157b"
	idConfig      = "1f478b8d-c87f-4e2c-bc86-fc1048cfb4e4"
	idExportCJK   = "db7e3ea7-72a1-4e8a-b7e8-00904c6e1221"
	idTimeout     = "ae4c9c0d-0df3-4803-bfba-8ba8f9deb670"
	idGoUpgrade   = "f993955f-9eb5-4249-9d53-5df2074872ef"
	idNumbering   = "134237e6-5da9-44ed-b2d3-23a9f96ddc55"

	idSafari     = "f7a352cd-73cb-4f46-9641-97cb688778b5"
	idSearch     = "7a6f7d6f-4bc9-4c0f-a8d6-2445cb2e8b9c"
	idDarkMode   = "5c4a802e-9517-471e-8958-cdf83ca42ef3"
	idCartBadge  = "07eaca23-0abf-4fef-8d64-777e7552b9ac"
	idStarRating = "1131272c-237f-4f68-b88e-11d2a7e62c5b"
	idLighthouse = "1b29d74e-e9af-415f-bdb5-2e8086299754"
	idPrint      = "99766152-f2d6-4479-9ebc-55bcda9baff7"
	idGerman     = "408cff3d-35d6-41c9-91d0-98a4dac3f43d"
	idGermanSub  = "ee9c25e9-8ccc-4049-bca3-9638efd4e6b8"
	idLoginCJK   = "02d00bc2-0ad1-4801-b272-12b52c1e938b"
	idCartKorean = "7c2c98fc-5f3e-4437-8063-db8e8974ab4b"
	idWeekly     = "31e610e9-88c2-46aa-9e5c-2fa3505be773"
	idReading    = "b7ac312f-04b1-40f6-8228-82386ce88044"
	idBlog       = "0f11b38d-7c5e-43e5-8921-918c1c1d9237"
	idKyoto      = "14af1f0f-8e6b-4a40-add9-ae69cc011897"
	idBudget     = "6c0c7064-2a04-4c19-b594-02a365351b02"
	idGifts      = "add6a478-07ac-456d-b688-21839c59a420"
	idIBAN       = "9bdca3db-3e50-4387-9132-bf8b5c1beae5"
	idRebase     = "18636bcd-e80e-4056-a08d-8722c00e80d7"
)

// plainSessions are the sessions written by writeSpec; the ones with a
// checkpoint, a subagent, an older generation or a migration are written
// by writeStore itself.
var plainSessions = []spec{
	{idRounding, projLedger, 2, v0, "Fix rounding in invoice totals", []exchange{
		{"Invoice totals are off by one cent when a discount applies to several lines. Find out why.",
			"Each line's discount is rounded before the lines are summed, so the cents drift. Summing the exact amounts and rounding the total once, with banker's rounding (half to even), gives the figures finance expects."},
		{"Do that, and add a test with the three-line invoice from the ticket.",
			"Done: `totals.go` sums in hundredths of a cent and rounds once; `TestTotalsDiscountedLines` covers the ticket's invoice."},
	}},
	{idPostgres, projLedger, 6, v4, "Migrate the ledger tables to Postgres 16", []exchange{
		{"Plan the upgrade of the ledger database from Postgres 12 to 16 with as little downtime as possible.",
			"pg_upgrade in link mode needs a maintenance window of some minutes; logical replication into a new 16 cluster needs almost none. Backfill through logical replication, switch writes during a short freeze, and keep the old cluster for a week as the rollback."},
		{"What about the sequences?",
			"Logical replication does not carry sequence values: copy them after the freeze, each with a safety gap of 1000."},
	}},
	{idWebhooks, projLedger, 8, v0, "Webhook retries with exponential backoff", []exchange{
		{"Merchants miss webhooks when their endpoint is down for a few minutes. Retry them.",
			"Deliveries are now retried with exponential backoff and full jitter, capped at 6 hours, up to 12 attempts. Each delivery carries an idempotency key so that a merchant can drop duplicates."},
		{"Sign the payloads too.",
			"Each request now carries an HMAC-SHA256 signature header computed over the timestamp and the body."},
	}},
	{idFlaky, projLedger, 12, v4z, "Flaky test in reconciliation job", []exchange{
		{"TestReconcileNightly fails about once a week in CI with a timeout.",
			"Two goroutines take the ledger mutex and the batch lock in opposite orders: a deadlock that only shows when a batch is split. Taking them in one order fixes it."},
	}},
	{idDockerfile, projLedger, 13, v0, "Dockerfile for the worker", []exchange{
		{"Write a Dockerfile for cmd/ledger-worker: a small image that does not run as root.",
			"A two-stage build: golang:1.26 compiles with CGO off, then a distroless static image runs it as nonroot. The image is 14 MB."},
	}},
	{idUntitled, projLedger, 17, v0, "", []exchange{
		{"Is `0 */6 * * *` every six hours or six minutes past every hour?",
			"Every six hours, on the hour: minute 0 of hours 0, 6, 12 and 18."},
	}},
	{idVAT, projLedger, 19, v0, "Tax rates for EU VAT", []exchange{
		{"Which VAT rate applies when we bill a business customer in another EU country?",
			"None is charged: the reverse charge applies and the invoice must say so. For consumers in other EU countries the rate of their country applies, reported through the One-Stop Shop (OSS)."},
	}},
	{idLint, projLedger, 20, v4, "Set up golangci-lint in CI", []exchange{
		{"Add golangci-lint to the CI workflow with the linters we use locally.",
			"`.golangci.yml` enables govet, staticcheck, errcheck and revive; the workflow runs golangci-lint-action with a cache and fails only on new issues."},
	}},
	{idRefund, projLedger, 21, v0, "Review the refund flow", []exchange{
		{"Review how refunds work end to end: partial refunds, chargebacks, and what the ledger records.",
			"A partial refund writes a credit note against the original invoice; a chargeback arrives by webhook and is booked as a disputed balance until it is won or lost. One gap: a refund issued during an open dispute is booked twice."},
	}},
	{idConfig, projLedger, 22, v0z, "Config loader cleanup", []exchange{
		{"internal/config/loader.go reads the environment in three different ways. Clean it up.",
			"Every setting now comes from one struct filled by env tags, with defaults in one place and validation at start-up."},
	}},
	{idExportCJK, projLedger, 23, v4, "修复发票导出乱码", []exchange{
		{"用户反馈导出的CSV文件在Excel里打开是乱码，帮我看看。",
			"CSV是UTF-8编码但没有BOM，Excel会按本地编码（GBK）读取。导出时在文件开头写入BOM即可，已修改 internal/invoice/export.go。"},
	}},
	{idTimeout, projLedger, 24, v0, "Session timeout for the admin dashboard", []exchange{
		{"Admins get logged out of the dashboard after 15 minutes even while they work.",
			"The JWT expires after 15 minutes and the dashboard never refreshes it. A sliding refresh token, rotated on use, keeps active admins signed in; idle ones are still logged out after 30 minutes."},
	}},
	{idGoUpgrade, projLedger, 25, v4z, "Upgrade to Go 1.26", []exchange{
		{"Move the module to Go 1.26 and fix what breaks.",
			"go.mod now says go 1.26 with a toolchain line; two tests relied on map iteration order and were fixed."},
	}},
	{idNumbering, projLedger, 26, v2, "Explain the invoice numbering gaps", []exchange{
		{"Why are there gaps in our invoice numbers?",
			"Numbers are taken from a sequence, and a rolled-back transaction burns its number. The law requires gapless numbering here, so numbering now takes numbers from a counter row locked in the same transaction."},
	}},

	{idSafari, projStorefront, 3, v0, "Checkout button disabled on Safari", []exchange{
		{"On Safari the Pay button on the checkout page stays disabled after the card form is filled in.",
			"Safari blocks the third-party cookie the card iframe sets, so its ready event never fires. Setting SameSite=None; Secure on that cookie and listening for the iframe's postMessage fixes it."},
	}},
	{idDarkMode, projStorefront, 9, v4, "Add dark mode toggle", []exchange{
		{"Add a dark mode toggle to the header that remembers the choice.",
			"Colors are CSS variables switched by a data-theme attribute; the default follows prefers-color-scheme and the toggle stores its choice in localStorage."},
	}},
	{idStarRating, projStorefront, 15, v0z, "Star rating component for reviews", []exchange{
		{"Build a star rating component for product reviews, keyboard accessible.",
			"A radio group styled as stars: arrow keys move, half stars are not selectable, and the aria-label reads \"4 of 5 stars\"."},
	}},
	{idLighthouse, projStorefront, 18, v4, "Lighthouse score regressions", []exchange{
		{"The Lighthouse performance score dropped from 92 to 71 after the last release.",
			"The hero image is 2.4 MB and no longer lazy-loaded below the fold, and a web font blocks rendering. Serving AVIF and font-display: swap brings it back to 90."},
	}},
	{idPrint, projStorefront, 20, v0, "Invoice page print styles", []exchange{
		{"Customers print invoices from the order page and the header is cut off.",
			"A print stylesheet hides the navigation, sets A4 margins and avoids page breaks inside the table of line items."},
	}},
	{idLoginCJK, projStorefront, 24, v0, "登录页面白屏", []exchange{
		{"用户登录以后页面一片白屏，控制台报 ChunkLoadError。",
			"发布新版本后旧的 chunk 文件被删除了，已经打开的页面还在请求它们。保留上一个版本的静态文件，并在加载失败时刷新页面即可。"},
	}},
	{idCartKorean, projStorefront, 26, v4, "장바구니 수량 버그", []exchange{
		{"장바구니에 상품을 추가하면 수량이 두 번 증가합니다.",
			"버튼 클릭 핸들러가 두 번 등록되어 있었습니다. useEffect 정리 함수에서 리스너를 제거하도록 수정했습니다."},
	}},

	{idWeekly, projNotes, 27, v4, "Weekly planning notes", []exchange{
		{"Turn these bullet points into a plan for the week: ledger upgrade, refund bug, German storefront.",
			"Monday: rehearse the Postgres 16 switch. Tuesday and Wednesday: fix the double booking of refunds during disputes. Thursday: review the German strings. Friday: buffer."},
	}},
	{idReading, projNotes, 7, v0, "Reading list: distributed systems", []exchange{
		{"Suggest a reading list on consensus for someone who knows databases well.",
			"Start with the Raft paper, then Paxos Made Simple, then Viewstamped Replication Revisited; chapter 9 of Designing Data-Intensive Applications ties them together."},
	}},
	{idBlog, projNotes, 12.5, v0z, "Draft blog post on idempotency keys", []exchange{
		{"Draft a blog post explaining idempotency keys for payment APIs.",
			"Retrying safely. A client sends the same key with every retry of one request; the server stores the first response under that key and replays it for the retries, so a payment is never taken twice."},
	}},
	{idKyoto, projNotes, 1, v0, "京都旅行の計画", []exchange{
		{"三日間で京都を回る計画を立ててください。",
			"一日目は伏見稲荷大社と東福寺、二日目は嵐山の竹林と天龍寺、三日目は金閣寺と錦市場がおすすめです。"},
	}},
	{idBudget, projNotes, 16, v4, "会议纪要：第三季度预算", []exchange{
		{"把这次会议的要点整理成纪要。",
			"第三季度云服务器预算超支百分之二十，主要来自数据库副本。决定：下个月迁移到预留实例。"},
	}},
	{idGifts, projNotes, 25.5, v0, "Gift ideas for Sam", []exchange{
		{"Sam likes climbing and coffee. Ideas under 50 euros?",
			"A chalk bag with a personal patch, a hand grinder, or a guidebook to the crags near Fontainebleau."},
	}},

	{idIBAN, "", 5, v0, "Regex for IBAN validation", []exchange{
		{"A regex that checks the shape of a German IBAN.",
			"`^DE\\d{20}$` checks the shape; only the mod-97 checksum proves it valid."},
	}},
	{idRebase, "", 19.5, v4, "Explain git rebase --onto", []exchange{
		{"When do I need git rebase --onto?",
			"When your branch was cut from another branch that was itself rebased or squashed: `git rebase --onto main old-base` moves only your commits."},
	}},
}

// newSession starts a session of format f.
func newSession(id, cwd string, d float64, f format) *dshgen.Session {
	s := dshgen.NewSession(id)
	if f.version > 0 {
		s.Generation(f.version)
	}
	if cwd != "" {
		s.Cwd(cwd)
	}
	return s.CreatedAt(day(d))
}

// talk adds one turn per exchange, the title after the first request.
func talk(s *dshgen.Session, v4 bool, title string, turns []exchange) *dshgen.Session {
	for i, x := range turns {
		s.Turn(func(t *dshgen.Turn) {
			if v4 && i == 0 {
				t.SystemMessage("")
			}
			t.UserText(x.user)
			if i == 0 && title != "" {
				t.Title(title, "provider")
			}
			t.AssistantText(x.assistant)
		})
	}
	return s
}

// noiseLines say words of the queries only inside other words ("rate" in
// "generated", "vat" in "private", "search" in "research", "stream" in
// "upstream", "raft" in "draft", "aria" in "variables", 登录 and 导出
// inside a run of Han text): what a store holds plenty of.
var noiseLines = []string{
	"The generated code compiles; keep the separate code paths as they are.",
	"Regenerate the client and check the accurate figures in the separate report.",
	"Moderate changes only: the migrated handlers are checked separately.",
	"Keep the private key out of the repository; the syntax of the file is unchanged.",
	"Some research on the upstream library first: downstream users pin its version.",
	"The surcharge line and the recharge fee stay as they are.",
	"A misconfigured proxy dropped the events of nonrefundable orders.",
	"The subtotals were recomputed by the job overnight.",
	"Use the preflight request; the draft of the rollout plan is in the wiki.",
	"These variables were renamed, and the various aliases are gone.",
	"Prefetching the unexported fields did not help.",
}

// noiseTitles are the titles of the noise sessions: ordinary chores whose
// titles hold no word of the queries.
var noiseTitles = []string{
	"Tidy up imports in cmd", "Bump dependencies", "Rename helper functions", "Fix a typo in an error message",
	"Add missing license headers", "Explain a compiler error", "Shorten CI runs", "Go generics question",
	"Quieter logs in production", "Vet warnings in worker", "On-call handover notes", "Write release notes for 2.14",
	"Pagination for the merchants endpoint", "Health check endpoint", "Error wrapping style", "Remove dead code in reports",
	"Time zone of the nightly job", "Metrics for queue depth", "Sort order of the merchant list", "Unstick a deploy",
}

// noiseCJK are sessions of Han text whose words hold 登录, 导出, 预算, 超支
// and 京都 only inside a run.
var noiseCJK = []struct{ title, user, assistant string }{
	{"月度报表", "修复登录问题之后，重新导出了报表吗？", "已经重新导出了，数字和上个月一致。"},
	{"照片整理", "把旧的京都照片整理到一个相册里。", "已按日期整理好，共一百二十张。"},
	{"周报", "这周的总预算有没有超支？", "没有，总预算还剩百分之十五。"},
}

// noiseID is the id of noise session i: a random-looking v4 UUID, as
// dsh's are, derived from i so that every run writes the same.
func noiseID(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("rankset noise %d", i)))
	sum[6] = sum[6]&0x0f | 0x40 // version 4
	sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// writeStore writes the store under root and returns the facts of every
// session, by id.
func writeStore(root string) (map[string]dshgen.Expected, error) {
	type entry struct {
		s   *dshgen.Session
		enc dshgen.Encoding
	}
	var out []entry
	add := func(s *dshgen.Session, enc dshgen.Encoding) { out = append(out, entry{s, enc}) }
	for _, sp := range plainSessions {
		add(talk(newSession(sp.id, sp.cwd, sp.day, sp.format), sp.format.version >= 4, sp.title, sp.turns), sp.format.enc)
	}

	// Compacted: the first turn is replaced by its checkpoint.
	rate := newSession(idRateLimit, projLedger, 4, v0z)
	rate.Turn(func(t *dshgen.Turn) {
		t.UserText("The payments API needs rate limiting: 50 requests per second per merchant, bursts up to 100.")
		t.Title("Add rate limiting to the payments API", "provider")
		t.AssistantText("A token bucket per merchant in `internal/ratelimit`, refilled continuously, keyed by the merchant of the API key.")
	})
	first, last := int64(1), rate.LastSeq()-1
	rate.Turn(func(t *dshgen.Turn) {
		t.Checkpoint("Summary of earlier work: a per-merchant token bucket (50/s, burst 100) was designed for the payments API.", first, last)
		t.UserText("Rejected requests should say when to come back.")
		t.AssistantText("They now get 429 with a Retry-After header: the seconds until the bucket holds a token again.")
	})
	add(rate, dshgen.Zstd)

	// A parent that spawns a subagent; the child's display title is its
	// descriptor's label, its own title a fallback.
	add(newSession(idCurrency, projLedger, 10, v0z).Turn(func(t *dshgen.Turn) {
		t.UserText("Currency conversion is done in four places with different rounding. Put it behind one function.")
		t.Title("Refactor currency conversion", "provider")
		t.AssistantToolCall("call_spawn_1", "subagent", `{"description":"Audit exchange-rate call sites","prompt":"List every place that converts between currencies or reads an exchange rate."}`)
		t.ToolResult("call_spawn_1", "started subagent "+idCurrencySub, false)
		t.AssistantText("A subagent is listing the call sites; conversion will go through `currency.Convert` with rates from the ECB reference feed.")
	}), dshgen.Zstd)
	add(newSession(idCurrencySub, projLedger, 10.01, v0).Parent(idCurrency).Descriptor("Audit exchange-rate call sites").
		Turn(func(t *dshgen.Turn) {
			t.UserText("List every place that converts between currencies or reads an exchange rate.")
			t.Title("List every place that", "fallback")
			t.AssistantText("Six places: internal/invoice/totals.go, internal/payments/stripe.go, internal/statement/csv.go, internal/tax/vat.go, internal/reconcile/matcher.go, cmd/ledgerctl/main.go.")
		}), dshgen.Raw)

	// Started in dsh 0.1, resumed in 0.2: the untouched v0 log and its
	// migrated v4 generation, with a later turn and a newer title.
	auditQ := "Explain the audit_events table: what is each column for?"
	auditA := "actor_id is who acted, subject_id the row that changed, diff a JSON patch of the change, and occurred_at when the change was committed."
	orig := newSession(idAuditLog, projLedger, 14, v0z).Turn(func(t *dshgen.Turn) {
		t.UserText(auditQ)
		t.Title("Explain the audit log schema", "fallback")
		t.AssistantText(auditA)
	})
	if _, err := orig.Save(root, dshgen.Zstd); err != nil {
		return nil, err
	}
	add(dshgen.NewV4Session(idAuditLog).Cwd(projLedger).CreatedAt(day(14)).MigratedBody().
		Turn(func(t *dshgen.Turn) {
			t.SystemMessage("")
			t.UserText(auditQ)
			t.Title("Explain the audit log schema", "fallback")
			t.AssistantText(auditA)
		}).
		Turn(func(t *dshgen.Turn) {
			t.UserText("How long must we keep these rows?")
			t.Title("Audit log retention policy", "provider")
			t.AssistantText("Seven years for anything that touches money under the bookkeeping rules: partition the table by month and drop partitions older than that.")
		}), dshgen.Zstd)

	// A v3 successor beside the older raw generation it continues.
	stmtQ := "The monthly statement export takes 40 minutes for the largest merchants."
	stmtA := "Each line loads its merchant again: an N+1 query. One join, and streaming the CSV rows to the file instead of building them in memory, bring it to 90 seconds."
	add(newSession(idStatement, projLedger, 16, v3z).Turn(func(t *dshgen.Turn) {
		t.UserText(stmtQ)
		t.Title("Speed up monthly statement export", "provider")
		t.AssistantText(stmtA)
	}), dshgen.Zstd)

	searchQ := "Search on the storefront takes two seconds per keystroke."
	searchA := "Every keystroke runs a LIKE '%term%' query. A trigram index on the product name and a 200 ms debounce on the input bring it to 30 ms."
	older := newSession(idSearch, projStorefront, 5, v0).Turn(func(t *dshgen.Turn) {
		t.UserText(searchQ)
		t.Title("Product search is slow", "provider")
		t.AssistantText("Every keystroke runs a LIKE '%term%' query.")
	})
	if _, err := older.Save(root, dshgen.Raw); err != nil {
		return nil, err
	}
	add(newSession(idSearch, projStorefront, 5, v3z).Turn(func(t *dshgen.Turn) {
		t.UserText(searchQ)
		t.Title("Product search is slow", "provider")
		t.AssistantText(searchA)
	}), dshgen.Zstd)

	// v0's legacy assistant shape and a steering message.
	add(newSession(idCartBadge, projStorefront, 11, v0).Turn(func(t *dshgen.Turn) {
		t.UserText("After adding an item the cart badge still shows the old count until the page is reloaded.")
		t.Title("Cart badge shows stale count", "provider")
		t.AssistantLegacy("The badge reads a cached query that nothing invalidates.")
		t.SteeringFlat("Fix it without a full reload.")
		t.AssistantLegacy("Calling invalidateQueries(['cart']) after the mutation updates the badge at once.")
	}), dshgen.Raw)

	// A v4 parent and its child, whose display title is its version 3
	// descriptor's label.
	add(dshgen.NewV4Session(idGerman).Cwd(projStorefront).CreatedAt(day(22)).Turn(func(t *dshgen.Turn) {
		t.SystemMessage("")
		t.UserText("Prepare the storefront for a German translation.")
		t.Title("Translate the storefront to German", "provider")
		t.Catalog(idGermanSub, day(22.01), "Extract UI strings for translation")
		t.AssistantText("A subagent is extracting the UI strings; routes get a /de prefix with hreflang links between the languages.")
	}), dshgen.Zstd)
	add(dshgen.NewV4Session(idGermanSub).Cwd(projStorefront).CreatedAt(day(22.01)).Parent(idGerman).
		DescriptorVersion(3, "Extract UI strings for translation").Turn(func(t *dshgen.Turn) {
		t.SystemMessage("")
		t.UserText("Find every hard-coded UI string in src/ and list it with its file.")
		t.Title("Find every hard-coded", "fallback")
		t.AssistantText("214 strings in 38 files; the checkout and account pages hold most of them.")
	}), dshgen.Raw)

	// The noise: newer than every session above, most of them in the
	// workspace, the rest in the other projects.
	for i, title := range noiseTitles {
		cwd := projLedger
		if i%5 == 4 {
			cwd = projStorefront
		}
		f := v0
		if i%3 == 2 {
			f = v4
		}
		add(talk(newSession(noiseID(i), cwd, 28+float64(i)/10, f), f.version >= 4, title, []exchange{
			{noiseLines[i%len(noiseLines)], noiseLines[(i+3)%len(noiseLines)]},
		}), f.enc)
	}
	for i, n := range noiseCJK {
		add(talk(newSession(noiseID(100+i), projNotes, 29.5+float64(i)/10, v0), false, n.title, []exchange{{n.user, n.assistant}}), dshgen.Raw)
	}

	facts := make(map[string]dshgen.Expected, len(out))
	for _, e := range out {
		path, err := e.s.Save(root, e.enc)
		if err != nil {
			return nil, fmt.Errorf("writing session %s: %w", e.s.ID(), err)
		}
		x := e.s.Expected()
		x.Path = path
		facts[x.ID] = x
	}
	return facts, nil
}
