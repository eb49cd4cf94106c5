//! SLURM002: an `#SBATCH` line after the first command, which sbatch ignores.

use crate::{Check, Reporter, ScriptContext};

crate::declare_rule! {
    name: "sbatch-directive-after-command",
    severity: Error,
    fix: None,
    summary: "#SBATCH line after the first command, which sbatch ignores",
    sources: [
        "sbatch(1): \"The batch script may contain options preceded with #SBATCH before any executable commands in the script.\"",
    ],
}

pub const CHECK: Check = Check::slurm(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    // One finding per line, not per option on it.
    let mut reported = None;
    let directives = cx.script.batches.iter().flat_map(|b| &b.directives);
    for directive in directives.filter(|d| d.ignored) {
        if reported == Some(directive.line) {
            continue;
        }
        reported = Some(directive.line);
        out.report(
            directive.line,
            "sbatch ignores this #SBATCH line: it comes after the script's first command",
        )
        .label("sbatch stopped reading directives at the first command above")
        .note("sbatch reads #SBATCH directives only until the first line that is neither blank nor a comment; later ones are silently dropped, so the job runs without these resources")
        .help("move it up, above the first command");
    }
}
