package editors

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeovimCheckhealth runs :checkhealth dsh_refls in headless Neovim on the
// demo store and reads the report as the user would: with the recommended
// 'completeopt' every check is OK; with Neovim's default one the report warns
// and names the fix.
func TestNeovimCheckhealth(t *testing.T) {
	nvim := lookNvim(t)
	bin := buildServer(t)
	dir := t.TempDir()
	d := newDemoSetup(t, dir)
	plugin := filepath.Join(repoRoot(t), "editors", "nvim")
	for _, tt := range []struct {
		name, completeopt string
		want              []string
	}{
		{"recommended completeopt", "menuone,noinsert", []string{
			"OK: setup() done", "OK: server: " + bin, "OK: server log: ",
			"OK: sessions root " + d.root + " (", "OK: completeopt = 'menuone,noinsert'", "OK: client 1, root " + d.workspace,
		}},
		{"default completeopt", "menu,preview", []string{
			"WARNING: completeopt = 'menu,preview'", "menuone,noinsert",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			report := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".txt")
			script := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".lua")
			writeFiles(t, dir, map[string]string{filepath.Base(script): fmt.Sprintf(`
vim.opt.rtp:prepend(%q)
vim.cmd('filetype on')
vim.o.completeopt = %q
require('dsh_refls').setup({ server_path = %q, settings = { sessionsRoot = %q } })
vim.cmd('edit ' .. vim.fn.fnameescape(%q))
vim.wait(10000, function() return #require('dsh_refls').clients() > 0 end)
vim.cmd('checkhealth dsh_refls')
vim.cmd('write! ' .. vim.fn.fnameescape(%q))
vim.fn.writefile({ vim.lsp.get_log_path() }, %q)
vim.cmd('qa!')
`, plugin, tt.completeopt, bin, d.root, d.message, report, report+".lsplog")})
			runNvimScript(t, nvim, script, isolatedEnv(dir))
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatalf("no report: %v", err)
			}
			t.Logf(":checkhealth dsh_refls:\n%s", data)
			for _, want := range tt.want {
				if !strings.Contains(string(data), want) {
					t.Errorf("the report lacks %q", want)
				}
			}
			if strings.Contains(string(data), "ERROR") {
				t.Errorf("the report has an error")
			}
			// The server's INFO lines went to its log file, so Neovim's LSP
			// log files none of them under [ERROR] (issue 11).
			logPath, err := os.ReadFile(report + ".lsplog")
			if err != nil {
				t.Fatal(err)
			}
			lspLog, _ := os.ReadFile(strings.TrimSpace(string(logPath)))
			if strings.Contains(string(lspLog), "[ERROR]") {
				t.Errorf("Neovim's LSP log has [ERROR] lines:\n%s", lspLog)
			}
			serverLog, err := os.ReadFile(filepath.Join(dir, "cache", "nvim", "dsh-refls.log"))
			if err != nil || !strings.Contains(string(serverLog), `"initialized"`) {
				t.Errorf("the server log file lacks the INFO line \"initialized\" (%v):\n%s", err, serverLog)
			}
		})
	}
}
