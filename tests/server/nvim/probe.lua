-- Neovim as the client of the torch probe: start gradguard with the workspace trusted,
-- open a file, run its "Run autograd probe" code lens (Neovim executes the lens'
-- command with workspace/executeCommand), and wait for the probe's diagnostics.
-- Run as: nvim --headless --clean -l probe.lua  (GG_PYTHON, GG_FILE, GG_OUT in env)
local python, file, out = os.getenv("GG_PYTHON"), os.getenv("GG_FILE"), os.getenv("GG_OUT")
local report = {}

local function finish()
  local handle = assert(io.open(out, "w"))
  handle:write(vim.json.encode(report))
  handle:close()
  vim.cmd("qa!")
end

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = "gradguard",
  cmd = { python, "-m", "gradguard", "serve" },
  root_dir = vim.fs.dirname(file),
  init_options = { trusted = true },
}, { bufnr = buf })
local client = vim.lsp.get_client_by_id(client_id)
if not client then
  report.error = "vim.lsp.start did not start a client"
  return finish()
end
if not vim.wait(30000, function() return client.initialized end, 20) then
  report.error = "the server did not initialize within 30 s"
  return finish()
end

local response = client:request_sync("textDocument/codeLens", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
}, 10000, buf)
local lenses = (response and response.result) or {}
report.lenses = {}
local script
for _, lens in ipairs(lenses) do
  table.insert(report.lenses, { line = lens.range.start.line + 1, title = lens.command.title,
                                name = lens.command.arguments[2] })
  if lens.command.arguments[2] == "__main__" then script = lens end
end
if not script then
  report.error = "no code lens for the script"
  return finish()
end

local answered
client:exec_cmd(script.command, { bufnr = buf }, function(err, result)
  answered = { err = err and err.message, result = result }
end)
local function probe_diagnostics()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == "gradguard-probe" then
      table.insert(found, { line = d.lnum + 1, code = d.code, message = d.message })
    end
  end
  return found
end
if not vim.wait(240000, function() return answered ~= nil and #probe_diagnostics() > 0 end, 50) then
  report.error = "no probe diagnostics within 240 s"
  report.answered = answered
  return finish()
end
report.answer = answered
report.diagnostics = probe_diagnostics()
finish()
