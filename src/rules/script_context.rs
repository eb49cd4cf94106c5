//! What a rule sees of a file that runs commands (a shell or batch script, a
//! Makefile, Markdown, a workflow) and how it builds fixes: text edits
//! inside one `docker run`, whose intended change is that command (or, in a
//! workflow, the `run:` step holding it).

use super::RuleSettings;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::model::container::{ContainerRuntime, Containers};
use crate::model::docker_run::RunOption;
use crate::model::script::{RunSite, Script};
use crate::model::script_env::{ScriptEnv, SetBy};
use crate::model::workload::EnvView;
use crate::text::TextRange;

pub struct ScriptContext<'a> {
    pub script: &'a Script,
    pub text: &'a str,
    pub settings: &'a RuleSettings,
    /// What each `docker run` gives its container: the model `gpulint
    /// inspect` prints, which the rules judge.
    pub containers: Containers,
}

impl<'a> ScriptContext<'a> {
    pub fn new(script: &'a Script, text: &'a str, settings: &'a RuleSettings) -> ScriptContext<'a> {
        ScriptContext {
            script,
            text,
            settings,
            containers: Containers::new(crate::model::runtime::command_runtimes(script)),
        }
    }

    /// What the `docker run` of `site` gives its container.
    pub fn container(&self, site: &RunSite) -> &ContainerRuntime {
        self.containers
            .named_at(site.run.program_range)
            .expect("every `docker run` is a container of the model")
    }

    /// A fix that sets the value of `option`, on the `docker run` of `site`,
    /// to `new_value`. A value written bare or inside one pair of quotes
    /// keeps that spelling; `None` for one written any other way (escapes,
    /// variables, several quoted parts), which a fix leaves to the author.
    pub fn set_option_value(
        &self,
        site: &RunSite,
        option: &RunOption,
        new_value: &str,
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Option<Fix> {
        let (value, range) = (option.value.as_deref()?, option.value_range?);
        if option.dynamic {
            return None;
        }
        let written = self.text.get(range.as_range())?;
        let plain_word = !new_value.is_empty()
            && new_value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/:=,._%+-@".contains(&b));
        let content = if written == value {
            plain_word.then(|| new_value.to_string())
        } else {
            ['\'', '"'].into_iter().find_map(|quote| {
                let inner = written.strip_prefix(quote)?.strip_suffix(quote)?;
                (inner == value && plain_word).then(|| format!("{quote}{new_value}{quote}"))
            })
        }?;
        Some(self.run_fix(site, title, applicability, vec![Edit { range, content }]))
    }

    /// A fix made of `edits` to the command of `site`.
    pub fn run_fix(
        &self,
        site: &RunSite,
        title: impl Into<String>,
        applicability: Applicability,
        edits: Vec<Edit>,
    ) -> Fix {
        let paths = match &self.script.snippets[site.snippet].yaml_path {
            Some(path) => vec![ModelPath(path.clone())],
            None => {
                // The command, and those whose words hold it in a command
                // substitution (`CID=$(docker run …)`): they change with it.
                let own = self.script.commands[site.command].1.range();
                self.script
                    .commands
                    .iter()
                    .enumerate()
                    .filter(|(_, (snippet, command))| {
                        let range = command.range();
                        *snippet == site.snippet && range.start <= own.start && own.end <= range.end
                    })
                    .map(|(n, _)| ModelPath::new(["command".to_string(), n.to_string()]))
                    .collect()
            }
        };
        Fix::new(title, applicability, edits, paths)
    }

    /// An option inserted right after `run` (`docker run --shm-size=8gb …`).
    pub fn insert_option(site: &RunSite, option: &str) -> Edit {
        Edit::insert(site.run.subcommand.range.end, format!(" {option}"))
    }

    /// A fix that deletes one option and the blanks after it.
    pub fn remove_option_fix(
        &self,
        site: &RunSite,
        option: &RunOption,
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Fix {
        let (start, end) = (option.range.start as usize, option.range.end as usize);
        let after = &self.text[end..];
        let blanks = after.len() - after.trim_start_matches([' ', '\t']).len();
        let line_start = self.text[..start].rfind('\n').map_or(0, |n| n + 1);
        let alone = self.text[line_start..start].trim().is_empty();
        let continued = ["\\\n", "\\\r\n"]
            .iter()
            .find(|c| after[blanks..].starts_with(**c));
        // An option on a continued line of its own goes with its line.
        let range = match continued {
            Some(c) if alone => TextRange::new(line_start, end + blanks + c.len()),
            _ => TextRange::new(start, end + blanks),
        };
        self.run_fix(site, title, applicability, vec![Edit::delete(range)])
    }

    /// Each `-e NAME=value` of every `docker run`, as rules read environment
    /// variables, with its run and option.
    pub fn run_env(&self) -> impl Iterator<Item = (&'a RunSite, &'a RunOption, EnvView<'a>)> + 'a {
        self.script.runs.iter().flat_map(|site| {
            site.run.env().map(move |(name, value, option)| {
                let view = EnvView {
                    name,
                    value,
                    range: option.range,
                };
                (site, option, view)
            })
        })
    }

    /// The `NCCL_*` settings of the script that reach a process it starts:
    /// all of them when it runs no container, else only those a `docker
    /// run` passes through (`-e NAME` without a value) and command prefixes.
    pub fn script_env(&self) -> impl Iterator<Item = &'a ScriptEnv> + 'a {
        let script = self.script;
        script.nccl_env.iter().filter(move |setting| {
            setting.set_by == SetBy::Prefix
                || script.runs.is_empty()
                || script.runs.iter().any(|site| {
                    site.run
                        .env()
                        .any(|(name, value, _)| name == setting.name && value.is_none())
                })
        })
    }

    /// "the container started by `docker run`", for messages.
    pub fn describe_run(site: &RunSite) -> String {
        format!("the container started by `{}`", site.run.invocation())
    }
}
