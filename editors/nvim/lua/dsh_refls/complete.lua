-- An 'omnifunc' for dsh-refls completion that honours the server's edit range,
-- on every Neovim the plugin supports.
--
-- Neovim 0.7's vim.lsp.omnifunc only uses textEdit ranges of items without a
-- filterText, and dsh-refls sets filterText on every item (SPEC §4.2); it then
-- starts the completion after the "@" and accepting a session inserts
-- "@@[Title](dsh-session:…)". (Neovim 0.11+'s vim.lsp.completion, behind its
-- vim.lsp.omnifunc, starts at the edit range and keeps an item when its
-- filterText starts with the text from there to the cursor, "@rate": the
-- server writes a client named Neovim such filterTexts, so it works there,
-- and with autotrigger it asks again as you type.) This omnifunc asks the
-- server synchronously at findstart time, starts the completion where the
-- server's textEdit starts (the "@"), and asks again whenever the typed text
-- changes, so the server's own matching (title, id, cwd; fuzzy file search)
-- decides what is listed, whatever the filterTexts. The entry accepted is
-- resolved and runs the command it resolves with (the server counts the
-- pick, frecency) from CompleteDone, which Vim's own completion does not.

local compat = require('dsh_refls.compat')

local M = {}

--- Milliseconds one completion request may block typing. dsh-refls answers
--- in well under 30 ms (SPEC §5); past this the menu is left empty.
M.timeout_ms = 1000

-- Completion items of the last findstart call, handed to the second call.
-- Vim always calls the function twice in a row, so one slot is enough.
local pending = { items = {} }

--- Items of a completion result: a CompletionItem list or a CompletionList.
local function items_of(result)
  if type(result) ~= 'table' then
    return {}
  end
  if result.items then
    return result.items
  end
  return result
end

--- The range an item's textEdit replaces (TextEdit or InsertReplaceEdit).
local function edit_range(item)
  local te = item.textEdit
  if type(te) ~= 'table' then
    return nil
  end
  return te.range or te.insert
end

--- Text an item inserts: its edit, insertText or label; snippets reduced to text.
local function new_text(item)
  local text = item.label
  if type(item.textEdit) == 'table' and type(item.textEdit.newText) == 'string' then
    text = item.textEdit.newText
  elseif type(item.insertText) == 'string' and item.insertText ~= '' then
    text = item.insertText
  end
  -- A snippet (insertTextFormat 2) is inserted as its plain text where
  -- this Neovim can parse it; dsh-refls itself sends plain text.
  if item.insertTextFormat == 2 and vim.lsp.util.parse_snippet then
    text = vim.lsp.util.parse_snippet(text)
  end
  return text
end

--- The byte column where completion starts: the earliest start of an item
--- edit on the cursor line, else the start of the keyword before the cursor.
--- line is the cursor line, col the cursor byte column, row 0-based.
function M.start_col(items, line, row, col, encoding)
  local start
  for _, item in ipairs(items) do
    local range = edit_range(item)
    if range and range.start.line == row then
      local byte = compat.to_byte_index(line, range.start.character, encoding)
      if byte <= col and (not start or byte < start) then
        start = byte
      end
    end
  end
  if start then
    return start
  end
  return vim.fn.match(line:sub(1, col), '\\k*$')
end

--- Name of a CompletionItemKind number.
local function kind_name(kind)
  local names = vim.lsp.protocol.CompletionItemKind
  return (kind and names[kind]) or ''
end

--- Converts completion items to Vim complete-items, in the server's order
--- (sortText, then label). Text between start and an item's own edit start
--- is kept so that every word replaces exactly its range.
function M.to_complete_items(items, line, row, start, encoding)
  local sorted = vim.deepcopy(items)
  table.sort(sorted, function(a, b)
    local ka, kb = a.sortText or a.label, b.sortText or b.label
    if ka ~= kb then
      return ka < kb
    end
    return a.label < b.label
  end)
  local out = {}
  for _, item in ipairs(sorted) do
    local word = new_text(item)
    local range = edit_range(item)
    if range and range.start.line == row then
      local byte = compat.to_byte_index(line, range.start.character, encoding)
      if byte > start then
        word = line:sub(start + 1, byte) .. word
      end
    end
    local doc = item.documentation
    local info = type(doc) == 'table' and doc.value or doc
    local detail = item.detail
    if type(item.labelDetails) == 'table' and item.labelDetails.description then
      detail = item.labelDetails.description
    end
    table.insert(out, {
      word = word,
      abbr = item.label,
      kind = kind_name(item.kind),
      menu = detail or '',
      info = type(info) == 'string' and info or '',
      icase = 1,
      dup = 1,
      empty = 1,
      -- The server already matched the typed text; Vim must not drop items
      -- whose inserted text does not start with it (a mention starts "@[").
      equal = 1,
      -- What is resolved when the entry is accepted (M.completed).
      user_data = item.data ~= nil and { dsh_refls = { item = { label = item.label, data = item.data, command = item.command } } } or nil,
    })
  end
  return out
end

--- The completion item of the entry a completion ended with (completed, as
--- v:completed_item holds it): its label, data and command, or nil when
--- none was accepted or it is not the server's.
function M.accepted_item(completed)
  local ud = type(completed) == 'table' and completed.user_data or nil
  local item = type(ud) == 'table' and type(ud.dsh_refls) == 'table' and ud.dsh_refls.item or nil
  if type(item) ~= 'table' or item.data == nil then
    return nil
  end
  return item
end

--- Runs a command of the server on client.
local function run_command(client, cmd, bufnr)
  if type(cmd) == 'table' and type(cmd.command) == 'string' then
    compat.request(client, 'workspace/executeCommand', { command = cmd.command, arguments = cmd.arguments }, function() end, bufnr)
  end
end

--- Resolves the entry a completion ended with on client and runs the
--- command it resolves with (CompleteDone): the server counts the pick
--- (frecency). An item that carries its command runs it as it is.
function M.completed(client, completed, bufnr)
  local item = client and M.accepted_item(completed)
  if not item then
    return
  end
  if item.command ~= nil then
    return run_command(client, item.command, bufnr)
  end
  compat.request(client, 'completionItem/resolve', { label = item.label, data = item.data }, function(err, result)
    if not err and type(result) == 'table' then
      run_command(client, result.command, bufnr)
    end
  end, bufnr)
end

--- The omnifunc for a given client (see :help complete-functions).
function M.omnifunc(findstart, base, client)
  if findstart == 1 then
    pending.items = {}
    if not client then
      return -3
    end
    local bufnr = vim.api.nvim_get_current_buf()
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    row = row - 1
    local line = vim.api.nvim_get_current_line()
    local encoding = client.offset_encoding or 'utf-16'
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = row, character = compat.to_encoding_index(line, col, encoding) },
    }
    local resp = compat.request_sync(client, 'textDocument/completion', params, M.timeout_ms, bufnr)
    if not resp or resp.err then
      return -3
    end
    local items = items_of(resp.result)
    local start = M.start_col(items, line, row, col, encoding)
    pending.items = M.to_complete_items(items, line, row, start, encoding)
    return start
  end
  local words = pending.items
  pending.items = {}
  return { words = words, refresh = 'always' }
end

return M
