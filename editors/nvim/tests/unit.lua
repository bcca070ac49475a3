-- Unit tests of dsh_refls.config and dsh_refls.present (no server needed).
-- Run: nvim --headless -u NONE --cmd "set rtp^=editors/nvim" -c "luafile editors/nvim/tests/unit.lua"

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = script_dir .. '/?.lua;' .. package.path
vim.opt.rtp:prepend(vim.fn.fnamemodify(script_dir, ':h'))

local H = require('harness')
local config = require('dsh_refls.config')
local present = require('dsh_refls.present')
local complete = require('dsh_refls.complete')
local check = H.check

H.run('unit', function()
  -- resolve: defaults and validation.
  local opts = assert(config.resolve({}))
  check(opts.server_path == 'dsh-refls', 'default server_path: %s', opts.server_path)
  check(vim.deep_equal(opts.filetypes, { 'markdown', 'text', 'dshprompt' }), 'default filetypes')
  check(opts.prepare_mode == 'replace', 'default prepare_mode')

  local bad = {
    { { nonsense = 1 }, 'unknown option nonsense' },
    { { log_level = 'loud' }, 'log_level' },
    { { filetypes = {} }, 'filetypes' },
    { { prepare_mode = 'x' }, 'prepare_mode' },
    { { split = 'float' }, 'split' },
    { { omnifunc = true }, 'omnifunc' },
    { { cmd = {} }, 'cmd' },
    { { settings = { maxReferenceBytes = '4096' } }, 'settings.maxReferenceBytes must be a number' },
    { { settings = { unknownKey = 1 } }, 'not a dsh%-refls option' },
    { { settings = { watch = 'inotify' } }, 'settings.watch' },
    { { settings = { excludedDirectories = { 'a', 3 } } }, 'list of strings' },
  }
  for _, case in ipairs(bad) do
    local got, err = config.resolve(case[1])
    check(got == nil and err and err:find(case[2]), 'resolve(%s): want error %q, got %s', vim.inspect(case[1]), case[2], tostring(err))
  end

  -- server_options: every §4.1 key, blanks dropped, ~ expanded in paths.
  local home = vim.fn.expand('~')
  local so = assert(config.server_options({
    sessionsRoot = '~/.dsh/sessions',
    sessionId = ' abc ',
    cwd = '/w',
    maxReferences = 2,
    maxReferenceBytes = 4096,
    referenceContextFraction = 0.5,
    contextWindow = 1000,
    candidateLimit = 7,
    fileMaxResults = 3,
    directoryTokenBudget = 0,
    excludedDirectories = { 'dist', ' ', 'build ' },
    spillDir = '',
    watch = 'poll',
    candidateOrder = 'created',
    recallSearch = false,
    redactSecrets = true,
    frecency = false,
    sessionScope = ' workspace ',
    showAutomationSessions = true,
  }))
  check(vim.deep_equal(so, {
    sessionsRoot = home .. '/.dsh/sessions',
    sessionId = 'abc',
    cwd = '/w',
    maxReferences = 2,
    maxReferenceBytes = 4096,
    referenceContextFraction = 0.5,
    contextWindow = 1000,
    candidateLimit = 7,
    fileMaxResults = 3,
    directoryTokenBudget = 0,
    excludedDirectories = { 'dist', 'build' },
    watch = 'poll',
    candidateOrder = 'created',
    recallSearch = false,
    redactSecrets = true,
    frecency = false,
    sessionScope = 'workspace',
    showAutomationSessions = true,
  }), 'server_options: %s', vim.inspect(so))
  check(vim.tbl_count(config.server_option_types) == 19,
    'the 12 SPEC §4.1 keys and candidateOrder, recallSearch, redactSecrets, frecency, sessionScope, showAutomationSessions, directoryTokenBudget are known')
  local bad, berr = config.server_options({ candidateOrder = 'newest' })
  check(bad == nil and berr:find('candidateOrder'), 'a bad candidateOrder is rejected: %s', tostring(berr))
  bad, berr = config.server_options({ sessionScope = 'here' })
  check(bad == nil and berr:find('sessionScope must be'), 'a bad sessionScope is rejected: %s', tostring(berr))
  bad, berr = config.server_options({ showAutomationSessions = 1 })
  check(bad == nil and berr:find('showAutomationSessions must be a boolean'), 'a non-boolean showAutomationSessions is rejected: %s', tostring(berr))
  bad, berr = config.server_options({ recallSearch = 'yes' })
  check(bad == nil and berr:find('recallSearch must be a boolean'), 'a non-boolean recallSearch is rejected: %s', tostring(berr))
  check(vim.json.encode(config.as_object({})) == '{}', 'empty options encode as an object')

  -- command: PATH lookup and flags.
  local cmd, cerr = config.command(assert(config.resolve({ server_path = '/nonexistent/dsh-refls' })))
  check(cmd == nil and cerr:find('not executable'), 'missing binary: %s', tostring(cerr))
  cmd = assert(config.command(assert(config.resolve({ server_path = 'sh', log_level = 'debug', log_file = '/tmp/x.log' }))))
  check(vim.deep_equal(cmd, { 'sh', '--log-level', 'debug', '--log-file', '/tmp/x.log' }), 'command: %s', vim.inspect(cmd))
  -- By default the log goes to a file, not to stderr (Neovim's LSP log
  -- files stderr under [ERROR]); log_file = false keeps stderr.
  cmd = assert(config.command(assert(config.resolve({ server_path = 'sh' }))))
  local default_log = vim.fn.stdpath('cache') .. '/dsh-refls.log'
  check(vim.deep_equal(cmd, { 'sh', '--log-level', 'info', '--log-file', default_log }), 'default command: %s', vim.inspect(cmd))
  cmd = assert(config.command(assert(config.resolve({ server_path = 'sh', log_file = false }))))
  check(vim.deep_equal(cmd, { 'sh', '--log-level', 'info' }), 'log_file = false: %s', vim.inspect(cmd))
  cmd = assert(config.command(assert(config.resolve({ cmd = { 'sh', '-c', 'true' } }))))
  check(vim.deep_equal(cmd, { 'sh', '-c', 'true' }), 'explicit cmd is used as given')
  -- A fresh account has no stdpath('cache') on Neovim 0.10+ (0.7 makes it
  -- for its own log): the log file's directory is made, 0700 (an older
  -- server exited when it could not open its log file).
  local fresh = vim.fn.tempname() .. '/cache/nvim'
  cmd = assert(config.command(assert(config.resolve({ server_path = 'sh', log_file = fresh .. '/dsh-refls.log' }))))
  check(cmd[5] == fresh .. '/dsh-refls.log' and vim.fn.isdirectory(fresh) == 1, 'the log directory was not made: %s', vim.inspect(cmd))
  check(vim.fn.getfperm(fresh) == 'rwx------', 'the log directory is %s, want rwx------', vim.fn.getfperm(fresh))
  -- A log directory that cannot be made leaves the log on stderr rather
  -- than naming a file the server cannot open.
  local blocker = vim.fn.tempname()
  vim.fn.writefile({ 'a file, not a directory' }, blocker)
  cmd = assert(config.command(assert(config.resolve({ server_path = 'sh', log_file = blocker .. '/sub/x.log' }))))
  check(vim.deep_equal(cmd, { 'sh', '--log-level', 'info' }), 'log file in an impossible directory: %s', vim.inspect(cmd))

  -- lsp/dsh_refls.lua, the vim.lsp.enable config of Neovim 0.11+: found on
  -- 'runtimepath' where vim.lsp.enable looks, logging to a file.
  local lsp_files = vim.api.nvim_get_runtime_file('lsp/dsh_refls.lua', false)
  check(#lsp_files == 1, 'lsp/dsh_refls.lua not on runtimepath: %s', vim.inspect(lsp_files))
  local lsp_cfg = dofile(lsp_files[1])
  check(vim.deep_equal(lsp_cfg.cmd, { 'dsh-refls', '--log-file', default_log }), 'lsp config cmd: %s', vim.inspect(lsp_cfg.cmd))
  check(vim.tbl_contains(lsp_cfg.filetypes, 'markdown') and vim.tbl_contains(lsp_cfg.root_markers, '.git'), 'lsp config: %s', vim.inspect(lsp_cfg))
  -- vim.lsp.config's settings.dsh go out as initializationOptions too.
  local init_params = { initializationOptions = lsp_cfg.init_options }
  lsp_cfg.before_init(init_params, { settings = { dsh = { sessionsRoot = '~/s' } } })
  check(vim.deep_equal(init_params.initializationOptions, { sessionsRoot = '~/s' }), 'before_init: %s', vim.inspect(init_params))
  init_params = { initializationOptions = lsp_cfg.init_options }
  lsp_cfg.before_init(init_params, lsp_cfg)
  check(vim.json.encode(init_params.initializationOptions) == '{}', 'before_init without settings: %s', vim.inspect(init_params))
  -- plugin/dsh_refls.lua, sourced at startup without setup(): the commands
  -- and the preview reader, for the clients of vim.lsp.enable too.
  vim.cmd('runtime plugin/dsh_refls.lua')
  for _, name in ipairs({ 'DshPrepare', 'DshStatus', 'DshRecall', 'DshFollow', 'DshSearch', 'DshForgetPicks' }) do
    check(vim.fn.exists(':' .. name) == 2, 'plugin/dsh_refls.lua does not define :%s', name)
  end
  check(#vim.api.nvim_get_autocmds({ event = 'BufReadCmd', pattern = 'dsh-refls:/session/*' }) == 1, 'no reader of dsh-refls: previews')
  check(require('dsh_refls').options() == nil, 'plugin/dsh_refls.lua called setup()')

  -- present: prepare lines and summary.
  local prompt = '## Referenced sessions\n\nwarning\n\n<referenced-sessions>\n[]\n</referenced-sessions>'
  local lines = assert(present.prepare_lines({
    content = 'Look at @Fix it',
    references = {},
    additionalContext = {
      source = { references = { { truncated = true, omittedMessages = 2, omittedBytes = 10 }, { truncated = false } } },
      content = { { type = 'text', text = prompt } },
    },
  }))
  local text = table.concat(lines, '\n')
  check(text:find('Look at @Fix it', 1, true), 'message in lines')
  check(text:find('<referenced-sessions>', 1, true), 'context in lines')
  check(text:find('2 session references; 1 snapshot shortened (2 messages and 10 bytes left out)', 1, true), 'summary: %s', text)
  local plain = assert(present.prepare_lines({ content = { { type = 'text', text = 'a' }, { type = 'image' }, { type = 'text', text = 'b' } }, additionalContext = vim.NIL }))
  check(table.concat(plain, '\n'):find('a\nb', 1, true) and not table.concat(plain, '\n'):find('# Context'), 'no context: %s', vim.inspect(plain))
  local nl, perr = present.prepare_lines({ content = 3 })
  check(nl == nil and perr:find('number'), 'bad content rejected')
  nl, perr = present.prepare_lines({ content = 'x', additionalContext = { content = {} } })
  check(nl == nil and perr:find('without text'), 'context without text rejected')

  -- complete: the menu starts at the server's edit range, in any encoding.
  -- "😀 é @fi": the emoji is 4 bytes / 2 UTF-16 units, é is 2 bytes / 1 unit.
  local line = '😀 é @fi'
  local at_byte = line:find('@', 1, true) - 1 -- 0-based byte column of "@"
  local cursor = #line
  local function item(label, new, start_char, extra)
    return vim.tbl_extend('force', {
      label = label,
      filterText = new,
      textEdit = { newText = new, range = { start = { line = 0, character = start_char }, ['end'] = { line = 0, character = 99 } } },
    }, extra or {})
  end
  for _, case in ipairs({ { 'utf-16', 5 }, { 'utf-8', at_byte }, { 'utf-32', 4 } }) do
    local enc, at_char = case[1], case[2]
    local items = { item('file.md', '@file.md', at_char, { sortText = '00002', kind = 17 }), item('Fix it', '@[Fix it](dsh-session:Ik0i)', at_char, { sortText = '00001', kind = 18, labelDetails = { description = 'proj · 1h ago' } }) }
    local start = complete.start_col(items, line, 0, cursor, enc)
    check(start == at_byte, '%s: start %d, want %d', enc, start, at_byte)
    local ci = complete.to_complete_items(items, line, 0, start, enc)
    check(#ci == 2 and ci[1].word == '@[Fix it](dsh-session:Ik0i)' and ci[2].word == '@file.md', '%s: words %s', enc, vim.inspect(ci))
    check(ci[1].abbr == 'Fix it' and ci[1].kind == 'Reference' and ci[1].menu == 'proj · 1h ago' and ci[1].equal == 1, '%s: session entry %s', enc, vim.inspect(ci[1]))
    check(ci[2].kind == 'File', '%s: file kind %s', enc, ci[2].kind)
  end
  -- Without edit ranges the keyword before the cursor starts the completion.
  check(complete.start_col({ { label = 'x' } }, 'abc de', 0, 6, 'utf-16') == 4, 'keyword fallback')
  -- The item's label and data ride along as user_data: the accepted entry
  -- is resolved and runs the command it resolves with (an item that
  -- carries a command runs it as it is); an entry without data, or no
  -- entry, sends nothing.
  local data = { kind = 'file', path = 'a.md' }
  local cmd = { title = 'count the pick', command = 'dsh-refls.accepted', arguments = { data } }
  local entries = complete.to_complete_items({ item('a.md', '@a.md', 0, { data = data }), item('b.md', '@b.md', 0),
    item('c.md', '@c.md', 0, { data = { kind = 'file', path = 'c.md' }, command = cmd }) }, '@', 0, 0, 'utf-8')
  check(vim.deep_equal(complete.accepted_item(entries[1]), { label = 'a.md', data = data }), 'the item of an accepted entry: %s', vim.inspect(entries[1]))
  check(complete.accepted_item(entries[2]) == nil and complete.accepted_item({}) == nil and complete.accepted_item(nil) == nil,
    'no item without data')
  local sent = {}
  local function request(method, params, handler)
    table.insert(sent, { method, params })
    if method == 'completionItem/resolve' then
      handler(nil, vim.tbl_extend('force', params, { command = cmd }))
    end
  end
  local fake = { request = request }
  if vim.fn.has('nvim-0.11') == 1 then
    fake.request = function(_, ...) return request(...) end
  end
  complete.completed(fake, entries[1], 0)
  complete.completed(fake, entries[2], 0)
  complete.completed(nil, entries[1], 0)
  check(#sent == 2 and sent[1][1] == 'completionItem/resolve' and vim.deep_equal(sent[1][2], { label = 'a.md', data = data })
    and sent[2][1] == 'workspace/executeCommand' and vim.deep_equal(sent[2][2], { command = cmd.command, arguments = cmd.arguments }),
    'completed resolves the item and runs its command once: %s', vim.inspect(sent))
  sent = {}
  complete.completed(fake, entries[3], 0)
  check(#sent == 1 and sent[1][1] == 'workspace/executeCommand', 'an item with its command runs it: %s', vim.inspect(sent))
  -- An item starting later than the menu keeps the text in between.
  local mixed = complete.to_complete_items({ item('b', 'bb', 2) }, 'a bc', 0, 0, 'utf-8')
  check(mixed[1].word == 'a bb', 'text between starts kept: %s', mixed[1].word)

  -- present: status and errors.
  local status = table.concat(present.status_lines({ sessionsIndexed = 9, watchMode = 'fsnotify', lastUpdate = vim.NIL, skipped = { { path = '/x', reason = 'bad' } } }), '\n')
  check(status:find('- sessionsIndexed: 9', 1, true) and status:find('- lastUpdate: none', 1, true), 'status scalars: %s', status)
  check(status:find('## skipped\n\n[\n  {\n    "path": "/x",\n    "reason": "bad"\n  }\n]', 1, true), 'status nested: %s', status)
  check(present.describe_error({ code = -32001, message = 'gone', data = { code = 'SESSION_REFERENCE_READ_FAILED' } }) == 'gone (SESSION_REFERENCE_READ_FAILED)', 'error with dsh code')
  check(present.describe_error({ code = -32800, message = 'cancelled' }) == 'cancelled (JSON-RPC -32800)', 'error with JSON-RPC code')
end)
