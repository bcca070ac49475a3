-- Options of the dsh_refls plugin: defaults, validation, the server command
-- line and the server options of SPEC §4.1. Nothing here talks to a server.

local M = {}

--- Server option keys of SPEC §4.1 and the Lua type each must have.
--- "list" is a list of strings.
M.server_option_types = {
  sessionsRoot = 'string',
  sessionId = 'string',
  cwd = 'string',
  maxReferences = 'number',
  maxReferenceBytes = 'number',
  referenceContextFraction = 'number',
  contextWindow = 'number',
  candidateLimit = 'number',
  fileMaxResults = 'number',
  directoryTokenBudget = 'number',
  excludedDirectories = 'list',
  spillDir = 'string',
  watch = 'string',
  candidateOrder = 'string',
  recallSearch = 'boolean',
  redactSecrets = 'boolean',
  frecency = 'boolean',
  sessionScope = 'string',
  showAutomationSessions = 'boolean',
}

--- Server options that name a path: a leading ~ is expanded.
local path_options = { sessionsRoot = true, cwd = true, spillDir = true }

--- Values the server accepts for `watch`.
M.watch_modes = { auto = true, fsnotify = true, poll = true, off = true }

--- Values the server accepts for `candidateOrder`.
M.candidate_orders = { active = true, created = true }

--- Values the server accepts for `sessionScope`.
M.session_scopes = { all = true, workspace = true, recent = true }

--- Values the server accepts for the mode of dsh/prepare.
M.prepare_modes = { replace = true, preserve = true }

--- 'omnifunc' values for the omnifunc option.
M.omnifuncs = {
  dsh = "v:lua.require'dsh_refls'.omnifunc",
  lsp = 'v:lua.vim.lsp.omnifunc',
}

--- Log levels accepted by --log-level.
M.log_levels = { debug = true, info = true, warn = true, error = true }

