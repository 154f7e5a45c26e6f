-- Neovim as a TCP client, configured as docs/editors.md says ("Over TCP"): connect to a
-- running `gradguard serve --tcp`, present the token read from its file, open the UNet3+
-- seed and report the diagnostics Neovim shows, as JSON for the Python test to check.
-- Run as: nvim --headless --clean -l tcp.lua  (GG_PORT, GG_TOKEN_FILE, GG_FILE, GG_OUT)
local port, token_file = tonumber(os.getenv("GG_PORT")), os.getenv("GG_TOKEN_FILE")
local file, out = os.getenv("GG_FILE"), os.getenv("GG_OUT")
local report = {}

local function finish()
  local handle = assert(io.open(out, "w"))
  handle:write(vim.json.encode(report))
  handle:close()
  vim.cmd("qa!")
end

-- The documented configuration, with the test's port and token file.
vim.lsp.config('gradguard', {
  cmd = vim.lsp.rpc.connect('127.0.0.1', port),
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', '.git' },
  before_init = function(params)  -- read when connecting: the file may be new
    local token = vim.fn.readfile(vim.fn.expand(token_file))[1]
    params.initializationOptions = { token = vim.trim(token or '') }
  end,
})
vim.lsp.enable('gradguard')

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  report.error = "no diagnostics within 30 s"
  return finish()
end
local client = vim.lsp.get_clients({ bufnr = buf, name = "gradguard" })[1]
report.root = client and client.root_dir
report.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(report.diagnostics, { line = d.lnum + 1, code = d.code, source = d.source })
end
finish()
