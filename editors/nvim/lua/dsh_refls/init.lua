-- dsh_refls: Neovim client of the dsh-refls language server.
--
--   require('dsh_refls').setup({ settings = { sessionsRoot = '~/.dsh/sessions' } })
--
-- starts dsh-refls for the configured filetypes (vim.lsp.start on Neovim 0.8+,
-- vim.lsp.start_client + vim.lsp.buf_attach_client on 0.7) and sets the
-- plugin's omnifunc for `@` completion. The commands (:DshPrepare,
-- :DshStatus, …) and the recall previews of `dsh-refls:` URIs come from
-- plugin/dsh_refls.lua through M.define(), for the clients of setup() and
-- for those of vim.lsp.enable('dsh_refls') (lsp/dsh_refls.lua) alike.
-- See :help dsh_refls.

local compat = require('dsh_refls.compat')
local complete = require('dsh_refls.complete')
local config = require('dsh_refls.config')
local present = require('dsh_refls.present')

local M = {}

--- Name of the LSP client setup() starts.
M.client_name = 'dsh-refls'

--- Names of the clients the commands work with: setup()'s, and the one
--- vim.lsp.enable('dsh_refls') starts (named after its config).
M.client_names = { ['dsh-refls'] = true, ['dsh_refls'] = true }

-- Plugin state. opts is nil until setup() succeeds. clients maps a root
-- directory to a client id on Neovim 0.7, where nothing reuses clients for us.
-- exits records how each server process ended, by client id.
local state = { opts = nil, clients = {}, exits = {}, scratch_count = 0 }

--- Reports whether this Neovim has vim.lsp.start (0.8+).
local function has_lsp_start()
  return type(vim.lsp.start) == 'function'
end

local function notify(msg, level)
  vim.schedule(function()
    vim.notify('dsh-refls: ' .. msg, level or vim.log.levels.INFO)
  end)
end

--- Every running dsh-refls client, optionally only those attached to bufnr.
function M.clients(bufnr)
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients({ bufnr = bufnr })
  elseif bufnr then
    all = vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
  else
    all = vim.lsp.get_active_clients()
  end
  return vim.tbl_filter(function(c)
    return M.client_names[c.name] == true
  end, all)
end

--- The resolved options after setup(), or nil before.
function M.options()
  return state.opts
end

--- How the server process of a client ended: { code = n, signal = n }, or nil while it runs.
function M.exit_status(client_id)
  return state.exits[client_id]
end

--- The workspace root of a buffer: the nearest directory upwards holding one
--- of the root markers, else the current directory.
function M.find_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  while dir and dir ~= '' do
    for _, marker in ipairs(state.opts.root_markers) do
      if compat.uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

--- The client configuration for one workspace root.
local function client_config(root, cmd)
  local opts = state.opts
  return {
    name = M.client_name,
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = config.as_object(vim.deepcopy(opts.settings)),
    -- Answers workspace/configuration requests for the "dsh" section.
    settings = { dsh = config.as_object(vim.deepcopy(opts.settings)) },
    capabilities = M.with_continue_capability(opts.capabilities or vim.lsp.protocol.make_client_capabilities()),
    -- Go to definition on a session mention (gd, vim.lsp.buf.definition)
    -- lands on a dsh-refls: URI, which is no file: show its recall preview.
    handlers = {
      ['textDocument/definition'] = function(err, result, ctx, hconfig)
        local loc = type(result) == 'table' and (result.uri and result or result[1]) or nil
        local uri = loc and (loc.uri or loc.targetUri)
        if not err and uri and vim.startswith(uri, 'dsh-refls:') then
          local client = vim.lsp.get_client_by_id(ctx.client_id)
          return client and M.open_preview(client, uri, ctx.bufnr)
        end
        return vim.lsp.handlers['textDocument/definition'](err, result, ctx, hconfig)
      end,
    },
    on_attach = function(client, bufnr)
      if opts.omnifunc then
        vim.bo[bufnr].omnifunc = config.omnifuncs[opts.omnifunc]
      end
      if opts.omnifunc == 'dsh' then
        -- The accepted entry's command: the server counts the pick.
        vim.api.nvim_create_autocmd('CompleteDone', {
          group = vim.api.nvim_create_augroup('dsh_refls_complete_' .. bufnr, { clear = true }),
          buffer = bufnr,
          callback = function()
            complete.completed(M.clients(bufnr)[1], vim.v.completed_item, bufnr)
          end,
        })
      end
      if opts.on_attach then
        opts.on_attach(client, bufnr)
      end
    end,
    on_exit = function(code, signal, client_id)
      state.exits[client_id] = { code = code, signal = signal }
      for r, id in pairs(state.clients) do
        if id == client_id then
          state.clients[r] = nil
        end
      end
      if code ~= 0 then
        notify(
          string.format(
            'server exited with code %s (signal %s); :checkhealth dsh_refls names its log',
            tostring(code),
            tostring(signal)
          ),
          vim.log.levels.WARN
        )
      end
      if opts.on_exit then
        opts.on_exit(code, signal, client_id)
      end
    end,
  }
