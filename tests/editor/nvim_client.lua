-- Neovim as gpulint's LSP client, with the shipped config
-- (editors/neovim/gpulint.lua) and nothing else (`nvim --headless --clean`).
-- Run by tests/it/editor.rs from the repository root:
--
--   GPULINT_BIN=target/debug/gpulint GPULINT_ATTACH='a<TAB>b' \
--   GPULINT_DIAGNOSE='c' nvim --headless --clean -c 'luafile tests/editor/nvim_client.lua'
--
-- Each file of GPULINT_ATTACH (tab-separated paths, the first one gpulint's)
-- is opened and reported as `attached<TAB>PATH<TAB>yes|no<TAB>ROOT` (the
-- client's workspace root); each of GPULINT_DIAGNOSE is opened,
-- its diagnostics awaited and reported as
-- `diagnostic<TAB>PATH<TAB>LINE<TAB>CODE<TAB>MESSAGE` (LINE 1-based), or
-- `no-diagnostics<TAB>PATH`. The files are opened with :edit after setup(),
-- as an init.lua's setup() comes before the files Neovim is started with:
-- a file already loaded would see neither autocmd.

package.path = vim.fn.getcwd() .. '/editors/neovim/?.lua;' .. package.path
local gpulint = require('gpulint')

-- How long the server may take to start and lint one file (a debug build,
-- on a loaded 2-core machine).
local WAIT_MS = 20000
-- How long a buffer may take to attach to a server already running.
local ATTACHED_MS = 2000

local function say(...)
  io.stdout:write(table.concat({ ... }, '\t') .. '\n')
end

local function paths(variable)
  local value = vim.env[variable] or ''
  return vim.split(value, '\t', { plain = true, trimempty = true })
end

-- The gpulint client attached to the buffer, if one is.
local function gpulint_client(bufnr)
  local clients
  if vim.lsp.get_clients then
    clients = vim.lsp.get_clients({ bufnr = bufnr })
  else
    -- Neovim 0.7 to 0.9; only clients that finished initializing.
    clients = vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
  end
  for _, client in ipairs(clients) do
    if client.name == 'gpulint' then
      return client
    end
  end
  return nil
end

local function code_of(diagnostic)
  if diagnostic.code then
    return diagnostic.code
  end
  local lsp = diagnostic.user_data and diagnostic.user_data.lsp
  return lsp and lsp.code or ''
end

local function main()
  gpulint.setup({ cmd = { vim.env.GPULINT_BIN, 'server' } })
  local running = false
  for _, path in ipairs(paths('GPULINT_ATTACH')) do
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    local bufnr = vim.api.nvim_get_current_buf()
    -- Only the first file waits for the server to start; once it runs, a
    -- buffer attaches at once, and one of another kind is not kept the
    -- whole time.
    vim.wait(running and ATTACHED_MS or WAIT_MS, function()
      return gpulint_client(bufnr) ~= nil
    end, 20)
    local client = gpulint_client(bufnr)
    running = running or client ~= nil
    say('attached', path, client and 'yes' or 'no', client and client.config.root_dir or '')
  end
  for _, path in ipairs(paths('GPULINT_DIAGNOSE')) do
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    local bufnr = vim.api.nvim_get_current_buf()
    vim.wait(WAIT_MS, function()
      return #vim.diagnostic.get(bufnr) > 0
    end, 50)
    local diagnostics = vim.diagnostic.get(bufnr)
    if #diagnostics == 0 then
      say('no-diagnostics', path)
    end
    for _, d in ipairs(diagnostics) do
      say('diagnostic', path, tostring(d.lnum + 1), tostring(code_of(d)), (d.message:gsub('\n', ' ')))
    end
  end
end

local ok, err = pcall(main)
if not ok then
  say('error', tostring(err))
end
vim.cmd('qa!')
