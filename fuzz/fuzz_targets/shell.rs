//! Scripts: the shell lexer on any text, the commands a script, Makefile
//! or Markdown file runs, and their lint (`docker run` lines, SLURM
//! batch scripts).
#![no_main]

#[path = "common.rs"]
mod common;

use gpulint::model::script::{Script, ScriptKind};
use gpulint::syntax::shell::{self, Snippet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for command in shell::commands(&Snippet::verbatim(text, 0)) {
        let _ = command.range();
        for word in &command.words {
            let _ = word.assigned_name();
        }
    }
    for kind in [
        ScriptKind::Shell,
        ScriptKind::Makefile,
        ScriptKind::Markdown,
    ] {
        let _ = Script::read(text, kind, None).leaves();
    }
    let config = common::config_for(text);
    for name in ["run.sh", "job.sbatch", "Makefile", "README.md"] {
        let path = common::path(name);
        let _ = gpulint::engine::lint_text(text, &path, config);
        let _ = gpulint::engine::inspect_text(text, &path, config);
    }
});
