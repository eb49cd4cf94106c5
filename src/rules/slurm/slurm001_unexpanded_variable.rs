//! SLURM001: an `#SBATCH` line that uses a shell variable or command
//! substitution, which sbatch passes on literally.

use crate::rules::{Check, Reporter, ScriptContext};

pub const CHECK: Check = Check::slurm(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    for directive in cx.script.batches.iter().flat_map(|b| &b.directives) {
        let written = &cx.text[directive.range.as_range()];
        // In an unquoted here-document the shell has expanded the line
        // before sbatch reads it: only an escaped `\$` or `` \` `` is left.
        let literal = if directive.expanded {
            written.contains("\\$") || written.contains("\\`")
        } else {
            written.contains('$') || written.contains('`')
        };
        if !literal {
            continue;
        }
        // What sbatch reads: the shell removed the escapes.
        let written = if directive.expanded {
            written.replace("\\$", "$").replace("\\`", "`")
        } else {
            written.to_string()
        };
        out.report(
            directive.range,
            format!("sbatch does not expand shell variables in #SBATCH lines: `{written}` is read literally"),
        )
        .label("sbatch reads this before any shell runs")
        .note("#SBATCH lines are comments to the shell; sbatch parses them itself and never expands `$VAR`, `${VAR}` or `$(...)`, so the job is rejected or gets a literal value")
        .help(format!(
            "write the value itself, or pass the option when submitting: `sbatch {} script`",
            written.replace('\'', "")
        ));
    }
}
