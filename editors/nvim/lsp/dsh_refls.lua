-- Neovim 0.11+ configuration of dsh-refls for vim.lsp.enable (see
-- :help dsh_refls-lsp-enable for the whole init.lua):
--
--   vim.opt.runtimepath:prepend(vim.fn.expand('~/src/dsh-refls/editors/nvim'))
--   vim.lsp.config('dsh_refls', { settings = { dsh = { sessionsRoot = '~/.dsh/sessions' } } })
--   vim.lsp.enable('dsh_refls')
--
-- This starts the server for Markdown, text and dshprompt buffers; the
-- plugin/dsh_refls.lua file of the same directory adds :DshPrepare,
-- :DshStatus, :DshRecall, :DshFollow, :DshSearch and the recall previews
-- of go to definition for any client of this config, so no
-- require('dsh_refls').setup() is needed (and none should be called with
-- it: setup() starts a server of its own). The server logs to a file, not
-- to stderr, which Neovim would file under [ERROR] in its LSP log; the
-- file's directory is made first, as on a fresh account it does not exist.
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
    -- The plugin opens the prompts of dsh-refls.continueFrom: the server
    -- offers its code action ("Continue from this session").
    params.capabilities = require('dsh_refls').with_continue_capability(params.capabilities)
    local dsh = type(config.settings) == 'table' and config.settings.dsh
    if type(dsh) == 'table' and next(dsh) ~= nil then
      params.initializationOptions = dsh
    end
  end,
}
