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
  -- The options of vim.lsp.config('dsh_refls', { settings = { dsh = … } }):
  -- sent as initializationOptions too, so that the first index is built
  -- with them, and again in the workspace/didChangeConfiguration Neovim
  -- sends after initialize.
  init_options = vim.empty_dict(),
  settings = { dsh = vim.empty_dict() },
  before_init = function(params, config)
    local dsh = type(config.settings) == 'table' and config.settings.dsh
    if type(dsh) == 'table' and next(dsh) ~= nil then
      params.initializationOptions = dsh
    end
  end,
}
