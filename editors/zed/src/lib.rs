//! Starts `gpulint server` for Zed: the binary `lsp.gpulint.binary.path`
//! names in Zed's settings, else `gpulint` on the worktree's PATH.

use zed_extension_api::{self as zed, LanguageServerId, Result, settings::LspSettings};

struct Gpulint;

impl zed::Extension for Gpulint {
    fn new() -> Self {
        Gpulint
    }

    fn language_server_command(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(language_server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.binary);
        let configured = binary.as_ref().and_then(|b| b.path.clone());
        let command = configured
            .or_else(|| worktree.which("gpulint"))
            .ok_or("gpulint is not on the PATH: install it, or set lsp.gpulint.binary.path")?;
        let args = binary
            .and_then(|b| b.arguments)
            .unwrap_or_else(|| vec!["server".to_string()]);
        Ok(zed::Command {
            command,
            args,
            env: worktree.shell_env(),
        })
    }
}

zed::register_extension!(Gpulint);
