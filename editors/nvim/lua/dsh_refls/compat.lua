-- Differences between the Neovim versions the plugin supports (0.7 to current).

local M = {}

--- vim.uv replaced vim.loop in Neovim 0.10.
M.uv = vim.uv or vim.loop

--- vim.islist replaced vim.tbl_islist in Neovim 0.10.
M.islist = vim.islist or vim.tbl_islist

--- Client methods take `self` from Neovim 0.11 on; older versions use dot calls.
local colon = vim.fn.has('nvim-0.11') == 1

--- client.request(method, params, handler, bufnr).
function M.request(client, method, params, handler, bufnr)
  if colon then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- client.request_sync(method, params, timeout_ms, bufnr): { err, result } or nil, err.
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if colon then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

--- client.notify(method, params).
function M.notify(client, method, params)
  if colon then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- client.is_stopped().
function M.is_stopped(client)
  if colon then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- vim.str_utfindex and vim.str_byteindex take the encoding as an argument
--- from Neovim 0.11 on; before, they only know UTF-32 and UTF-16.
local encoding_args = vim.fn.has('nvim-0.11') == 1

--- The number of code units (utf-8, utf-16 or utf-32) before byte col of line.
function M.to_encoding_index(line, col, encoding)
  if encoding == 'utf-8' then
    return col
  end
  if encoding_args then
    return vim.str_utfindex(line, encoding, col, false)
  end
  local utf32, utf16 = vim.str_utfindex(line, col)
  return encoding == 'utf-32' and utf32 or utf16
end

--- The byte column of a position given in code units of encoding; an index
--- past the end of the line is the end of the line.
function M.to_byte_index(line, index, encoding)
  if encoding == 'utf-8' then
    return math.min(index, #line)
  end
  local ok, byte
  if encoding_args then
    ok, byte = pcall(vim.str_byteindex, line, encoding, index, false)
  else
    ok, byte = pcall(vim.str_byteindex, line, index, encoding == 'utf-16')
  end
  if not ok then
    return #line
  end
  return byte
end

--- Buffers a client is attached to.
function M.client_buffers(client)
  if type(client.attached_buffers) == 'table' then
    return vim.tbl_keys(client.attached_buffers)
  end
  return vim.lsp.get_buffers_by_client_id(client.id)
end

return M
