-- :checkhealth dsh_refls — what a new user needs to see working: setup(),
-- the server binary, the sessions root, completion options, the log file and
-- the running servers. Works with Neovim 0.7's `health` module and with
-- vim.health (0.8+; the report_* names before 0.10).

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

--- Runs the checks (called by :checkhealth dsh_refls).
function M.check()
  local r = reporter()
  local plugin = require('dsh_refls')
  local config = require('dsh_refls.config')
  local opts = plugin.options()

  r.start('dsh_refls: setup')
  if not opts then
    r.error("setup() has not been called", { "add require('dsh_refls').setup({}) to your init.lua" })
    return
  end
  r.ok('setup() done; filetypes: ' .. table.concat(opts.filetypes, ', '))

  r.start('dsh_refls: server')
  local cmd, err = config.command(opts)
  if not cmd then
    r.error(err)
  else
    r.ok('server: ' .. vim.fn.exepath(cmd[1]) .. ' (' .. table.concat(cmd, ' ') .. ')')
  end
  local log_file = config.log_file(opts)
  if log_file then
    r.ok('server log: ' .. log_file)
  elseif not opts.cmd then
    r.warn('log_file = false: Neovim files every server log line under [ERROR] in its LSP log')
  end

  r.start('dsh_refls: sessions')
  local root = opts.settings.sessionsRoot
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
      { "set vim.o.completeopt = 'menuone,noinsert' (see :help dsh_refls-completion)" }
    )
  end

  r.start('dsh_refls: running servers')
  local clients = plugin.clients()
  if #clients == 0 then
    r.info('no server running; open a ' .. table.concat(opts.filetypes, '/') .. ' file')
  end
  for _, c in ipairs(clients) do
    r.ok(string.format('client %d, root %s', c.id, tostring(c.config.root_dir)))
  end
end

return M
