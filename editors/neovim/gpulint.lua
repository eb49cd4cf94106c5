-- gpulint for Neovim. Two ways to start it; use one.
--
-- 1. Neovim 0.11+ (built-in configs): put this file in ~/.config/nvim/lsp/
--    as gpulint.lua, keeping only the table it returns, then call
--    vim.lsp.enable('gpulint').
-- 2. Any Neovim 0.8+: `require('gpulint').setup()` from your init.lua after
--    copying this file to ~/.config/nvim/lua/gpulint.lua.

local M = {}

M.config = {
  name = 'gpulint',
  cmd = { 'gpulint', 'server' },
  filetypes = { 'yaml', 'yaml.docker-compose', 'dockerfile', 'sh', 'bash', 'make', 'markdown' },
  -- A gpulint.toml or the repository root decides the workspace.
  root_markers = { 'gpulint.toml', '.git' },
}

function M.setup(overrides)
  local config = vim.tbl_deep_extend('force', M.config, overrides or {})
  vim.api.nvim_create_autocmd('FileType', {
    pattern = config.filetypes,
    callback = function(args)
      local root = vim.fs.dirname(vim.fs.find(config.root_markers, {
        upward = true,
        path = vim.fs.dirname(vim.api.nvim_buf_get_name(args.buf)),
      })[1])
      vim.lsp.start({
        name = config.name,
        cmd = config.cmd,
        root_dir = root or vim.fn.getcwd(),
      }, { bufnr = args.buf })
    end,
  })
end

return M
