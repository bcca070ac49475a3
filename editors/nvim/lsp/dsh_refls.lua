-- Neovim 0.11+ configuration of dsh-refls for vim.lsp.enable:
--
--   vim.opt.runtimepath:prepend('~/src/dsh-refls/editors/nvim')
--   vim.lsp.config('dsh_refls', { settings = { dsh = { sessionsRoot = '~/.dsh/sessions' } } })
--   vim.lsp.enable('dsh_refls')
--
-- This only starts the server (completion with vim.lsp.completion or any
-- completion plugin, hover, diagnostics). :DshPrepare, :DshStatus and the
-- whole-token omnifunc come with require('dsh_refls').setup(), which needs
-- no vim.lsp.enable. The server logs to a file, not to stderr, which Neovim
-- would file under [ERROR] in its LSP log; the file's directory is made
-- first, as on a fresh account it does not exist.
return {
  cmd = require('dsh_refls.config').lsp_enable_command(),
  filetypes = { 'markdown', 'text', 'dshprompt' },
  root_markers = { '.git', '.dshignore' },
  -- Sent as initializationOptions; workspace/configuration answers come
  -- from settings.dsh.
  init_options = vim.empty_dict(),
  settings = { dsh = vim.empty_dict() },
}
