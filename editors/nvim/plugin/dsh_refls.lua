-- Loaded from 'runtimepath' at startup, with or without
-- require('dsh_refls').setup(): the commands (:DshPrepare, :DshStatus,
-- :DshRecall, :DshFollow, :DshSearch), the recall previews that go to
-- definition on a session mention opens (`dsh-refls:/session/…` buffers)
-- and the dshprompt filetype, for the clients of setup() and of
-- vim.lsp.enable('dsh_refls') alike. Starts no server.
if vim.g.loaded_dsh_refls then
  return
end
vim.g.loaded_dsh_refls = true
require('dsh_refls').define()