--- Defaults of every plugin option (see :help dsh_refls-setup).
function M.defaults()
  return {
    -- Binary: an explicit command list wins, else server_path, else PATH.
    cmd = nil,
    server_path = 'dsh-refls',
    log_level = 'info',
    log_file = nil,
    -- Filetypes the client is started for.
    filetypes = { 'markdown', 'text', 'dshprompt' },
    -- Files that mark a workspace root, searched upwards from the buffer.
    root_markers = { '.git', '.dshignore' },
    -- Server options of SPEC §4.1, sent as initializationOptions and under
    -- `dsh` in workspace/didChangeConfiguration.
    settings = {},
    -- 'omnifunc' of attached buffers (<C-x><C-o>): "dsh" (the plugin's, which
    -- replaces the server's whole `@…` range), "lsp" (vim.lsp.omnifunc) or
    -- false (leave 'omnifunc' alone, e.g. with a completion plugin).
    omnifunc = 'dsh',
    -- Mode of :DshPrepare without an argument: "replace" or "preserve".
    prepare_mode = 'replace',
    -- How :DshPrepare and :DshStatus open their scratch buffer.
    split = 'vsplit',
    -- LSP client capabilities (e.g. from a completion plugin); nil = Neovim's.
    capabilities = nil,
    -- Called as on_attach(client, bufnr) for every attached buffer.
    on_attach = nil,
    -- Called as on_exit(code, signal, client_id) when a server process ends.
    on_exit = nil,
  }
end

--- Expands a leading ~ of a path option.
local function expand_path(p)
  if p == '~' or p:sub(1, 2) == '~/' then
    return vim.fn.expand('~') .. p:sub(2)
  end
  return p
end

--- Checks server options and returns a cleaned copy, or nil and a message.
--- Blank strings and empty lists are dropped so that the server keeps its
--- defaults; range checks are left to the server (it answers INVALID_CONFIG).
function M.server_options(settings)
  local out = {}
  if settings == nil then
    return out
  end
  if type(settings) ~= 'table' then
    return nil, 'settings must be a table'
  end
  for key, value in pairs(settings) do
    local want = M.server_option_types[key]
    if want == nil then
      return nil, string.format('settings.%s is not a dsh-refls option', tostring(key))
    end
    if want == 'list' then
      if type(value) ~= 'table' then
        return nil, string.format('settings.%s must be a list of strings', key)
      end
      local list = {}
      for _, v in ipairs(value) do
        if type(v) ~= 'string' then
          return nil, string.format('settings.%s must be a list of strings', key)
        end
        if vim.trim(v) ~= '' then
          table.insert(list, vim.trim(v))
        end
      end
      if #list > 0 then
        out[key] = list
      end
    elseif type(value) ~= want then
      return nil, string.format('settings.%s must be a %s, not a %s', key, want, type(value))
    elseif want == 'string' then
      local s = vim.trim(value)
      if key == 'watch' and s ~= '' and not M.watch_modes[s] then
        return nil, 'settings.watch must be one of auto, fsnotify, poll, off'
      end
      if key == 'candidateOrder' and s ~= '' and not M.candidate_orders[s] then
        return nil, 'settings.candidateOrder must be "active" or "created"'
      end
      if key == 'sessionScope' and s ~= '' and not M.session_scopes[s] then
        return nil, 'settings.sessionScope must be "all", "workspace" or "recent"'
      end
      if s ~= '' then
        out[key] = path_options[key] and expand_path(s) or s
      end
    else
      out[key] = value
    end
  end
  return out
end

--- Merges user options over the defaults and validates them.
--- Returns the options, or nil and a message naming the bad option.
function M.resolve(user)
  user = user or {}
  if type(user) ~= 'table' then
    return nil, 'setup() takes a table'
  end
  local opts = M.defaults()
  for key, value in pairs(user) do
    if opts[key] == nil and not vim.tbl_contains({ 'cmd', 'log_file', 'capabilities', 'on_attach', 'on_exit' }, key) then
      return nil, string.format('unknown option %s', tostring(key))
    end
    opts[key] = value
  end
  if opts.cmd ~= nil and (type(opts.cmd) ~= 'table' or #opts.cmd == 0) then
    return nil, 'cmd must be a non-empty list of strings'
  end
  if type(opts.server_path) ~= 'string' or opts.server_path == '' then
    return nil, 'server_path must be a non-empty string'
  end
  if not M.log_levels[opts.log_level] then
    return nil, 'log_level must be one of debug, info, warn, error'
  end
  if type(opts.filetypes) ~= 'table' or #opts.filetypes == 0 then
    return nil, 'filetypes must be a non-empty list'
  end
  if opts.omnifunc ~= false and not M.omnifuncs[opts.omnifunc] then
    return nil, 'omnifunc must be "dsh", "lsp" or false'
  end
  if not M.prepare_modes[opts.prepare_mode] then
    return nil, 'prepare_mode must be "replace" or "preserve"'
  end
  if opts.split ~= 'split' and opts.split ~= 'vsplit' and opts.split ~= 'tabnew' then
    return nil, 'split must be "split", "vsplit" or "tabnew"'
  end
  local server_opts, err = M.server_options(opts.settings)
  if not server_opts then
    return nil, err
  end
  opts.settings = server_opts
  return opts
end

--- The command line that starts the server, or nil and a message when the
--- binary cannot be found.
function M.command(opts)
  local cmd
  if opts.cmd then
    cmd = vim.deepcopy(opts.cmd)
  else
    cmd = { expand_path(opts.server_path) }
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    return nil, string.format(
      '%s is not executable: install dsh-refls on PATH or set server_path in require("dsh_refls").setup()',
      cmd[1]
    )
  end
  if not opts.cmd then
    table.insert(cmd, '--log-level')
    table.insert(cmd, opts.log_level)
    local log_file = M.usable_log_file(M.log_file(opts))
    if log_file then
      table.insert(cmd, '--log-file')
      table.insert(cmd, log_file)
    end
  end
  return cmd
end

--- log_file when its directory exists or could be made, else nil. On a
--- fresh account Neovim's stdpath('cache') does not exist yet; the server
--- makes a missing log directory itself, but an older server exits when it
--- cannot open its log file, so the directory is made here too, and a
--- directory that cannot be made leaves the log on stderr.
function M.usable_log_file(log_file)
  if not log_file then
    return nil
  end
  local dir = vim.fn.fnamemodify(log_file, ':h')
  if vim.fn.isdirectory(dir) == 0 then
    pcall(vim.fn.mkdir, dir, 'p', 448) -- 0700
  end
  if vim.fn.isdirectory(dir) == 0 then
    return nil
  end
  return log_file
end

--- The server command of lsp/dsh_refls.lua (vim.lsp.enable): dsh-refls
--- from PATH, logging to dsh-refls.log in Neovim's cache directory when
--- that can be made.
function M.lsp_enable_command()
  local cmd = { 'dsh-refls' }
  local log_file = M.usable_log_file(M.log_file(M.defaults()))
  if log_file then
    table.insert(cmd, '--log-file')
    table.insert(cmd, log_file)
  end
  return cmd
end

--- Where the server logs: the `log_file` option, else dsh-refls.log in
--- Neovim's cache directory, or nil when `log_file = false` sends the log to
--- stderr. (Neovim files every stderr line of a server under [ERROR] in its
--- LSP log, whatever its level, so stderr is not the default.)
function M.log_file(opts)
  if opts.log_file == false then
    return nil
  end
  if opts.log_file then
    return expand_path(opts.log_file)
  end
  return vim.fn.stdpath('cache') .. '/dsh-refls.log'
end

--- A table that encodes as a JSON object even when empty.
function M.as_object(t)
  if next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

return M
