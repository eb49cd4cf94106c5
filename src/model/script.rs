//! Files that run commands: shell scripts (SLURM batch scripts among them),
//! Makefiles, Markdown code blocks and GitHub Actions workflows. What rules
//! read from them: the `docker run` lines, the `#SBATCH` directives and the
//! distributed launches.

use crate::model::docker_run::DockerRun;
use crate::model::script_env::{ScriptEnv, command_settings};
use crate::model::slurm::{BatchScript, TorchLaunch};
use crate::syntax::embedded::{makefile_recipes, markdown_code_blocks, workflow_runs};
use crate::syntax::shell::{Command, Snippet, commands};
use crate::syntax::yaml::Yaml;

/// Where the shell text of a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptKind {
    /// The whole file (`*.sh`, `*.sbatch`, a `#!` script).
    Shell,
    /// Recipe lines.
    Makefile,
    /// Fenced code blocks.
    Markdown,
    /// `run:` steps (a YAML file).
    Workflow,
}

/// A `docker run` and the snippet and command it is in.
#[derive(Debug, Clone)]
pub struct RunSite {
    pub snippet: usize,
    /// Counted over the whole file: the n-th simple command.
    pub command: usize,
    pub run: DockerRun,
}

#[derive(Debug, Clone, Default)]
pub struct Script {
    pub snippets: Vec<Snippet>,
    /// Every simple command, with the snippet it is in.
    pub commands: Vec<(usize, Command)>,
    pub runs: Vec<RunSite>,
    /// Shell scripts with `#SBATCH` directives.
    pub batch: Option<BatchScript>,
    pub launches: Vec<TorchLaunch>,
    /// Variables the script assigns (`export MASTER_ADDR=…`, `A=1`).
    pub assigned: Vec<String>,
    /// The `NCCL_*` variables it sets for what it runs (not in Markdown,
    /// whose code blocks are examples).
    pub nccl_env: Vec<ScriptEnv>,
}

/// Words that make a text worth tokenizing; most scripts have none.
const MARKERS: &[&str] = &[
    "docker",
    "podman",
    "#SBATCH",
    "torchrun",
    "torch.distributed.run",
    "NCCL_",
];

impl Script {
    /// The script in a text of `kind` (`yaml` for a workflow).
    pub fn read(text: &str, kind: ScriptKind, yaml: Option<&Yaml>) -> Script {
        if !MARKERS.iter().any(|m| text.contains(m)) {
            return Script::default();
        }
        let snippets = match (kind, yaml) {
            (ScriptKind::Shell, _) => vec![Snippet::verbatim(text, 0)],
            (ScriptKind::Makefile, _) => makefile_recipes(text),
            (ScriptKind::Markdown, _) => markdown_code_blocks(text),
            (ScriptKind::Workflow, Some(yaml)) => workflow_runs(yaml, text),
            (ScriptKind::Workflow, None) => Vec::new(),
        };
        let mut script = Script {
            batch: if kind == ScriptKind::Shell {
                BatchScript::parse(text)
            } else {
                None
            },
            ..Script::default()
        };
        for (index, snippet) in snippets.iter().enumerate() {
            for command in commands(snippet) {
                script.commands.push((index, command));
            }
        }
        for (n, (snippet, command)) in script.commands.iter().enumerate() {
            if let Some(run) = DockerRun::find(command) {
                script.runs.push(RunSite {
                    snippet: *snippet,
                    command: n,
                    run,
                });
            }
            if let Some(launch) = TorchLaunch::find(command) {
                script.launches.push(launch);
            }
            if kind != ScriptKind::Markdown {
                script.nccl_env.extend(command_settings(command));
            }
            for word in &command.words {
                if let Some(name) = word.assigned_name() {
                    script.assigned.push(name.to_string());
                }
            }
        }
        script.snippets = snippets;
        script
    }

    /// Whether the script sets `name`.
    pub fn assigns(&self, name: &str) -> bool {
        self.assigned.iter().any(|a| a == name)
    }

    /// What verification compares: each simple command's words, by its
    /// position (`command.3`). A fix to a `docker run` may change only its
    /// own command; everything else must read the same.
    pub fn leaves(&self) -> Vec<(Vec<String>, String)> {
        self.commands
            .iter()
            .enumerate()
            .map(|(n, (_, command))| {
                let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
                (
                    vec!["command".to_string(), n.to_string()],
                    words.join("\u{1f}"),
                )
            })
            .collect()
    }
}
