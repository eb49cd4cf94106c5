-- gpulint for Neovim 0.7 and later: copy this file to
-- ~/.config/nvim/lua/gpulint.lua and call `require('gpulint').setup()` from
-- your init.lua (before any file is opened, so that the file given on the
-- command line is attached too).
--
-- On Neovim 0.11+ you may instead put `M.config` (the table below, returned
-- from the file) in ~/.config/nvim/lsp/gpulint.lua and call
-- vim.lsp.enable('gpulint'); that attaches by filetype only, so Quadlet
-- units, devcontainer.json and names such as Dockerfile_amd are left out
-- (README.md says how to add them).

local M = {}

M.config = {
  name = 'gpulint',
  cmd = { 'gpulint', 'server' },
  -- Buffers whose filetype says they are gpulint's, whatever their name
  -- (a script told by its `#!` line, `:set filetype=dockerfile`).
  filetypes = { 'yaml', 'yaml.docker-compose', 'dockerfile', 'sh', 'bash', 'zsh', 'make', 'markdown' },
  -- A gpulint.toml or the repository root decides the workspace.
  root_markers = { 'gpulint.toml', '.git' },
}

-- Every name gpulint reads a file by (its `FileKind::of`), as autocmd file
-- patterns matched against the file's name: Neovim gives some of them no
-- filetype (Quadlet units, `*.sbatch`, `Dockerfile_amd`) and others one
-- that is not only gpulint's (devcontainer.json is `json` or `jsonc`, like
-- every other settings file). tests/it/editor.rs checks them against the
-- names gpulint classifies.
M.file_patterns = {
  '*.yml',
  '*.yaml',
  '{Dockerfile,dockerfile,Containerfile,containerfile}',
  '{Dockerfile,dockerfile,Containerfile,containerfile}{.,-,_}*',
  '?*{.,-,_}{Dockerfile,dockerfile,Containerfile,containerfile}',
  '*.sh',
  '*.bash',
  '*.zsh',
  '*.sbatch',
  '*.slurm',
  'Makefile',
  'makefile',
  'GNUmakefile',
  '*.mk',
  '*.md',
  '*.markdown',
  'devcontainer.json',
  '.devcontainer.json',
  '*.container',
}

local uv = vim.uv or vim.loop

-- The nearest directory at or above the file's that holds one of the
-- markers (vim.fs.find needs Neovim 0.8).
local function root_of(file, markers)
  local dir = vim.fn.fnamemodify(file, ':p:h')
  while true do
    for _, marker in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

-- Neovim 0.7 has no vim.lsp.start: one client per workspace root, started
-- with vim.lsp.start_client and reused while it runs.
local clients_by_root = {}

local function start_on_0_7(config, root, bufnr)
  local id = clients_by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or client.is_stopped() then
    id = vim.lsp.start_client({ name = config.name, cmd = config.cmd, root_dir = root })
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

-- Attaches gpulint to the buffer; attaching twice (its filetype and its
-- name both match) is harmless.
function M.attach(config, bufnr)
  local root = root_of(vim.api.nvim_buf_get_name(bufnr), config.root_markers) or vim.fn.getcwd()
  if vim.lsp.start then
    -- Neovim 0.8 and 0.9 attach vim.lsp.start's client to the current
    -- buffer, whatever `bufnr` says.
    vim.api.nvim_buf_call(bufnr, function()
      vim.lsp.start({ name = config.name, cmd = config.cmd, root_dir = root }, { bufnr = bufnr })
    end)
  else
    start_on_0_7(config, root, bufnr)
  end
end

-- `overrides` replaces fields of M.config (`cmd`, `filetypes`,
-- `root_markers`) and `file_patterns`, each as a whole.
function M.setup(overrides)
  local config = vim.tbl_extend('force', M.config, { file_patterns = M.file_patterns }, overrides or {})
  local group = vim.api.nvim_create_augroup('gpulint', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(config, args.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    pattern = config.file_patterns,
    callback = function(args)
      M.attach(config, args.buf)
    end,
  })
end

return M
