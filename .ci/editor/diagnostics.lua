-- A real editor's LSP client against `decision lsp`: Neovim's built-in client opens a broken
-- contract, must receive the checker's diagnostic, then fixes the typo in the buffer (an
-- incremental change) and must see the diagnostics clear. Writes one line per finding to
-- $RESULT and quits with status 1 on the first failure.
local result = assert(io.open(vim.env.RESULT, 'w'))
local function say(line) result:write(line .. '\n'); result:flush() end
local function fail(why) say('FAIL ' .. why); result:close(); vim.cmd('cquit 1') end

vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.CONTRACT))
local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({
  name = 'decision',
  cmd = { vim.env.DECISION_BIN, 'lsp' },
  root_dir = vim.fn.fnamemodify(vim.env.CONTRACT, ':p:h'),
})
if not client then fail('the server did not start') end
vim.lsp.buf_attach_client(buf, client)

local function code(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
end

if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
  fail('no diagnostics within 30 s')
end
for _, d in ipairs(vim.diagnostic.get(buf)) do
  say(string.format('diagnostic %s %d:%d %s', tostring(code(d)), d.lnum + 1, d.col + 1, d.message:gsub('\n', ' | ')))
end

-- `→ cal` becomes `→ call` (line 12 of examples/broken/broken.md): one incremental change.
local line = vim.api.nvim_buf_get_lines(buf, 11, 12, true)[1]
local at = line:find('cal$')
if not at then fail('line 12 is not the broken rule: ' .. line) end
vim.api.nvim_buf_set_text(buf, 11, #line, 11, #line, { 'l' })
if not vim.wait(30000, function() return #vim.diagnostic.get(buf) == 0 end, 50) then
  fail('the diagnostics did not clear after the fix')
end
say('cleared')
result:close()
vim.cmd('qall!')
