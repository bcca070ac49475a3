-- Turning dsh/prepare and dsh/status answers into buffer lines.
-- Pure functions: nothing here touches buffers or the server.

local M = {}

local islist = require('dsh_refls.compat').islist

--- Splits text into lines for nvim_buf_set_lines.
local function lines_of(text)
  return vim.split(text, '\n', { plain = true })
end

--- Reports whether v is JSON null as vim.json decodes it (vim.NIL) or nil.
local function is_null(v)
  return v == nil or v == vim.NIL
end

--- Text of a message content: a string as it is, or the text blocks of a
--- block list joined by newlines. Returns nil and a message otherwise.
function M.content_text(content)
  if type(content) == 'string' then
    return content
  end
  if type(content) == 'table' then
    local texts = {}
    for _, block in ipairs(content) do
      if type(block) == 'table' and block.type == 'text' and type(block.text) == 'string' then
        table.insert(texts, block.text)
      end
    end
    return table.concat(texts, '\n')
  end
  return nil, 'dsh/prepare returned content of type ' .. (content == vim.NIL and 'null' or type(content))
end

--- Plural helper.
local function count(n, one, many)
  return string.format('%d %s', n, n == 1 and one or many)
end

--- One summary line for a dsh/prepare answer.
function M.prepare_summary(result)
  local ctx = result.additionalContext
  if is_null(ctx) then
    return 'No session mentions: the message is sent unchanged, without context.'
  end
  local refs = (type(ctx.source) == 'table' and type(ctx.source.references) == 'table') and ctx.source.references or {}
  local truncated, msgs, bytes = 0, 0, 0
  for _, r in ipairs(refs) do
    if r.truncated == true then
      truncated = truncated + 1
      msgs = msgs + (type(r.omittedMessages) == 'number' and r.omittedMessages or 0)
      bytes = bytes + (type(r.omittedBytes) == 'number' and r.omittedBytes or 0)
    end
  end
  local s = 'Prepared with ' .. count(#refs, 'session reference', 'session references')
  if truncated > 0 then
    s = s
      .. string.format(
        '; %s shortened (%s and %s left out)',
        count(truncated, 'snapshot', 'snapshots'),
        count(msgs, 'message', 'messages'),
        count(bytes, 'byte', 'bytes')
      )
  elseif #refs > 0 then
    s = s .. '; nothing left out'
  end
  return s .. '.'
end

--- Lines of the :DshPrepare buffer: the prepared message, then the context
--- prompt text. Returns nil and a message when the answer breaks SPEC §4.3.
function M.prepare_lines(result)
  if type(result) ~= 'table' then
    return nil, 'dsh/prepare returned no result object'
  end
  local message, err = M.content_text(result.content)
  if not message then
    return nil, err
  end
  local out = { '# Prepared message', '', '<!-- ' .. M.prepare_summary(result) .. ' -->', '' }
  vim.list_extend(out, lines_of(message))
  local ctx = result.additionalContext
  if not is_null(ctx) then
    local first = type(ctx.content) == 'table' and ctx.content[1] or nil
    if type(first) ~= 'table' or type(first.text) ~= 'string' then
      return nil, 'dsh/prepare returned a context message without text'
    end
    vim.list_extend(out, { '', '# Context (sent as a separate user message)', '' })
    vim.list_extend(out, lines_of(first.text))
  end
  return out
end

--- Whether vim.json escapes "/" (older Neovim does, as backslash-slash).
local escapes_slash = vim.json.encode('/') ~= '"/"'

--- Encodes a scalar as JSON, with "/" unescaped for reading. Where vim.json
--- escapes it, every "/" of the input became backslash-slash, so each
--- backslash-slash pair that follows an even run of backslashes is one.
local function json_scalar(v)
  local s = vim.json.encode(v)
  if not escapes_slash then
    return s
  end
  return (s:gsub('(\\*)\\/', function(run)
    if #run % 2 == 0 then
      return run .. '/'
    end
    return nil
  end))
end

--- Encodes a value as indented JSON with sorted keys, for reading.
function M.pretty_json(value, indent)
  indent = indent or ''
  local inner = indent .. '  '
  if type(value) == 'table' and value ~= vim.NIL then
    if islist(value) then
      if #value == 0 then
        return '[]'
      end
      local parts = {}
      for _, v in ipairs(value) do
        table.insert(parts, inner .. M.pretty_json(v, inner))
      end
      return '[\n' .. table.concat(parts, ',\n') .. '\n' .. indent .. ']'
    end
    local keys = vim.tbl_keys(value)
    if #keys == 0 then
      return '{}'
    end
    table.sort(keys, function(a, b)
      return tostring(a) < tostring(b)
    end)
    local parts = {}
    for _, k in ipairs(keys) do
      table.insert(parts, inner .. json_scalar(tostring(k)) .. ': ' .. M.pretty_json(value[k], inner))
    end
    return '{\n' .. table.concat(parts, ',\n') .. '\n' .. indent .. '}'
  end
  if value == nil or value == vim.NIL then
    return 'null'
  end
  return json_scalar(value)
end

--- Lines of the :DshStatus buffer: scalar facts first, nested ones as JSON.
function M.status_lines(status)
  local out = { '# dsh-refls index status', '' }
  if type(status) ~= 'table' or islist(status) then
    vim.list_extend(out, lines_of(M.pretty_json(status)))
    return out
  end
  local keys = vim.tbl_keys(status)
  table.sort(keys)
  local nested = {}
  for _, k in ipairs(keys) do
    local v = status[k]
    if type(v) == 'table' then
      table.insert(nested, k)
    else
      table.insert(out, string.format('- %s: %s', k, is_null(v) and 'none' or tostring(v)))
    end
  end
  for _, k in ipairs(nested) do
    vim.list_extend(out, { '', '## ' .. k, '' })
    vim.list_extend(out, lines_of(M.pretty_json(status[k])))
  end
  return out
end

--- One line of a search result's place and age: its working directory and
--- creation time (createdAt is in milliseconds since the epoch).
local function search_place(r)
  local parts = {}
  if type(r.cwd) == 'string' and r.cwd ~= '' then
    table.insert(parts, r.cwd)
  end
  if type(r.createdAt) == 'number' and r.createdAt > 0 then
    table.insert(parts, 'created ' .. os.date('%Y-%m-%d %H:%M', math.floor(r.createdAt / 1000)))
  end
  table.insert(parts, 'id ' .. tostring(r.sessionId))
  return table.concat(parts, ' · ')
end

--- Lines of the :DshSearch buffer for a dsh/search answer, the session id
--- of each line that belongs to a result (by 1-based line number), so
--- that <CR> anywhere on a result opens that session, and the seq of each
--- match line, so that <CR> there opens it at that message.
function M.search_lines(query, results)
  local out = { '# dsh-refls search: ' .. query, '' }
  local targets, seqs = {}, {}
  if type(results) ~= 'table' or #results == 0 then
    table.insert(out, 'No session holds what you searched for.')
    return out, targets, seqs
  end
  table.insert(out, string.format('%s. <CR> on a result opens its recall preview, on a match at its message.', count(#results, 'session', 'sessions')))
  for _, r in ipairs(results) do
    table.insert(out, '')
    local title = (type(r.displayTitle) == 'string' and r.displayTitle ~= '') and r.displayTitle or tostring(r.label)
    table.insert(out, '## ' .. title)
    targets[#out] = r.sessionId
    table.insert(out, search_place(r))
    targets[#out] = r.sessionId
    for _, m in ipairs(type(r.matches) == 'table' and r.matches or {}) do
      local excerpt = tostring(m.excerpt or ''):gsub('[\r\n]', ' ')
      table.insert(out, string.format('- %s #%s: %s', tostring(m.role), tostring(m.seq), excerpt))
      targets[#out] = r.sessionId
      if type(m.seq) == 'number' then
        seqs[#out] = m.seq
      end
    end
  end
  return out, targets, seqs
end

--- The session id of the first dsh-refls.continueFrom code action in a
--- textDocument/codeAction answer, or nil.
function M.continue_session_of(actions)
  for _, a in ipairs(type(actions) == 'table' and actions or {}) do
    local cmd = type(a) == 'table' and a.command
    if type(cmd) == 'table' and cmd.command == 'dsh-refls.continueFrom' and type(cmd.arguments) == 'table' then
      local id = cmd.arguments[1]
      if type(id) == 'string' then
        return id
      end
    end
  end
  return nil
end

--- The sessions of a dsh/candidates answer for vim.ui.select, in its
--- order: { id = …, label = 'Title  (directory)' }. Returns nil and a
--- message for an answer that is not a list.
function M.continue_picks(cands)
  if type(cands) ~= 'table' then
    return nil, 'dsh/candidates answered ' .. vim.inspect(cands)
  end
  local out = {}
  for _, c in ipairs(cands) do
    if type(c) == 'table' and type(c.sessionId) == 'string' then
      local title = (type(c.displayTitle) == 'string' and c.displayTitle ~= '') and c.displayTitle or c.sessionId
      local dir = type(c.workingDirectory) == 'string' and c.workingDirectory or (type(c.cwd) == 'string' and c.cwd or nil)
      table.insert(out, { id = c.sessionId, label = dir and (title .. '  (' .. dir .. ')') or title })
    end
  end
  return out
end

--- One readable line for a failed request (an LSP ResponseError table).
function M.describe_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local message = (type(err.message) == 'string' and err.message ~= '') and err.message or 'request failed'
  if type(err.data) == 'table' and type(err.data.code) == 'string' then
    return string.format('%s (%s)', message, err.data.code)
  end
  if type(err.code) == 'number' then
    return string.format('%s (JSON-RPC %d)', message, err.code)
  end
  return message
end

return M
