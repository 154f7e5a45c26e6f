-- Neovim as the client: start gradguard with vim.lsp.start, open the UNet3+ seed, read
-- the diagnostics Neovim shows, apply the preferred code action (the quick fix), and
-- write what happened as JSON for the Python test to check.
-- Run as: nvim --headless --clean -l unet3plus.lua  (GG_PYTHON, GG_FILE, GG_OUT in env)
local python, file, out = os.getenv("GG_PYTHON"), os.getenv("GG_FILE"), os.getenv("GG_OUT")
local report = { steps = {} }

local function finish()
  local handle = assert(io.open(out, "w"))
  handle:write(vim.json.encode(report))
  handle:close()
  vim.cmd("qa!")
end

local function shown(buf)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(items, { line = d.lnum + 1, col = d.col, code = d.code, source = d.source,
                          message = d.message })
  end
  table.sort(items, function(a, b) return a.line < b.line end)
  return items
end

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = "gradguard",
  cmd = { python, "-m", "gradguard", "serve" },
  root_dir = vim.fs.dirname(file),
}, { bufnr = buf })
local client = vim.lsp.get_client_by_id(client_id)
if not client then
  report.error = "vim.lsp.start did not start a client"
  return finish()
end

if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  report.error = "no diagnostics within 30 s"
  return finish()
end
report.encoding = client.offset_encoding
report.pull = client.server_capabilities.diagnosticProvider ~= nil
report.before = shown(buf)

local lsp_diagnostic = vim.diagnostic.get(buf)[1].user_data.lsp
local response = client:request_sync("textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = lsp_diagnostic.range,
  context = { diagnostics = { lsp_diagnostic } },
}, 10000, buf)
local actions = (response and response.result) or {}
report.actions = {}
local chosen
for _, action in ipairs(actions) do
  table.insert(report.actions, { title = action.title, kind = action.kind,
                                 preferred = action.isPreferred == true })
  if action.isPreferred then chosen = chosen or action end
end
for _, action in ipairs(actions) do
  if not chosen and action.title:match("^Ignore") then chosen = action end
end
if not chosen then
  report.error = "no preferred or ignore action"
  return finish()
end
report.applied = chosen.title
vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)

local before = #report.before
vim.wait(30000, function() return #vim.diagnostic.get(buf) < before end, 20)
report.after = shown(buf)
report.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
finish()
