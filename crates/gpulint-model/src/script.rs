//! Files that run commands: shell scripts (SLURM batch scripts among them),
//! Makefiles, Markdown code blocks and GitHub Actions workflows. What rules
//! read from them: the `docker run` lines, the `#SBATCH` directives and the
//! distributed launches.

use crate::apptainer::ApptainerRun;
use crate::container::Platform;
use crate::devcontainer::DevContainer;
use crate::docker_run::{DockerRun, takes_next_word};
use crate::quadlet::Quadlet;
use crate::script_env::{ScriptEnv, command_settings};
use crate::script_vars::ScriptVariables;
use crate::slurm::{BatchScript, NodeVariables, Scope, TorchLaunch, branch_paths};
use crate::syntax::argv::dotnet_words;
use crate::syntax::embedded::{
    WorkflowEnv, makefile_recipes, markdown_code_blocks, workflow_containers, workflow_runs,
};
use crate::syntax::shell::{Command, Snippet, Word, commands};
use crate::syntax::shell_script::{Feeds, ShellScript};
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
    /// A `devcontainer.json` (JSON with comments): the `docker run` the Dev
    /// Container CLI makes of it.
    DevContainer,
    /// A Podman Quadlet `.container` unit: the `podman run` its generator
    /// writes.
    Quadlet,
}

/// A `docker run` and the snippet and command it is in.
#[derive(Debug, Clone)]
pub struct RunSite {
    pub snippet: usize,
    /// Counted over the whole file: the n-th simple command.
    pub command: usize,
    pub run: DockerRun,
    /// Where a new option goes when it is not right after `run`.
    pub options_at: OptionsAt,
    /// Where the configuration names the image its tool passes after the
    /// options (a workflow container's `image:`, a dev container's `image`
    /// or `build`, a Quadlet `Image=`). `None` on a command line, where
    /// the first word that is no option is the image as written.
    pub image_written_at: Option<crate::text::TextRange>,
}

impl RunSite {
    /// The word among the options that the CLI takes as the image, where
    /// the configuration names the image elsewhere (`options:` ending
    /// `--gpus all ulimit`). `None` when the options are only known at run
    /// time, which is not guessed at, or when an option before the word is
    /// one the reader does not know (it may take no value).
    pub fn stray_image(&self) -> Option<&Word> {
        if self.run.uncertain.is_some() {
            return None;
        }
        let written = self.image_written_at?;
        self.run
            .image
            .as_ref()
            .filter(|image| image.range != written)
            // An option the reader does not know may have taken no value.
            .filter(|image| self.run.knows_options_before(image.range.start))
    }
}

/// Where a fix writes a new option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionsAt {
    /// After the `run` word of a command line, or first in a dev
    /// container's `runArgs`.
    AfterRun,
    /// Before the first word of a workflow container's `options:`.
    Before(usize),
    /// A new `PodmanArgs=` line at this offset (the end of a Quadlet
    /// unit's `[Container]` header line).
    UnitLine(usize),
    /// Nowhere a fix can write plainly (no `options:`, or one written as
    /// an escaped or empty string).
    Nowhere,
}

#[derive(Debug, Clone, Default)]
pub struct Script {
    pub snippets: Vec<Snippet>,
    /// Every simple command, with the snippet it is in.
    pub commands: Vec<(usize, Command)>,
    pub runs: Vec<RunSite>,
    /// Apptainer/Singularity launches (`apptainer exec --nv img.sif ...`).
    pub apptainer_runs: Vec<ApptainerRun>,
    /// The batch scripts of a shell script: its own when it has `#SBATCH`
    /// directives, then each here-document it gives sbatch or that holds
    /// directives, in the order of the file (a body's after the file's).
    pub batches: Vec<BatchScript>,
    pub launches: Vec<TorchLaunch>,
    /// Variables the script assigns (`export MASTER_ADDR=…`, `A=1`).
    pub assigned: Vec<String>,
    /// The `NCCL_*` variables it sets for what it runs (not in Markdown,
    /// whose code blocks are examples).
    pub nccl_env: Vec<ScriptEnv>,
    /// A dev container's configuration, which its fixes edit as JSON.
    pub devcontainer: Option<Box<DevContainer>>,
    /// A Quadlet unit, whose fixes add and remove lines.
    pub quadlet: Option<Box<Quadlet>>,
    /// The `env:` entries of a workflow's job and service containers,
    /// whose `-e` a fix removes as YAML.
    pub workflow_env: Vec<WorkflowEnv>,
}