end

--- Starts (or reuses) the client for a buffer's workspace and attaches it.
--- Returns the client id, or nil when the buffer is not one to attach.
function M.attach(bufnr)
  if not state.opts then
    return nil
  end
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  -- Scratch, help and terminal buffers, and buffers without a file name,
  -- have no document the server could resolve.
  if vim.bo[bufnr].buftype ~= '' or vim.api.nvim_buf_get_name(bufnr) == '' then
    return nil
  end
  local cmd, err = config.command(state.opts)
  if not cmd then
    notify(err, vim.log.levels.ERROR)
    return nil
  end
  local root = M.find_root(bufnr)
  local cfg = client_config(root, cmd)
  if has_lsp_start() then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = state.clients[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or compat.is_stopped(client) then
    id = vim.lsp.start_client(cfg)
    if not id then
      notify('could not start ' .. cmd[1], vim.log.levels.ERROR)
      return nil
    end
    state.clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- 'omnifunc' of attached buffers with omnifunc = "dsh": completion that
--- replaces the server's whole `@…` range (see dsh_refls.complete).
function M.omnifunc(findstart, base)
  return complete.omnifunc(findstart, base, M.clients(vim.api.nvim_get_current_buf())[1])
end

--- Opens lines in a new scratch buffer in a split and returns its number.
local function open_scratch(kind, lines)
  state.scratch_count = state.scratch_count + 1
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_name(buf, string.format('dsh://%s/%d', kind, state.scratch_count))
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modified = false
  vim.cmd(state.opts and state.opts.split or config.defaults().split)
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

--- The dsh-refls client of a buffer, or nil after telling the user why there
--- is none. With any = true (index status, which is not about one buffer) a
--- buffer without a client, such as a scratch buffer of :DshPrepare, uses
--- the client whose root holds the current directory, else the first one.
local function client_of(bufnr, any)
  local clients = M.clients(bufnr)
  if #clients == 0 and any then
    clients = M.clients()
    local cwd = vim.fn.getcwd()
    table.sort(clients, function(a, b)
      local ia = a.config.root_dir and vim.startswith(cwd, a.config.root_dir) or false
      local ib = b.config.root_dir and vim.startswith(cwd, b.config.root_dir) or false
      if ia ~= ib then
        return ia
      end
      return a.id < b.id
    end)
  end
  if #clients == 0 then
    notify(
      any and 'no dsh-refls server is running; open a prompt file first'
        or 'no dsh-refls server is attached to this buffer',
      vim.log.levels.ERROR
    )
    return nil
  end
  return clients[1]
end

--- bufnr when client is attached to it, else a buffer it is attached to:
--- requests about no document (status, search) from a scratch buffer.
local function attached_buffer(client, bufnr)
  local buffers = compat.client_buffers(client)
  if not vim.tbl_contains(buffers, bufnr) then
    table.sort(buffers)
    return buffers[1] or bufnr
  end
  return bufnr
end

--- The args of a command (an empty table for nil), the buffer they name
--- (the current one for nil or 0) and their on_done callback (a no-op
--- when not given): what every command below starts with.
local function command_args(args)
  args = args or {}
  local bufnr = (args.bufnr == nil or args.bufnr == 0) and vim.api.nvim_get_current_buf() or args.bufnr
  return args, bufnr, args.on_done or function() end
end

--- The client a command talks to for bufnr (client_of) and the buffer to
--- send from: with any, any dsh-refls client will do, and the buffer is
--- one it is attached to (attached_buffer). Without a client it calls
--- done(nil, { message = 'no client' }) and returns nil.
local function command_client(bufnr, any, done)
  local client = client_of(bufnr, any)
  if not client then
    done(nil, { message = 'no client' })
    return nil
  end
  if any then
    bufnr = attached_buffer(client, bufnr)
  end
  return client, bufnr
end

--- Prepares a buffer's message with dsh/prepare and shows the prepared
--- message and its context in a scratch buffer.
--- args: { bufnr?, mode? = "replace"|"preserve", on_done? = function(scratch_bufnr|nil, result|err) }
function M.prepare(args)
  local bufnr, done
  args, bufnr, done = command_args(args)
  local mode = args.mode or (state.opts and state.opts.prepare_mode) or 'replace'
  if not config.prepare_modes[mode] then
    notify('mode must be "replace" or "preserve", not ' .. tostring(mode), vim.log.levels.ERROR)
    return done(nil, { message = 'bad mode' })
  end
  local client = command_client(bufnr, false, done)
  if not client then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, mode = mode }
  compat.request(client, 'dsh/prepare', params, function(err, result)
    if err then
      notify('preparing failed: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    local lines, perr = present.prepare_lines(result)
    if not lines then
      notify(perr, vim.log.levels.ERROR)
      return done(nil, { message = perr })
    end
    local buf = open_scratch('prepared', lines)
    notify(present.prepare_summary(result))
    done(buf, result)
  end, bufnr)
end

--- Shows the server's index facts (dsh/status) in a scratch buffer.
--- args: { bufnr?, on_done? = function(scratch_bufnr|nil, result|err) }
function M.status(args)
  local _, bufnr, done = command_args(args)
  local client
  client, bufnr = command_client(bufnr, true, done)
  if not client then
    return
  end
  compat.request(client, 'dsh/status', vim.empty_dict(), function(err, result)
    if err then
      notify('status failed: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    done(open_scratch('status', present.status_lines(result)), result)
  end, bufnr)
end

--- Reads the recall preview of a `dsh-refls:` URI (or of the session of
--- params = { sessionId = … }) with dsh/preview and shows it in a read-only
--- scratch buffer; done(buf|nil, preview|err).
function M.open_preview(client, uri, bufnr, done)
  done = done or function() end
  local params = type(uri) == 'table' and uri or { uri = uri }
  compat.request(client, 'dsh/preview', params, function(err, preview)
    if err then
      notify('no preview: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    local buf = open_scratch('recall', vim.split(preview.markdown or '', '\n', { plain = true }))
    vim.bo[buf].modifiable = false
    done(buf, preview)
  end, bufnr)
end

local hit_ns = vim.api.nvim_create_namespace('dsh_refls_hit')

--- Puts the cursor of the current window, which shows preview buffer buf,
--- on the hit dsh/preview answered (its selectionRange, in the client's
--- position encoding) and highlights the hit's words (Search).
function M.show_hit(client, buf, preview)
  local sel = type(preview) == 'table' and preview.selectionRange
  if not buf or type(sel) ~= 'table' or vim.api.nvim_get_current_buf() ~= buf then
    return
  end
  local encoding = client.offset_encoding or 'utf-16'
  local last = vim.api.nvim_buf_line_count(buf)
  local row = math.min(sel.start.line + 1, last)
  local text = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
  local col = compat.to_byte_index(text, sel.start.character, encoding)
  if sel['end'].line == sel.start.line then
    local to = compat.to_byte_index(text, sel['end'].character, encoding)
    if to > col then
      vim.api.nvim_buf_set_extmark(buf, hit_ns, row - 1, col, { end_col = to, hl_group = 'Search' })
    end
  end
  vim.api.nvim_win_set_cursor(0, { row, col })
  vim.cmd('normal! zz')
end

--- The dsh-refls: URI in a buffer name. Neovim makes such a name (one
--- slash after the scheme: no URL to it) relative to the current directory
--- when it opens it, e.g. from the quickfix list of workspace symbols.
function M.preview_uri_of(name)
  return name:match('(dsh%-refls:/session/.*)$')
end

--- Fills buffer buf, named after a `dsh-refls:` preview URI, with that
--- recall preview (dsh/preview) as a read-only scratch buffer. Runs from
--- BufReadCmd, so :edit, quickfix jumps (vim.lsp.buf.workspace_symbol) and
--- any location list entry with such a URI show the preview.
function M.read_preview(buf, name)
  local uri = M.preview_uri_of(name)
  local lines
  local client = uri and client_of(buf, true)
  if client then
    local resp, err = compat.request_sync(client, 'dsh/preview', { uri = uri }, 5000, attached_buffer(client, buf))
    if resp and not resp.err and type(resp.result) == 'table' then
      lines = vim.split(resp.result.markdown or '', '\n', { plain = true })
    else
      lines = { 'No preview: ' .. present.describe_error((resp and resp.err) or err or 'no answer') }
    end
  else
    lines = { 'No preview: no dsh-refls server is running' }
  end
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = 'markdown'
end

--- Opens the recall preview of the session mention under the cursor (the
--- `dsh-refls:` target of its textDocument/definition, read with
--- dsh/preview) in a read-only scratch buffer: never saved, never attached,
--- never diagnosed.
--- args: { bufnr?, on_done? = function(preview_bufnr|nil, err) }
function M.recall(args)
  local _, bufnr, done = command_args(args)
  local client = command_client(bufnr, false, done)
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  compat.request(client, 'textDocument/definition', params, function(err, result)
    if err then
      notify('no preview: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    local loc = type(result) == 'table' and (result.uri and result or result[1]) or nil
    local uri = loc and (loc.uri or loc.targetUri)
    if not uri or not vim.startswith(uri, 'dsh-refls:') then
      notify('the cursor is not on a session mention', vim.log.levels.WARN)
      return done(nil, { message = 'not a session mention' })
    end
    M.open_preview(client, uri, bufnr, done)
  end, bufnr)
end

--- Whether 0-based (line, character) lies in an LSP range (end exclusive).
local function in_range(range, line, character)
  local s, e = range.start, range['end']
  if line < s.line or line > e.line then
    return false
  end
  if line == s.line and character < s.character then
    return false
  end
  if line == e.line and character >= e.character then
    return false
  end
  return true
end

--- Follows the document link under the cursor (textDocument/documentLink):
--- a file mention opens the file, at the first line of its range (`#L10`);
--- a session mention opens its read-only recall preview. Neovim has no
--- document-link UI of its own, so this is the mentions' "click".
--- args: { bufnr?, on_done? = function(bufnr|nil, target|err) }
function M.follow(args)
  local _, bufnr, done = command_args(args)
  local client = command_client(bufnr, false, done)
  if not client then
    return
  end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
  local character = compat.to_encoding_index(line, col, client.offset_encoding or 'utf-16')
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  compat.request(client, 'textDocument/documentLink', params, function(err, links)
    if err then
      notify('no links: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    local target
    for _, link in ipairs(type(links) == 'table' and links or {}) do
      if link.target and in_range(link.range, row - 1, character) then
        target = link.target
      end
    end
    if not target then
      notify('the cursor is not on a mention with a link', vim.log.levels.WARN)
      return done(nil, { message = 'no link' })
    end
    if vim.startswith(target, 'dsh-refls:') then
      return M.open_preview(client, target, bufnr, done)
    end
    local uri, fragment = target:match('^([^#]*)#?(.*)$')
    vim.cmd('edit ' .. vim.fn.fnameescape(vim.uri_to_fname(uri)))
    local first = tonumber(fragment:match('^L(%d+)'))
    if first then
      local last = vim.api.nvim_buf_line_count(0)
      vim.api.nvim_win_set_cursor(0, { math.min(first, last), 0 })
    end
    done(vim.api.nvim_get_current_buf(), target)
  end, bufnr)
end

--- Finds sessions by what was said in them (dsh/search; the server needs
--- `recallSearch = true`) and lists them in a read-only scratch buffer
--- (dsh://search/N): title, working directory, creation time and the
--- matching excerpts. <CR> on a result opens its recall preview.
--- args: { query, bufnr?, limit?, on_done? = function(search_bufnr|nil, results|err) }
function M.search(args)
  local bufnr, done
  args, bufnr, done = command_args(args)
  local query = vim.trim(args.query or '')
  if query == '' then
    notify('search for what? :DshSearch {words or "a phrase"}', vim.log.levels.ERROR)
    return done(nil, { message = 'empty query' })
  end
  local client
  client, bufnr = command_client(bufnr, true, done)
  if not client then
    return
  end
  local params = { query = query, limit = args.limit or 50 }
  compat.request(client, 'dsh/search', params, function(err, results)
    if err then
      notify('search failed: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    local lines, targets, seqs = present.search_lines(query, results)
    local buf = open_scratch('search', lines)
    vim.bo[buf].modifiable = false
    vim.keymap.set('n', '<CR>', function()
      local line = vim.api.nvim_win_get_cursor(0)[1]
      local id = targets[line]
      if not id then
        notify('the cursor is not on a search result', vim.log.levels.WARN)
        return
      end
      if not seqs[line] then
        return M.open_preview(client, { sessionId = id }, bufnr)
      end
      M.open_preview(client, { sessionId = id, seq = seqs[line], query = query }, bufnr, function(pbuf, preview)
        M.show_hit(client, pbuf, preview)
      end)
    end, { buffer = buf, desc = 'Open the recall preview of this session (at the message of a match)' })
    done(buf, results)
  end, bufnr)
end

--- Forgets which sessions and files were picked from the menu in the
--- workspace of the buffer's client (frecency) and says how many.
--- args: { bufnr?, on_done? = function(forgotten|nil, err) }
function M.forget_picks(args)
  local _, bufnr, done = command_args(args)
  local client
  client, bufnr = command_client(bufnr, true, done)
  if not client then
    return
  end
  local params = { command = 'dsh-refls.forgetPicks', arguments = {} }
  compat.request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      notify('forgetting the picks failed: ' .. present.describe_error(err), vim.log.levels.ERROR)
      return done(nil, err)
    end
    local n = type(result) == 'table' and result.forgotten
    if type(n) ~= 'number' then
      notify('the server answered the forget command with ' .. vim.inspect(result), vim.log.levels.ERROR)
      return done(nil, { message = 'unexpected answer' })
    end
    notify(string.format('forgot the picks of %d sessions and files', n))
    done(n)
  end, bufnr)
end

--- The server's command that answers a prompt continuing from a session.
M.continue_command = 'dsh-refls.continueFrom'

--- capabilities with the experimental dshContinueFrom: the plugin opens
--- the prompts of M.continue_command, so the server offers its code action.
function M.with_continue_capability(capabilities)
  return vim.tbl_deep_extend('force', capabilities or {}, { experimental = { dshContinueFrom = true } })
end

--- Opens text in a new unsaved Markdown buffer (untitled://dsh-continue-N.md,
--- buftype nofile: never asks to be saved; :w {file} keeps it) attached to
--- client, in a split, with the cursor on its last line. Returns its number.
function M.open_prompt(client, text)
  state.scratch_count = state.scratch_count + 1
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, string.format('untitled://dsh-continue-%d.md', state.scratch_count))
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].filetype = 'markdown'
  vim.cmd(state.opts and state.opts.split or config.defaults().split)
  vim.api.nvim_win_set_buf(0, buf)
  vim.lsp.buf_attach_client(buf, client.id)
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
  return buf
end

--- Opens the prompt that continues from a session: the session of
--- args.session_id, else of the mention under the cursor (the server's
--- code action there says which), else one picked with vim.ui.select
--- from dsh/candidates.
--- args: { bufnr?, session_id?, client_id?, on_done? = function(prompt_bufnr|nil, result|err) }
function M.continue_from(args)
  local bufnr, done
  args, bufnr, done = command_args(args)
  local client = args.client_id and vim.lsp.get_client_by_id(args.client_id) or client_of(bufnr, true)
  if not client then
    return done(nil, { message = 'no client' })
  end
  local attached = attached_buffer(client, bufnr)
  local function open(id)
    local params = { command = M.continue_command, arguments = { id } }
    compat.request(client, 'workspace/executeCommand', params, function(err, result)
      if err then
        notify('continuing from the session failed: ' .. present.describe_error(err), vim.log.levels.ERROR)
        return done(nil, err)
      end
      if type(result) ~= 'table' or type(result.text) ~= 'string' then
        notify('the server answered ' .. M.continue_command .. ' with ' .. vim.inspect(result), vim.log.levels.ERROR)
        return done(nil, { message = 'unexpected answer' })
      end
      done(M.open_prompt(client, result.text), result)
    end, attached)
  end
  local function pick()
    compat.request(client, 'dsh/candidates', { query = '' }, function(err, cands)
      local items, perr = nil, err and present.describe_error(err)
      if not err then
        items, perr = present.continue_picks(cands)
      end
      if not items or #items == 0 then
        notify('no session to continue from' .. (perr and (': ' .. perr) or ''), vim.log.levels.WARN)
        return done(nil, { message = perr or 'no sessions' })
      end
      vim.ui.select(items, {
        prompt = 'Continue from session',
        format_item = function(it)
          return it.label
        end,
      }, function(choice)
        if not choice then
          return done(nil, { message = 'cancelled' })
        end
        open(choice.id)
      end)
    end, attached)
  end
  if args.session_id then
    return open(args.session_id)
  end
  if attached ~= bufnr then
    return pick()
  end
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {} }
  compat.request(client, 'textDocument/codeAction', params, function(err, actions)
    local id = not err and present.continue_session_of(actions)
    if id then
      return open(id)
    end
    pick()
  end, bufnr)
end

--- Replaces the server options (SPEC §4.1) of every running client with
--- workspace/didChangeConfiguration; the server replaces its options with
--- what it is sent, so a removed key returns to its default. Returns true, or
--- false and a message when the options are invalid.
function M.update_settings(settings)
  if not state.opts then
    return false, 'setup() has not been called'
  end
  local server_opts, err = config.server_options(settings)
  if not server_opts then
    notify(err, vim.log.levels.ERROR)
    return false, err
  end
  state.opts.settings = server_opts
  for _, client in ipairs(M.clients()) do
    client.config.settings = { dsh = config.as_object(vim.deepcopy(server_opts)) }
    compat.notify(client, 'workspace/didChangeConfiguration', { settings = client.config.settings })
  end
  return true
end

--- Defines what works without setup() (plugin/dsh_refls.lua calls it at
--- startup; setup() again): the dshprompt filetype, the reader of
--- `dsh-refls:/session/…` buffers (recall previews, for go to definition
--- and workspace symbols on any Neovim) and the commands, for every
--- dsh-refls client, setup()'s or vim.lsp.enable's.
function M.define()
  local group = vim.api.nvim_create_augroup('dsh_refls_define', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = { '*.dshprompt' },
    callback = function(a)
      vim.bo[a.buf].filetype = 'dshprompt'
    end,
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'dshprompt',
    callback = function(a)
      vim.bo[a.buf].syntax = 'markdown'
    end,
  })
  vim.api.nvim_create_autocmd('BufReadCmd', {
    group = group,
    pattern = { 'dsh-refls:/session/*', '*/dsh-refls:/session/*' },
    callback = function(a)
      M.read_preview(a.buf, a.match)
    end,
  })

  vim.api.nvim_create_user_command('DshPrepare', function(a)
    M.prepare({ mode = a.args ~= '' and a.args or nil })
  end, {
    nargs = '?',
    complete = function()
      return { 'replace', 'preserve' }
    end,
    desc = 'Prepare this message with dsh-refls and show the message and its context',
  })
  vim.api.nvim_create_user_command('DshRecall', function()
    M.recall()
  end, { desc = 'Show the recall preview of the session mention under the cursor' })
  vim.api.nvim_create_user_command('DshFollow', function()
    M.follow()
  end, { desc = 'Open the file or session preview the mention under the cursor links to' })
  vim.api.nvim_create_user_command('DshSearch', function(a)
    M.search({ query = a.args })
  end, { nargs = '+', desc = 'Find dsh sessions by what was said in them' })
  vim.api.nvim_create_user_command('DshStatus', function()
    M.status()
  end, { desc = 'Show the dsh-refls index status' })
  vim.api.nvim_create_user_command('DshForgetPicks', function()
    M.forget_picks()
  end, { desc = 'Forget which sessions and files were picked from the @ menu in this workspace' })
  vim.api.nvim_create_user_command('DshContinue', function()
    M.continue_from()
  end, { desc = 'Open a new prompt that continues from the session under the cursor, or a picked one' })
  -- The code action "Continue from this session" runs the command here:
  -- its answer opens as a new prompt.
  vim.lsp.commands[M.continue_command] = function(command, ctx)
    local id = type(command.arguments) == 'table' and command.arguments[1] or nil
    M.continue_from({ bufnr = ctx.bufnr, client_id = ctx.client_id, session_id = type(id) == 'string' and id or nil })
  end
end

--- Sets up the plugin: validates options, starts clients for matching
--- buffers, and defines the commands (M.define). Returns true, or false and
--- a message when an option is invalid.
function M.setup(user)
  local opts, err = config.resolve(user)
  if not opts then
    vim.notify('dsh-refls: ' .. err, vim.log.levels.ERROR)
    return false, err
  end
  state.opts = opts
  -- Again, for a Neovim started without plugins (-u NONE) or a plugin
  -- manager that calls setup() before plugin/ is sourced.
  M.define()

  local group = vim.api.nvim_create_augroup('dsh_refls', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = opts.filetypes,
    callback = function(a)
      M.attach(a.buf)
    end,
  })

  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(opts.filetypes, vim.bo[buf].filetype) then
      M.attach(buf)
    end
  end
  return true
end

return M
