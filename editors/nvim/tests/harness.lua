-- Test harness for headless Neovim scripts: steps run in a coroutine that
-- sleeps by yielding to the event loop (so typeahead and LSP messages are
-- processed between steps); the first failure exits Neovim with code 1 and a
-- message on stderr, success exits 0. Used as:
--   nvim --headless -u NONE -c "luafile tests/e2e.lua"

local H = {}

--- Default limit of one wait, in milliseconds.
H.wait_ms = 10000

--- Poll interval of waits: short enough to keep the suite fast.
local poll_ms = 20

local function log(line)
  io.stderr:write(line .. '\n')
end
H.log = log

--- Exits Neovim with code 1 after printing msg.
function H.fail(msg)
  log('FAIL: ' .. tostring(msg))
  vim.cmd('cquit 1')
end

--- Raises an error that ends the test (caught in run) when cond is false.
function H.check(cond, msg, ...)
  if not cond then
    error(string.format(msg, ...), 2)
  end
end

--- Yields to the event loop for ms milliseconds.
function H.sleep(ms)
  local co = coroutine.running()
  vim.defer_fn(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      H.fail(err)
    end
  end, ms)
  coroutine.yield()
end

--- Waits until fn() returns a truthy value and returns it; fails after
--- timeout_ms with what.
function H.wait_for(what, fn, timeout_ms)
  local deadline = vim.loop.now() + (timeout_ms or H.wait_ms)
  while true do
    local v = fn()
    if v then
      return v
    end
    if vim.loop.now() > deadline then
      error('timed out waiting for ' .. what, 2)
    end
    H.sleep(poll_ms)
  end
end

--- Runs body in a coroutine, exits 0 when it returns and 1 when it raises.
function H.run(name, body, overall_ms)
  local done = false
  vim.defer_fn(function()
    if not done then
      H.fail(name .. ': overall timeout')
    end
  end, overall_ms or 60000)
  local co = coroutine.create(function()
    local ok, err = xpcall(body, debug.traceback)
    done = true
    if ok then
      log('PASS: ' .. name)
      vim.cmd('qall!')
    else
      H.fail(name .. ': ' .. tostring(err))
    end
  end)
  vim.schedule(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      H.fail(err)
    end
  end)
end

--- Reads and decodes a JSON file.
function H.read_json(path)
  local f = assert(io.open(path, 'r'))
  local data = f:read('*a')
  f:close()
  return vim.json.decode(data)
end

--- Text of all lines of a buffer.
function H.buf_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

return H
