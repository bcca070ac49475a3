-- End-to-end test of the dsh_refls plugin against the real dsh-refls binary.
-- The Go test editors/nvim_test.go writes a session store and a workspace,
-- then runs:
--   DSH_E2E_PARAMS=params.json nvim --headless -u NONE -c "luafile editors/nvim/tests/e2e.lua"
-- params.json: { plugin_dir, server, sessions_root, workspace, message_file,
--   file_name, session_title, session_mention, log_file }
-- Exit code 0 means every step passed; anything else prints FAIL: on stderr.

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = script_dir .. '/?.lua;' .. package.path

local H = require('harness')
local check = H.check

--- Milliseconds one synchronous LSP request may take.
local request_ms = 5000

local params_path = os.getenv('DSH_E2E_PARAMS')
if not params_path or params_path == '' then
  H.fail('DSH_E2E_PARAMS is not set')
  return
end
local P = H.read_json(params_path)

vim.opt.rtp:prepend(P.plugin_dir)
vim.cmd('filetype on')
vim.o.completeopt = 'menuone,noinsert,noselect'
vim.o.shortmess = vim.o.shortmess .. 'c'
-- Mode messages would go to stderr, between the test's own lines.
vim.o.showmode = false

--- Items of a completion result (a list or a CompletionList).
-- The server options of the run: the sessions root, P.settings (when the
-- test gives some), then extra.
local function settings(extra)
  return vim.tbl_extend('force', { sessionsRoot = P.sessions_root }, type(P.settings) == 'table' and P.settings or {}, extra or {})
end

local function items_of(result)
  if type(result) ~= 'table' then
    return {}
  end
  return result.items or result
end

--- Runs a synchronous request on the buffer's dsh-refls client and returns its result.
local function request(buf, method, params)
  local answers, err = vim.lsp.buf_request_sync(buf, method, params, request_ms)
  check(answers, '%s: no answer (%s)', method, tostring(err))
  for _, a in pairs(answers) do
    check(not a.err, '%s failed: %s', method, vim.inspect(a.err))
    return a.result
  end
  error(method .. ': no client answered')
end

--- Position params for a 0-based line and byte column of the buffer, in the
--- client's offset encoding. (The cursor cannot stand after the last
--- character in Normal mode, so the position is computed, not read.)
local function position_at(buf, line, col)
  local client = require('dsh_refls').clients(buf)[1]
  local text = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
  local character = col
  if client.offset_encoding ~= 'utf-8' then
    local utf32, utf16 = vim.str_utfindex(text, col)
    character = client.offset_encoding == 'utf-32' and utf32 or utf16
  end
  return { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = line, character = character } }
end

--- Plain text of hover contents in any of the shapes LSP allows.
local function hover_text(contents)
  if type(contents) == 'string' then
    return contents
  end
  if type(contents) ~= 'table' then
    return ''
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, type(c) == 'string' and c or (c.value or ''))
  end
  return table.concat(parts, '\n')
end

