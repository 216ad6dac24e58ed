-- Headless Neovim attaches `onnxsc lsp` to the buffer of $ONNXSC_FILE and writes the diagnostics
-- it receives, one JSON object per line, to $ONNXSC_OUT. `vim.lsp.start` (Neovim 0.8+) as the
-- README shows; Debian 12's Neovim 0.7 has only `vim.lsp.start_client`.
local bin, file, out = os.getenv("ONNXSC_BIN"), os.getenv("ONNXSC_FILE"), os.getenv("ONNXSC_OUT")
vim.cmd("edit " .. vim.fn.fnameescape(file))
local config = { name = "onnxsc", cmd = { bin, "lsp" }, root_dir = vim.fn.fnamemodify(file, ":h") }
if vim.lsp.start then
  vim.lsp.start(config)
else
  local id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(0, id)
end
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
  table.insert(lines, encode({ timeout = true }))
end
vim.fn.writefile(lines, out)
for _, client in ipairs(vim.lsp.get_active_clients()) do
  client.stop()
end
vim.wait(2000, function()
  return #vim.lsp.get_active_clients() == 0
end, 20)
vim.cmd("qa!")
