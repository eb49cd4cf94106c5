//! NCCL variables a script sets for the processes it starts: `export
//! NAME=value`, a plain `NAME=value` line, a `NAME=value cmd` prefix and
//! `env NAME=value cmd`.

use crate::docker_run::DockerRun;
use crate::syntax::shell::{Command, Word};
use crate::text::TextRange;
use crate::workload::EnvView;

/// How a script sets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetBy {
    /// `export NAME=value` (or `declare -x`): every later command sees it.
    Export,
    /// `NAME=value` alone on its line: later commands see it if it is
    /// exported elsewhere, or in the script's own shell.
    Assignment,
    /// `NAME=value cmd` or `env NAME=value cmd`: that command sees it.
    Prefix,
}

/// One `NCCL_*` setting in a script.
#[derive(Debug, Clone)]
pub struct ScriptEnv {
    pub name: String,
    /// `None` when it holds an expansion.
    pub value: Option<String>,
    /// The `NAME=value` word.
    pub range: TextRange,
    pub set_by: SetBy,
}

impl ScriptEnv {
    pub fn view(&self) -> EnvView<'_> {
        EnvView {
            name: &self.name,
            value: self.value.as_deref(),
            range: self.range,
        }
    }
}

fn setting(word: &Word, set_by: SetBy) -> Option<ScriptEnv> {
    let name = word.assigned_name()?;
    if !name.starts_with("NCCL_") {
        return None;
    }
    let value = word.text.split_once('=').map(|(_, v)| v.to_string());
    Some(ScriptEnv {
        name: name.to_string(),
        value: value.filter(|_| !word.dynamic),
        range: word.range,
        set_by,
    })
}

/// The `NCCL_*` settings of one simple command. A `docker run`'s prefix
/// sets the variable for the docker client, not the container: it is not
/// one.
pub(crate) fn command_settings(command: &Command) -> Vec<ScriptEnv> {
    let words = &command.words;
    let mut out = Vec::new();
    let assignments = words
        .iter()
        .take_while(|w| w.assigned_name().is_some())
        .count();
    let rest = &words[assignments..];
    match rest.first().map(|w| w.text.as_str()) {
        Some("export") => {
            out.extend(rest[1..].iter().filter_map(|w| setting(w, SetBy::Export)));
        }
        Some("declare" | "typeset") if rest.get(1).is_some_and(|w| w.text.starts_with("-x")) => {
            out.extend(rest[2..].iter().filter_map(|w| setting(w, SetBy::Export)));
        }
        None => {
            out.extend(
                words[..assignments]
                    .iter()
                    .filter_map(|w| setting(w, SetBy::Assignment)),
            );
            return out;
        }
        Some("env") => {
            // `env -i`, `env -u NAME` (an option with a value), then assignments.
            let mut i = 1;
            while let Some(w) = rest.get(i).filter(|w| w.text.starts_with('-')) {
                let takes_value = matches!(w.text.as_str(), "-u" | "--unset" | "-C" | "--chdir");
                i += if takes_value { 2 } else { 1 };
            }
            let env_assignments = rest
                .iter()
                .skip(i)
                .take_while(|w| w.assigned_name().is_some());
            out.extend(env_assignments.filter_map(|w| setting(w, SetBy::Prefix)));
        }
        Some(_) => {}
    }
    if DockerRun::find(command).is_none() {
        out.extend(
            words[..assignments]
                .iter()
                .filter_map(|w| setting(w, SetBy::Prefix)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::shell::{Snippet, commands};

    fn settings(text: &str) -> Vec<(String, Option<String>, SetBy)> {
        commands(&Snippet::verbatim(text, 0))
            .iter()
            .flat_map(command_settings)
            .map(|s| (s.name, s.value, s.set_by))
            .collect()
    }

    #[test]
    fn every_way_a_script_sets_a_variable() {
        let text = "export NCCL_P2P_DISABLE=1 OTHER=2\nNCCL_SHM_DISABLE=1\nNCCL_IB_DISABLE=1 torchrun t.py\nenv -u X NCCL_ALGO=Ring python t.py\nNCCL_DEBUG=INFO docker run --gpus all img\nexport NCCL_PROTO=$PROTO\necho NCCL_NET_GDR_LEVEL=2\n";
        let one = |n: &str, v: Option<&str>, s| (n.to_string(), v.map(str::to_string), s);
        assert_eq!(
            settings(text),
            vec![
                one("NCCL_P2P_DISABLE", Some("1"), SetBy::Export),
                one("NCCL_SHM_DISABLE", Some("1"), SetBy::Assignment),
                one("NCCL_IB_DISABLE", Some("1"), SetBy::Prefix),
                one("NCCL_ALGO", Some("Ring"), SetBy::Prefix),
                one("NCCL_PROTO", None, SetBy::Export),
            ]
        );
    }
}
