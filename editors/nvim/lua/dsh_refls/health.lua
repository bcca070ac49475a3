-- :checkhealth dsh_refls — what a new user needs to see working: setup() or
-- vim.lsp.enable('dsh_refls'), the server binary, the sessions root,
-- completion options, the log file and the running servers. Works with
-- Neovim 0.7's `health` module and with vim.health (0.8+; the report_*
-- names before 0.10).

local M = {}

local function reporter()
  local h = vim.health or require('health')
  local function pick(new, old)
    return h[new] or h[old]
  end
  return {
    start = pick('start', 'report_start'),
    ok = pick('ok', 'report_ok'),
    warn = pick('warn', 'report_warn'),
    error = pick('error', 'report_error'),
    info = pick('info', 'report_info'),
  }
end

--- Whether vim.lsp.enable('dsh_refls') is in effect (Neovim 0.11+).
local function lsp_enabled()
  if type(vim.lsp.is_enabled) == 'function' then
    return vim.lsp.is_enabled('dsh_refls')
  end
  return type(vim.lsp._enabled_configs) == 'table' and vim.lsp._enabled_configs.dsh_refls ~= nil
end

--- The value after flag in a command list, or nil.
local function flag_value(cmd, flag)
  for i, arg in ipairs(cmd) do
    if arg == flag then
      return cmd[i + 1]
    end
  end
  return nil
end

--- Runs the checks (called by :checkhealth dsh_refls).
function M.check()
  local r = reporter()
  local plugin = require('dsh_refls')
  local config = require('dsh_refls.config')
  local opts = plugin.options()
  local enabled = lsp_enabled()

  -- What starts the server: setup() (its options) or vim.lsp.enable (the
  -- resolved vim.lsp.config of lsp/dsh_refls.lua and the user's).
  local cmd, err, log_file, settings
  r.start('dsh_refls: setup')
  if opts then
    r.ok('setup() done; filetypes: ' .. table.concat(opts.filetypes, ', '))
    if enabled then
      r.warn("vim.lsp.enable('dsh_refls') is on as well: two servers start for each buffer", {
        "use either require('dsh_refls').setup() or vim.lsp.enable('dsh_refls')",
      })
    end
    cmd, err = config.command(opts)
    log_file = config.usable_log_file(config.log_file(opts))
    settings = opts.settings
  elseif enabled then
    local lcfg = vim.lsp.config.dsh_refls or {}
    r.ok("vim.lsp.enable('dsh_refls') (no setup() needed); filetypes: " .. table.concat(lcfg.filetypes or {}, ', '))
    cmd = lcfg.cmd
    if type(cmd) ~= 'table' or #cmd == 0 then
      cmd, err = nil, "vim.lsp.config('dsh_refls') has no cmd list"
    elseif vim.fn.executable(cmd[1]) ~= 1 then
      cmd, err = nil, string.format(
        "%s is not executable: install dsh-refls on PATH or set cmd in vim.lsp.config('dsh_refls', { cmd = { … } })",
        cmd[1]
      )
    end
    log_file = cmd and flag_value(cmd, '--log-file')
    settings = vim.tbl_get(lcfg, 'settings', 'dsh') or {}
  else
    r.error('the server is not set up', {
      "Neovim 0.11+: vim.lsp.enable('dsh_refls') (see :help dsh_refls-lsp-enable)",
      "any Neovim: require('dsh_refls').setup({}) (see :help dsh_refls-setup)",
    })
    return
  end

  r.start('dsh_refls: server')
  if not cmd then
    r.error(err)
  else
    r.ok('server: ' .. vim.fn.exepath(cmd[1]) .. ' (' .. table.concat(cmd, ' ') .. ')')
  end
  if log_file then
    r.ok('server log: ' .. log_file)
  elseif opts and opts.log_file == false then
    r.warn('log_file = false: Neovim files every server log line under [ERROR] in its LSP log')
  elseif not (opts and opts.cmd) then
    r.warn("the server logs to stderr: its log directory could not be made, and Neovim files every line under [ERROR] in its LSP log")
  end

  r.start('dsh_refls: sessions')
  local root = settings.sessionsRoot
  if root then
    root = vim.fn.expand(root)
  else
    local home = os.getenv('DSH_HOME')
    root = (home and home ~= '' and home or vim.fn.expand('~/.dsh')) .. '/sessions'
  end
  if vim.fn.isdirectory(root) == 1 then
    local projects = #vim.fn.glob(root .. '/*', false, true)
    r.ok(string.format('sessions root %s (%d project directories)', root, projects))
  else
    r.warn('sessions root ' .. root .. ' does not exist', { 'set settings.sessionsRoot, or run dsh once' })
  end

  r.start('dsh_refls: completion')
  local co = ',' .. vim.o.completeopt .. ','
  if co:find(',menuone,', 1, true) and (co:find(',noinsert,', 1, true) or co:find(',noselect,', 1, true)) then
    r.ok("completeopt = '" .. vim.o.completeopt .. "'")
  else
    r.warn(
      "completeopt = '" .. vim.o.completeopt .. "': the menu may insert the first entry or hide a single one",
      {
        opts and "set vim.o.completeopt = 'menuone,noinsert' (see :help dsh_refls-completion)"
          or "set vim.o.completeopt = 'menuone,noselect' (see :help dsh_refls-lsp-enable)",
      }
    )
  end

  r.start('dsh_refls: running servers')
  local clients = plugin.clients()
  if #clients == 0 then
    local filetypes = opts and opts.filetypes or { 'markdown', 'text', 'dshprompt' }
    r.info('no server running; open a ' .. table.concat(filetypes, '/') .. ' file')
  end
  for _, c in ipairs(clients) do
    r.ok(string.format('client %d, root %s (%s)', c.id, tostring(c.config.root_dir), c.name))
  end
end

return M