/// Words that make a text worth tokenizing; most scripts have none.
const MARKERS: &[&str] = &[
    "docker",
    "podman",
    "apptainer",
    "singularity",
    "#SBATCH",
    "torchrun",
    "torch.distributed.run",
    "NCCL_",
];

impl Script {
    /// The script in a text of `kind` (`yaml` for a workflow).
    pub fn read(text: &str, kind: ScriptKind, yaml: Option<&Yaml>) -> Script {
        match kind {
            ScriptKind::DevContainer => return Script::devcontainer(text).unwrap_or_default(),
            ScriptKind::Quadlet => return Script::quadlet(text),
            _ => {}
        }
        // A workflow's job containers need no marker: `container:` is one.
        let containers = kind == ScriptKind::Workflow
            && (text.contains("container") || text.contains("services"));
        if !containers && !MARKERS.iter().any(|m| text.contains(m)) {
            return Script::default();
        }
        let snippets = match (kind, yaml) {
            (ScriptKind::Shell, _) => vec![Snippet::verbatim(text, 0)],
            (ScriptKind::Makefile, _) => makefile_recipes(text),
            (ScriptKind::Markdown, _) => markdown_code_blocks(text),
            (ScriptKind::Workflow, Some(yaml)) => workflow_runs(yaml, text),
            (ScriptKind::Workflow, None) | (ScriptKind::DevContainer | ScriptKind::Quadlet, _) => {
                Vec::new()
            }
        };
        let mut script = Script::default();
        let mut snippets = snippets;
        // Where each command is in the shell reader's scripts: (script,
        // its index there), for the branches it sits in.
        let shell = (kind == ScriptKind::Shell).then(|| ShellScript::read(text, 0));
        let mut readers: Vec<&ShellScript> = Vec::new();
        let mut origins: Vec<Option<(usize, usize)>> = Vec::new();
        match &shell {
            Some(shell) => {
                snippets.truncate(1);
                let outer = Scope {
                    range: crate::text::TextRange::new(0, text.len()),
                    ..Scope::default()
                };
                let mut flat = Flattened {
                    text,
                    snippets: &mut snippets,
                    commands: &mut script.commands,
                    batches: &mut script.batches,
                    readers: &mut readers,
                    origins: &mut origins,
                };
                flat.add(shell, 0, outer, false);
            }
            None => {
                for (index, snippet) in snippets.iter().enumerate() {
                    for command in commands(snippet) {
                        script.commands.push((index, command));
                        origins.push(None);
                    }
                }
            }
        }
        let node_variables = NodeVariables::read(script.commands.iter().map(|(_, c)| c));
        // A Makefile recipe line runs in a shell of its own, where `$(X)`
        // is make's: its shell variables are not followed.
        let variables = match kind {
            ScriptKind::Makefile => ScriptVariables::default(),
            _ => ScriptVariables::read(&script.commands, text),
        };
        for (n, (snippet, command)) in script.commands.iter().enumerate() {
            let resolve = |word: &Word| variables.expand(word, *snippet, n);
            if let Some(run) = DockerRun::find_in(command, &resolve) {
                script.runs.push(RunSite {
                    snippet: *snippet,
                    command: n,
                    run,
                    options_at: OptionsAt::AfterRun,
                    image_written_at: None,
                });
            }
            if let Some(apptainer) = ApptainerRun::find(command, &resolve) {
                script.apptainer_runs.push(apptainer);
            }
            if let Some(mut launch) = TorchLaunch::find(command) {
                if let Some((reader, local)) = origins[n] {
                    launch.branches = branch_paths(readers[reader], local, &node_variables);
                }
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
        if let (ScriptKind::Workflow, Some(yaml)) = (kind, yaml) {
            script.read_workflow_containers(yaml, text);
        }
        script.shrink_to_fit();
        script
    }

    /// Gives back what the lists grew by and will not use: a script is
    /// read once and then kept while every rule runs on it, and a list
    /// that doubled its way to 20,000 run lines holds room for 32,768.
    fn shrink_to_fit(&mut self) {
        self.commands.shrink_to_fit();
        self.runs.shrink_to_fit();
        self.apptainer_runs.shrink_to_fit();
        self.batches.shrink_to_fit();
        self.launches.shrink_to_fit();
        self.assigned.shrink_to_fit();
        self.nccl_env.shrink_to_fit();
        self.workflow_env.shrink_to_fit();
    }

    /// The job and service containers of a workflow: each a `docker
    /// create` with its `options:` words and its image, a snippet and a
    /// command of its own.
    fn read_workflow_containers(&mut self, yaml: &Yaml, text: &str) {
        for container in workflow_containers(yaml, text) {
            let snippet = self.snippets.len();
            // The runner joins `options:` into the argument string of
            // `docker create`, which .NET splits (no shell: `'` is a
            // character, a newline is not a separator). A word that is an
            // expression where an option is (`${{ matrix.opts }}`) holds
            // options only known when the workflow runs.
            let split = container
                .options
                .as_ref()
                .map(dotnet_words)
                .unwrap_or_default();
            let (mut option_words, mut expressions) = (Vec::new(), Vec::new());
            let mut value_next = false;
            for word in split {
                if !value_next && word.dynamic && word.text.starts_with("${{") {
                    expressions.push(word);
                    continue;
                }
                value_next = !value_next && takes_next_word(&word.text);
                option_words.push(word);
            }
            // Without `options:` the container gets no GPU to fix for.
            let options_at = match option_words.first() {
                Some(first) => OptionsAt::Before(first.range.start as usize),
                None => OptionsAt::Nowhere,
            };
            let at = container.key_range;
            let word = |text: &str, range| Word {
                text: text.to_string(),
                range,
                dynamic: false,
            };
            let mut words = vec![word("docker", at), word("create", at)];
            // An `options:` not mapped back (escapes): what it sets is unknown.
            if container.has_options && container.options.is_none() {
                words.push(Word {
                    dynamic: true,
                    ..word("-?", at)
                });
            }
            words.extend(option_words);
            // `env:` after `options:`, as the runner passes it: an empty
            // value as `-e NAME`, which takes the runner's own.
            for env in &container.env {
                let setting = match &env.value {
                    Some(value) => format!("{}={value}", env.name),
                    None => env.name.clone(),
                };
                let dynamic = setting.contains("${{");
                words.push(word("-e", env.range));
                words.push(Word {
                    dynamic,
                    ..word(&setting, env.range)
                });
            }
            self.workflow_env.extend(container.env);
            if let Some((image, range)) = &container.image {
                words.push(Word {
                    dynamic: image.contains("${{"),
                    ..word(image, *range)
                });
            }
            let command = Command { words };
            let unmapped = container.has_options && container.options.is_none();
            let mut host = container
                .options
                .unwrap_or_else(|| Snippet::verbatim("", at.start as usize));
            host.yaml_path = Some(container.yaml_path);
            host.yaml_document = container.yaml_document;
            self.snippets.push(host);
            let step_env = container.step_env;
            let image_written_at = container.image.as_ref().map(|(_, range)| *range);
            if let Some(mut run) = DockerRun::find(&command) {
                run.exec_env = step_env;
                if unmapped {
                    run.uncertain = Some(
                        "`options:` is written in a way gpulint does not map back: what it sets is not read".into(),
                    );
                } else if let Some(expression) = expressions.first() {
                    run.uncertain = Some(format!(
                        "`{}` may hold options, which are only known when the workflow runs",
                        expression.text
                    ));
                }
                self.runs.push(RunSite {
                    snippet,
                    command: self.commands.len(),
                    run,
                    options_at,
                    image_written_at,
                });
            }
            self.commands.push((snippet, command));
        }
    }

    /// A `devcontainer.json`: one command, the `docker run` the Dev
    /// Container CLI makes of it (none for a Compose-backed one).
    pub fn devcontainer(text: &str) -> Result<Script, crate::syntax::jsonc::JsonError> {
        let dev = DevContainer::parse(text)?;
        let mut script = Script::default();
        if let Some(command) = dev.command() {
            if let Some(run) = dev.run(&command) {
                script.runs.push(RunSite {
                    snippet: 0,
                    command: 0,
                    run,
                    options_at: OptionsAt::AfterRun,
                    image_written_at: dev.image_written_at(),
                });
            }
            script.commands.push((0, command));
        }
        script.devcontainer = Some(Box::new(dev));
        Ok(script)
    }

    /// A Quadlet `.container` unit: one command, the `podman run` its
    /// generator writes (none without `Image=`).
    pub fn quadlet(text: &str) -> Script {
        let unit = Quadlet::parse(text);
        let mut script = Script {
            snippets: vec![Snippet::verbatim("", 0)],
            ..Script::default()
        };
        if let Some(command) = unit.command(text) {
            if let Some(run) = DockerRun::find(&command) {
                script.runs.push(RunSite {
                    snippet: 0,
                    command: 0,
                    run,
                    options_at: unit
                        .header_end
                        .map_or(OptionsAt::Nowhere, OptionsAt::UnitLine),
                    image_written_at: unit.image_range(),
                });
            }
            script.commands.push((0, command));
        }
        script.quadlet = Some(Box::new(unit));
        script
    }

    /// The batch script a command or launch at `range` runs in: the
    /// innermost whose text holds it.
    pub fn batch_for(&self, range: crate::text::TextRange) -> Option<&BatchScript> {
        self.batches
            .iter()
            .filter(|b| b.scope.start <= range.start && range.end <= b.scope.end)
            .min_by_key(|b| b.scope.len())
    }

    /// The platform its runs are on: a dev container's, a Quadlet unit's,
    /// else command lines' (a workflow job container's among them).
    pub fn platform(&self) -> Platform {
        if self.devcontainer.is_some() {
            Platform::DevContainer
        } else if self.quadlet.is_some() {
            Platform::Quadlet
        } else {
            Platform::DockerRun
        }
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

/// A shell script's commands, its here-documents' among them, gathered
/// into one list in the order of the file.
struct Flattened<'s, 'r> {
    text: &'s str,
    snippets: &'s mut Vec<Snippet>,
    commands: &'s mut Vec<(usize, Command)>,
    batches: &'s mut Vec<BatchScript>,
    readers: &'s mut Vec<&'r ShellScript>,
    origins: &'s mut Vec<Option<(usize, usize)>>,
}

impl<'r> Flattened<'_, 'r> {
    /// The commands of `shell` (snippet `snippet`, whose batch script is
    /// read in `scope`; the file's own only when it has directives), each
    /// here-document body that is a script read in its place: before the
    /// first command after its body starts.
    fn add(&mut self, shell: &'r ShellScript, snippet: usize, scope: Scope, own_batch: bool) {
        let bodies: Vec<crate::text::TextRange> =
            shell.lexed.heredocs.iter().map(|h| h.body).collect();
        let batch = BatchScript::read(
            self.text,
            Scope {
                excluded: &bodies,
                ..scope
            },
        );
        if own_batch || !batch.directives.is_empty() {
            self.batches.push(batch);
        }
        let reader = self.readers.len();
        self.readers.push(shell);
        let mut nested = shell.nested.iter().peekable();
        for (local, command) in shell.lexed.commands.iter().enumerate() {
            while let Some(body) = nested
                .next_if(|n| shell.lexed.heredocs[n.heredoc].body.start <= command.range().start)
            {
                self.nested(shell, body);
            }
            self.commands.push((snippet, command.clone()));
            self.origins.push(Some((reader, local)));
        }
        for body in nested {
            self.nested(shell, body);
        }
    }

    fn nested(
        &mut self,
        shell: &'r ShellScript,
        nested: &'r crate::syntax::shell_script::NestedScript,
    ) {
        let heredoc = &shell.lexed.heredocs[nested.heredoc];
        let range = heredoc.body;
        let snippet = self.snippets.len();
        let body = self.text.get(range.as_range()).unwrap_or_default();
        self.snippets
            .push(Snippet::verbatim(body, range.start as usize));
        let scope = Scope {
            range,
            excluded: &[],
            expanded: !heredoc.quoted,
            strip_tabs: heredoc.strip_tabs,
            heredoc: Some(heredoc.operator),
        };
        self.add(
            &nested.script,
            snippet,
            scope,
            nested.feeds == Feeds::Sbatch,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::{Gpus, ShmKind, ShmSetting};

    fn runs(text: &str) -> Vec<DockerRun> {
        Script::read(text, ScriptKind::Shell, None)
            .runs
            .into_iter()
            .map(|site| site.run)
            .collect()
    }

    /// The held-out case: options after `$FLAG`, which the script sets to
    /// `""` or `"-it"`, are read.
    #[test]
    fn options_after_a_variable_the_script_sets_are_read() {
        let text = "#!/bin/bash\nif [ -t 0 ]; then\n  FLAG=\"-it\"\nelse\n  FLAG=\"\"\nfi\ndocker run -u root $FLAG --gpus '\"device=0,1\"' --rm nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n";
        let run = &runs(text)[0];
        assert_eq!(run.uncertain, None);
        assert_eq!(run.gpus(), Gpus::Count(2));
        assert_eq!(
            run.image.as_ref().unwrap().text,
            "nvcr.io/nvidia/pytorch:24.01-py3"
        );
        let shm = run.shm();
        assert_eq!(
            (shm.kind, shm.decided_by),
            (ShmKind::Default, ShmSetting::Default)
        );
    }

    #[test]
    fn a_variables_options_are_the_runs() {
        let run = &runs("SHM=\"--shm-size=8g --ipc=private\"\ndocker run $SHM --gpus all img\n")[0];
        let shm = run.shm();
        assert_eq!((shm.kind, shm.bytes), (ShmKind::Sized, Some(8 << 30)));
        let (_, option) = run.option("--shm-size").unwrap();
        assert_eq!(option.via.as_deref(), Some("SHM"));
        // A fix cannot edit it where the run is written.
        assert_eq!(option.value_range, None);
        // `--gpus $GPUS` with one value in the script.
        let run = &runs("GPUS=all\ndocker run --gpus $GPUS img\n")[0];
        assert_eq!(run.gpus(), Gpus::All);
    }

    #[test]
    fn a_variable_that_may_swallow_a_word_stops_the_reading_and_says_so() {
        for (value, says) in [
            ("-e", "takes the next word as its value"),
            ("--env", "takes the next word as its value"),
            ("-it myimage", "holds the image"),
        ] {
            let text = format!("FLAG=\"{value}\"\ndocker run $FLAG --gpus all img\n");
            let run = &runs(&text)[0];
            let why = run.uncertain.as_deref().unwrap_or("");
            assert!(
                why.contains(says) && why.contains("`$FLAG`"),
                "{value}: {why}"
            );
            let shm = run.shm();
            assert_eq!(
                (shm.kind, shm.from.as_str()),
                (ShmKind::Unknown, why),
                "{value}"
            );
        }
        // Values that give different options: what they decide is unknown,
        // the rest is read.
        let run = &runs("X=\nif a; then X=--shm-size=8g; fi\ndocker run $X --gpus 2 img\n")[0];
        assert_eq!(run.uncertain, None);
        assert_eq!(run.gpus(), Gpus::Count(2));
        let shm = run.shm();
        assert_eq!(shm.kind, ShmKind::Unknown);
        assert!(
            shm.from.contains("`$X` may be `` or `--shm-size=8g`"),
            "{}",
            shm.from
        );
    }

    /// The shape of NVIDIA-NeMo/RL `tests/run_functional_in_docker.sh` in
    /// the version that adds `RDMA_FLAGS`: `$INTERACTIVE_FLAG` is `""` or
    /// `"-it"`, `"${RDMA_FLAGS[@]}"` empty or the RDMA devices; the GPUs
    /// and /dev/shm after them are read.
    #[test]
    fn an_array_of_options_that_only_some_branches_fill() {
        let text = "INTERACTIVE_FLAG=\"\"\nif [[ \"${CI:-false}\" != \"true\" ]]; then\n    INTERACTIVE_FLAG=\"-it\"\nfi\nRDMA_FLAGS=()\nif compgen -G \"/dev/infiniband/uverbs*\" >/dev/null; then\n  RDMA_FLAGS=(--device=/dev/infiniband --cap-add=IPC_LOCK)\nfi\ndocker run -u root $INTERACTIVE_FLAG --ulimit memlock=-1 --ulimit stack=67108864 \"${RDMA_FLAGS[@]}\" --rm --gpus '\"device=0,1\"' \\\n  -w $SCRIPT_DIR \\\n  \"$CONTAINER\" -- \\\n  bash -x -c \"uv run bash -x $TEST_SCRIPT\"\n";
        let run = &runs(text)[0];
        assert_eq!(run.uncertain, None);
        assert_eq!(run.gpus(), Gpus::Count(2));
        let shm = run.shm();
        assert_eq!(
            (shm.kind, shm.decided_by),
            (ShmKind::Default, ShmSetting::Default)
        );
        assert!(run.varies(&["--device"]).is_some());
        assert!(run.varies(&["--gpus"]).is_none());
    }

    #[test]
    fn a_variable_the_script_does_not_set_is_read_as_before() {
        // From the caller: the image, as `docker run $IMAGE` usually is.
        let run = &runs("docker run --gpus all $IMAGE python t.py\n")[0];
        assert_eq!(run.uncertain, None);
        assert_eq!(run.gpus(), Gpus::All);
        // Assigned only after the run, or in another Markdown block: what
        // it holds is unknown here, the options after it are read (unset,
        // the shell drops the word).
        let run = &runs("docker run $FLAG --gpus all img\nFLAG=-it\n")[0];
        assert_eq!(run.image.as_ref().unwrap().text, "img");
        assert_eq!(run.gpus(), Gpus::All);
        assert!(
            run.uncertain
                .as_deref()
                .unwrap()
                .contains("`$FLAG` may hold options")
        );
        let md = "```sh\nFLAG=-it\n```\n\n```sh\ndocker run $FLAG --gpus all img\n```\n";
        let script = Script::read(md, ScriptKind::Markdown, None);
        assert_eq!(script.runs[0].run.gpus(), Gpus::All);
        assert!(script.runs[0].run.uncertain.is_some());
    }

    /// NVIDIA/Megatron-LM `examples/megatron_fsdp/sbatch_checkpoint_convert.sh`:
    /// the directives are those of the job `sbatch <<EOF` submits.
    #[test]
    fn a_heredoc_given_to_sbatch_is_a_batch_script_of_its_own() {
        let text = "#!/bin/bash\nset +e\nsbatch <<EOF\n#!/bin/bash\n\n#SBATCH --nodes=$NODES\n#SBATCH --gres=gpu:8\nsrun torchrun --nnodes=2 train.py\n#SBATCH --late\nEOF\ncat <<'X' > job.sbatch\n#SBATCH -N \\$N\nX\n\t#SBATCH --not-a-directive\n";
        let script = Script::read(text, ScriptKind::Shell, None);
        assert_eq!(script.batches.len(), 2);
        let job = &script.batches[0];
        let names: Vec<(&str, bool, bool)> = job
            .directives
            .iter()
            .map(|d| (d.name.as_str(), d.ignored, d.expanded))
            .collect();
        assert_eq!(
            names,
            [
                ("--nodes", false, true),
                ("--gres", false, true),
                ("--late", true, true)
            ]
        );
        assert_eq!(&text[job.directives[0].range.as_range()], "--nodes=$NODES");
        assert_eq!(&text[job.heredoc.unwrap().as_range()], "<<EOF");
        let written = &script.batches[1];
        assert!(!written.directives[0].expanded);
        assert_eq!(&text[written.directives[0].range.as_range()], "-N \\$N");
        // The body's launch is read, and belongs to the job.
        let launch = &script.launches[0];
        assert!(std::ptr::eq(script.batch_for(launch.range).unwrap(), job));
    }

    /// NVIDIA/physicsnemo `examples/cfd/external_aerodynamics/globe/airfrans/run.sh`.
    #[test]
    fn a_launch_in_the_single_node_branch_runs_on_one_node() {
        use crate::slurm::runs_on_several_nodes;
        let text = "#!/bin/bash\n#SBATCH -N 4\nN=${SLURM_NNODES:-1}\nif [ \"$N\" -gt 1 ]; then\n  srun torchrun --nnodes $N --rdzv_endpoint $H:29500 a.py &\nelif [ -n \"$X\" ]; then\n  torchrun b.py\nelse\n  torchrun c.py &\nfi\nif [ -f x ]; then torchrun --rdzv-endpoint=h d.py; else torchrun e.py; fi\ncase $SLURM_JOB_NUM_NODES in\n  1) torchrun f.py ;;\n  *) torchrun g.py ;;\nesac\n";
        let script = Script::read(text, ScriptKind::Shell, None);
        let several: Vec<bool> = script
            .launches
            .iter()
            .map(|l| runs_on_several_nodes(&l.branches))
            .collect();
        assert_eq!(several, [true, false, false, true, true, false, true]);
        // `else torchrun e.py`: nothing decides the branch, and its
        // sibling has the endpoint.
        let e = &script.launches[4];
        assert!(e.branches[0].known.is_empty());
        assert!(script.launches[3].endpoint);
        let sibling = e.branches[0].siblings[0];
        assert!(sibling.start <= script.launches[3].range.start);
    }
}
