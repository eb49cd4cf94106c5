//! SLURM001: an `#SBATCH` line that uses a shell variable or command
//! substitution, which sbatch passes on literally.

use crate::{Check, Reporter, ScriptContext};

crate::declare_rule! {
    name: "sbatch-directive-with-variable",
    severity: Error,
    fix: None,
    summary: "#SBATCH line with a shell variable, which sbatch never expands",
    sources: [
        "sbatch(1): options are read from #SBATCH lines by sbatch before any command of the script runs",
        "corpus: axolotl examples/slurm/axolotl.slurm (`#SBATCH --nodes=$NUM_NODES`)",
    ],
}

pub const CHECK: Check = Check::slurm(check);

/// `line` without template placeholders: `{$name}` (the brace form a
/// template engine fills in, never shell syntax: the shell would keep the
/// braces) and `{{ ... }}` (Jinja). A script whose directives hold them is
/// a template, rendered before anything reaches sbatch.
fn without_placeholders(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix("{{")
            && let Some(end) = inner.find("}}")
        {
            rest = &inner[end + 2..];
            continue;
        }
        if let Some(inner) = rest.strip_prefix("{$") {
            let name_len = inner
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            if name_len > 0 && inner[name_len..].starts_with('}') {
                rest = &inner[name_len + 1..];
                continue;
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn check(cx: &ScriptContext, out: &mut Reporter) {
    for directive in cx.script.batches.iter().flat_map(|b| &b.directives) {
        let raw = &cx.text[directive.range.as_range()];
        let unrendered = without_placeholders(raw);
        let written = unrendered.as_str();
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
            raw.replace("\\$", "$").replace("\\`", "`")
        } else {
            raw.to_string()
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

#[cfg(test)]
mod tests {
    use super::without_placeholders;

    /// aws/sagemaker-hyperpod-recipes
    /// tests/slurm_workflow/slurm_baseline_artifacts: golden files whose
    /// `{$results_dir}` the test fills in.
    #[test]
    fn template_placeholders_are_not_shell_variables() {
        assert_eq!(
            without_placeholders("#SBATCH --output={$results_dir}/log_%j.out"),
            "#SBATCH --output=/log_%j.out"
        );
        assert_eq!(without_placeholders("#SBATCH -J {{ name }}"), "#SBATCH -J ");
        assert_eq!(
            without_placeholders("#SBATCH -o ${DIR}/x"),
            "#SBATCH -o ${DIR}/x"
        );
        assert_eq!(
            without_placeholders("#SBATCH -o {$}/x {$"),
            "#SBATCH -o {$}/x {$"
        );
    }
}
