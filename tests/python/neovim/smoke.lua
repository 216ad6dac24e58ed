-- Run in a headless Neovim whose init.lua is the documented configuration (the test copies it
-- from docs/editors.md) and which was started on $ONNXSC_FILE: waits for the diagnostics the
-- server sends for the buffer and writes them, one JSON object per line, to $ONNXSC_OUT.
local out = os.getenv("ONNXSC_OUT")
local received = vim.wait(30000, function()
  return #vim.diagnostic.get(0) > 0
end, 20)
local encode = (vim.json and vim.json.encode) or vim.fn.json_encode
local lines = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = (d.user_data and d.user_data.lsp) or {}
  table.insert(lines, encode({
    code = d.code or lsp.code,
    line = d.lnum,
    col = d.col,
    end_line = d.end_lnum,
    end_col = d.end_col,
    severity = d.severity,
    message = d.message,
  }))
end
if not received then
  table.insert(lines, encode({ timeout = true, clients = #vim.lsp.get_active_clients() }))
end
vim.fn.writefile(lines, out)
for _, client in ipairs(vim.lsp.get_active_clients()) do
  client.stop()
end
vim.wait(2000, function()
  return #vim.lsp.get_active_clients() == 0
end, 20)
vim.cmd("qa!")