H.run('nvim e2e', function()
  local dsh = require('dsh_refls')
  local exits = {}
  local ok, err = dsh.setup({
    server_path = P.server,
    log_level = 'debug',
    log_file = P.log_file,
    settings = settings(),
    on_exit = function(code, signal, id)
      exits[id] = { code = code, signal = signal }
    end,
  })
  check(ok, 'setup failed: %s', tostring(err))

  -- Opening a Markdown file starts the server and attaches it.
  vim.cmd('edit ' .. vim.fn.fnameescape(P.message_file))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'markdown', 'filetype is %q', vim.bo[buf].filetype)
  local client = H.wait_for('the client to initialize', function()
    local c = dsh.clients(buf)[1]
    return c and c.initialized and c.server_capabilities and c
  end)
  H.log('client ' .. client.id .. ' initialized, offset encoding ' .. tostring(client.offset_encoding))
  check(vim.bo[buf].omnifunc == "v:lua.require'dsh_refls'.omnifunc", 'omnifunc is %q', vim.bo[buf].omnifunc)
  local trig = ((client.server_capabilities.completionProvider or {}).triggerCharacters) or {}
  check(vim.tbl_contains(trig, '@'), 'completion trigger characters %s lack @', vim.inspect(trig))

  -- A completion request at "@" returns a session and a file item (the first
  -- index build may still be running, so ask until both kinds are there).
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last, last, false, { '@' })
  local line = last
  local session_item, file_item
  H.wait_for('a session item and a file item', function()
    local result = request(buf, 'textDocument/completion', position_at(buf, line, 1))
    session_item, file_item = nil, nil
    for _, item in ipairs(items_of(result)) do
      local te = item.textEdit and item.textEdit.newText or item.insertText or ''
      if te == P.session_mention then
        session_item = item
      end
      if te == '@' .. P.file_name then
        file_item = item
      end
    end
    return session_item and file_item
  end)
  check(session_item.label == P.session_title, 'session label %q, want %q', session_item.label, P.session_title)
  check(session_item.textEdit.range.start.character == 0, 'session edit starts at %d', session_item.textEdit.range.start.character)

  -- Through the omnifunc: type "@", <C-x><C-o>, pick the session, accept it.
  vim.api.nvim_buf_set_lines(buf, line, line + 1, false, { '' })
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('A@<C-x><C-o>', true, false, true), 'n', false)
  local info = H.wait_for('the completion menu', function()
    local i = vim.fn.complete_info({ 'items', 'mode' })
    return #i.items > 0 and i
  end)
  local index
  for k, it in ipairs(info.items) do
    if it.word == P.session_mention then
      index = k
    end
  end
  check(index, 'no menu entry inserts %q; menu: %s', P.session_mention, vim.inspect(vim.tbl_map(function(it)
    return it.word
  end, info.items)))
  H.log(string.format('menu has %d entries; the session is entry %d', #info.items, index))
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(string.rep('<C-n>', index) .. '<C-y><Esc>', true, false, true), 'n', false)
  local got = H.wait_for('the mention to be inserted', function()
    local l = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
    return vim.fn.mode() == 'n' and l ~= '' and l ~= '@' and l
  end)
  check(got == P.session_mention, 'inserted %q, want %q', got, P.session_mention)

  -- Hover on the mention shows the recall facts.
  local hover_text_got = H.wait_for('a hover on the mention', function()
    local result = request(buf, 'textDocument/hover', position_at(buf, line, 3))
    return result and result.contents and hover_text(result.contents)
  end)
  H.log('hover:\n' .. hover_text_got)
  -- As rendered: Markdown's backslash escapes (CHILD\_OK) are not shown.
  local hover_shown = hover_text_got:gsub('\\(%p)', '%1')
  for _, want in ipairs(P.hover_contains) do
    check(hover_shown:lower():find(want:lower(), 1, true), 'hover lacks %q:\n%s', want, hover_text_got)
  end

  -- :DshRecall on the mention opens the session's recall preview (the
  -- target of its definition) in a read-only scratch buffer.
  vim.api.nvim_win_set_cursor(0, { line + 1, 3 })
  vim.cmd('DshRecall')
  local recall = H.wait_for('the recall preview buffer', function()
    local b = vim.api.nvim_get_current_buf()
    return vim.api.nvim_buf_get_name(b):find('dsh://recall/', 1, true) and #H.buf_text(b) > 0 and b
  end)
  local recall_text = H.buf_text(recall)
  H.log('recall preview ' .. vim.api.nvim_buf_get_name(recall) .. ':\n' .. recall_text)
  check(recall_text:gsub('\\(%p)', '%1'):find(P.session_title, 1, true), 'recall preview lacks the title %q:\n%s', P.session_title, recall_text)
  check(vim.bo[recall].buftype == 'nofile' and not vim.bo[recall].modified and not vim.bo[recall].modifiable, 'recall preview is not a read-only scratch buffer')
  check(#dsh.clients(recall) == 0 and #vim.diagnostic.get(recall) == 0, 'recall preview is attached or diagnosed')
  vim.cmd('close')
  check(vim.api.nvim_get_current_buf() == buf, 'closing the preview did not return to the message')

  -- Go to definition (gd) on the mention opens the same preview.
  vim.api.nvim_win_set_cursor(0, { line + 1, 3 })
  vim.lsp.buf.definition()
  local via_gd = H.wait_for('the preview from go to definition', function()
    local b = vim.api.nvim_get_current_buf()
    return b ~= recall and vim.api.nvim_buf_get_name(b):find('dsh://recall/', 1, true) and #H.buf_text(b) > 0 and b
  end)
  -- Relative ages ("last active 3d ago") may cross a unit between the two
  -- reads: the demo's sessions are created whole days ago.
  local function aged(text)
    return (text:gsub('%d+[smhd] ago', 'N ago'))
  end
  check(aged(H.buf_text(via_gd)) == aged(recall_text), 'go to definition shows another preview:\n%s', H.buf_text(via_gd))
  check(vim.bo[via_gd].buftype == 'nofile', 'go-to-definition preview is not a scratch buffer')
  vim.cmd('close')

  -- :DshPrepare opens the prepared message and the context.
  local prepared
  vim.cmd('DshPrepare')
  prepared = H.wait_for('the :DshPrepare buffer', function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find('dsh://prepared/', 1, true) then
        return b
      end
    end
  end)
  local text = H.buf_text(prepared)
  check(text:find('<referenced-sessions>', 1, true), ':DshPrepare buffer lacks <referenced-sessions>:\n%s', text)
  check(text:find('@' .. P.session_title, 1, true), ':DshPrepare buffer lacks the rewritten mention @%s', P.session_title)
  check(vim.api.nvim_get_current_buf() == prepared, ':DshPrepare did not show its buffer')
  -- A scratch buffer: never a file to save, never attached, never diagnosed.
  check(vim.bo[prepared].buftype == 'nofile', 'prepared buffer has buftype %q', vim.bo[prepared].buftype)
  check(not vim.bo[prepared].modified, 'prepared buffer is modified: closing it would ask to save')
  check(#dsh.clients(prepared) == 0, 'the server is attached to its own prepared message')
  check(#vim.diagnostic.get(prepared) == 0, 'the prepared message is diagnosed: %s', vim.inspect(vim.diagnostic.get(prepared)))

  -- :DshStatus from that scratch buffer, right after :DshPrepare (issue 11:
  -- it said "no dsh-refls server is attached to this buffer").
  vim.cmd('DshStatus')
  local status = H.wait_for('the :DshStatus buffer', function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find('dsh://status/', 1, true) then
        return b
      end
    end
  end)
  check(H.buf_text(status):find('# dsh-refls index status', 1, true), ':DshStatus buffer: %s', H.buf_text(status))
  check(vim.bo[status].buftype == 'nofile' and not vim.bo[status].modified, 'status buffer is not a clean scratch buffer')
  vim.cmd('close')
  vim.cmd('close')
  check(vim.api.nvim_get_current_buf() == buf, 'closing the scratch buffers did not return to the message')

  -- Settings: a changed value reaches the running server, and so does a
  -- cleared one, which returns to its default without a restart.
  local at_line = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, at_line, at_line, false, { '@' })
  local function session_count()
    local result = request(buf, 'textDocument/completion', position_at(buf, at_line, 1))
    return #vim.tbl_filter(function(it)
      return it.kind == vim.lsp.protocol.CompletionItemKind.Reference
    end, items_of(result))
  end
  local all_sessions = session_count()
  check(all_sessions > 1, 'want several sessions, got %d', all_sessions)
  check(dsh.update_settings(settings({ candidateLimit = 1 })), 'update_settings failed')
  H.wait_for('candidateLimit 1 to apply', function()
    return session_count() == 1
  end)
  local old_id = client.id
  check(dsh.update_settings(settings()), 'update_settings failed')
  H.wait_for('the default candidate limit after clearing it', function()
    return session_count() == all_sessions
  end)
  check(dsh.clients(buf)[1].id == old_id and not exits[old_id], 'clearing a setting restarted the server')
  H.log(string.format('settings: %d sessions, 1 with candidateLimit 1, %d after clearing it', all_sessions, all_sessions))

  -- Stopping the client shuts the server down; it exits 0.
  local id = client.id
  vim.lsp.stop_client(id)
  local exit = H.wait_for('the server to exit', function()
    return exits[id]
  end)
  check(exit.code == 0 and exit.signal == 0, 'server exited with code %d, signal %d', exit.code, exit.signal)
  check(dsh.exit_status(id) and dsh.exit_status(id).code == 0, 'exit_status not recorded')
end, 90000)
