package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// workspaceTree is the ledger project the set is typed in: a Go service
// with an admin frontend, migrations, docs and test data, whose file names
// meet the titles of its sessions (rounding.go beside "Fix rounding in
// invoice totals", retention.go beside "Audit log retention policy").
// Each line is a directory and the files in it; "{a..b}" and "{x,y}" are
// expanded by expand.
var workspaceTree = []string{
	". README.md LICENSE Makefile Dockerfile docker-compose.yml go.mod go.sum .gitignore .golangci.yml .editorconfig CHANGELOG.md",
	".github CODEOWNERS pull_request_template.md dependabot.yml",
	".github/workflows ci.yml release.yml codeql.yml",
	"cmd/ledger main.go",
	"cmd/ledger-worker main.go",
	"cmd/ledgerctl main.go export.go import.go merchants.go",
	"internal/invoice invoice.go invoice_test.go totals.go totals_test.go rounding.go rounding_test.go pdf.go pdf_test.go numbering.go numbering_test.go export.go export_test.go credit_note.go credit_note_test.go template.html",
	"internal/payments api.go api_test.go handler.go handler_test.go refund.go refund_test.go chargeback.go chargeback_test.go stripe.go stripe_test.go dispute.go payout.go payout_test.go",
	"internal/ratelimit bucket.go bucket_test.go middleware.go middleware_test.go keys.go",
	"internal/webhook retry.go retry_test.go backoff.go backoff_test.go dispatcher.go dispatcher_test.go signature.go signature_test.go",
	"internal/currency convert.go convert_test.go rates.go rates_test.go ecb_feed.go ecb_feed_test.go money.go money_test.go",
	"internal/tax vat.go vat_test.go reverse_charge.go reverse_charge_test.go oss.go rates.json",
	"internal/reconcile nightly.go nightly_test.go matcher.go matcher_test.go report.go",
	"internal/audit log.go log_test.go schema.sql retention.go retention_test.go",
	"internal/statement monthly.go monthly_test.go csv.go csv_test.go pdf.go",
	"internal/config loader.go loader_test.go env.go defaults.go validate.go",
	"internal/auth jwt.go jwt_test.go session.go session_test.go middleware.go middleware_test.go apikey.go",
	"internal/admin dashboard.go handlers.go timeout.go timeout_test.go",
	"internal/admin/templates dashboard.html login.html layout.html",
	"internal/admin/static admin.css admin.js",
	"internal/db pool.go migrate.go tx.go tx_test.go queries.sql",
	"internal/cron schedule.go schedule_test.go",
	"internal/worker worker.go worker_test.go queue.go queue_test.go",
	"internal/merchant merchant.go merchant_test.go store.go store_test.go",
	"internal/httpapi router.go router_test.go errors.go pagination.go health.go",
	"internal/metrics metrics.go",
	"internal/testutil fixtures.go clock.go",
	"migrations {0001_init,0002_merchants,0003_invoices,0004_invoice_lines,0005_payments,0006_refunds,0007_webhook_deliveries,0008_audit_events,0009_currency_rates,0010_tax_rates,0011_statements,0012_api_keys,0013_invoice_numbering,0014_disputes,0015_payouts,0016_credit_notes,0017_merchant_settings,0018_webhook_signatures,0019_audit_partitions,0020_reconcile_runs,0021_rate_limits,0022_statement_index,0023_admin_sessions,0024_drop_legacy_columns}.{up,down}.sql",
	"docs architecture.md getting-started.md invoice-rounding.md rate-limits.md webhooks.md runbook.md glossary.md",
	"docs/api openapi.yaml errors.md",
	"docs/adr 0001-use-postgres.md 0002-money-as-integers.md 0003-event-sourced-audit-log.md 0004-token-bucket-rate-limits.md 0005-webhook-signing.md 0006-monthly-partitions.md",
	"docs/zh-CN README.md",
	"scripts release.sh seed.sql load_test.js gen-mocks.sh backup.sh",
	"deploy/k8s deployment.yaml service.yaml worker.yaml configmap.yaml ingress.yaml prometheus-rules.yaml",
	"deploy/terraform main.tf variables.tf outputs.tf rds.tf",
	"web/admin package.json tsconfig.json vite.config.ts index.html",
	"web/admin/src main.tsx App.tsx api.ts",
	"web/admin/src/components {Button,Table,InvoiceList,InvoiceDetail,MerchantPicker,DateRange,RefundDialog,WebhookLog,AuditTrail,Layout,Nav,Spinner}.tsx",
	"web/admin/src/pages {Invoices,Merchants,Refunds,Webhooks,Settings,Login}.tsx",
	"web/admin/src/hooks useInvoices.ts useAuth.ts useDebounce.ts",
	"testdata/invoices invoice_{001..040}.json",
	"testdata/webhooks stripe_charge_succeeded.json stripe_charge_refunded.json stripe_dispute_created.json stripe_dispute_closed.json delivery_failed.json delivery_retried.json signature_valid.json signature_expired.json batch_small.json batch_large.json",
	"testdata/golden statement_{01..08}.csv",
	"i18n en.json de.json fr.json zh-CN.json",
	// Ignored (.gitignore) or excluded (node_modules): never the answer.
	"dist ledger ledger-worker ledgerctl",
	"web/admin/node_modules/react index.js package.json",
	"tmp debug.log",
}

// gitignore is the workspace's .gitignore.
const gitignore = "dist/\ntmp/\n*.log\n"

// expand expands the first "{a..b}" (zero-padded numbers) or "{x,y,…}"
// group of a name, recursively.
func expand(name string) []string {
	open := strings.IndexByte(name, '{')
	if open < 0 {
		return []string{name}
	}
	end := open + strings.IndexByte(name[open:], '}')
	body, pre, post := name[open+1:end], name[:open], name[end+1:]
	var alts []string
	if lo, hi, ok := strings.Cut(body, ".."); ok {
		var a, b int
		if _, err := fmt.Sscan(lo, &a); err != nil {
			panic(name)
		}
		if _, err := fmt.Sscan(hi, &b); err != nil {
			panic(name)
		}
		for n := a; n <= b; n++ {
			alts = append(alts, fmt.Sprintf("%0*d", len(lo), n))
		}
	} else {
		alts = strings.Split(body, ",")
	}
	var out []string
	for _, a := range alts {
		out = append(out, expand(pre+a+post)...)
	}
	return out
}

// workspaceFiles lists the files of the tree as slash paths, sorted.
func workspaceFiles() []string {
	var files []string
	for _, line := range workspaceTree {
		fields := strings.Fields(line)
		for _, f := range fields[1:] {
			for _, name := range expand(f) {
				files = append(files, path.Join(fields[0], name))
			}
		}
	}
	sort.Strings(files)
	return files
}

// writeWorkspace writes the tree under dir. Each file holds a line naming
// it; .gitignore holds the rules.
func writeWorkspace(dir string) error {
	for _, f := range workspaceFiles() {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		body := "# " + f + "\n"
		if f == ".gitignore" {
			body = gitignore
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// offered reports whether p (a file or a directory, slash-separated,
// without a trailing slash) is in the tree and may be offered: not under
// an ignored or excluded directory.
func offered(p string) bool {
	for _, skip := range []string{"dist", "tmp", "web/admin/node_modules"} {
		if p == skip || strings.HasPrefix(p, skip+"/") {
			return false
		}
	}
	if strings.HasSuffix(p, ".log") {
		return false
	}
	for _, f := range workspaceFiles() {
		if f == p || strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}
