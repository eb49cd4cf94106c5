//! Build stages of a Dockerfile and what each is built from.
//!
//! Base images are resolved as BuildKit does: the global `ARG`s (those
//! before the first `FROM`) are expanded in order, each default seeing the
//! ones before it, build arguments replace the defaults of declared `ARG`s,
//! and a `FROM` naming an earlier stage continues from that stage.

use super::workload::{Accelerator, EnvView, image_accelerator};
use crate::syntax::dockerfile::{Dockerfile, Instruction, KeyValue, Word};
use crate::syntax::interpolate;
use crate::text::{SourceFile, TextRange};
use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

#[derive(Debug)]
pub struct DockerfileModel {
    pub syntax: Dockerfile,
    /// `ARG`s before the first `FROM`: (instruction index, name, default).
    pub global_args: Vec<(usize, String, Option<String>)>,
    pub stages: Vec<Stage>,
}

#[derive(Debug)]
pub struct Stage {
    /// The `FROM` instruction's index.
    pub from: usize,
    /// The image (or stage) as written.
    pub image: Word,
    /// `AS name`, lower-cased as BuildKit compares it.
    pub name: Option<String>,
    /// Indices of the instructions after `FROM`, up to the next stage.
    pub body: std::ops::Range<usize>,
}

/// The image a compose service builds: what it is based on and where that
/// is written.
#[derive(Debug, PartialEq, Eq)]
pub struct BuiltImage {
    /// The Dockerfile, or `None` for `dockerfile_inline` (spans are then
    /// the compose file's `dockerfile_inline` value).
    pub dockerfile: Option<Arc<SourceFile>>,
    /// The base of the built stage (`build.target`, or the last stage).
    pub base: BaseImage,
    /// Whether `NVIDIA_VISIBLE_DEVICES` is set in the image's environment.
    pub sets_visible_devices: bool,
}

impl BuiltImage {
    /// Reads what `build:` produces from the Dockerfile text; `None` when it
    /// has no stage to build.
    pub fn from_dockerfile(
        dockerfile: Option<Arc<SourceFile>>,
        text: &str,
        target: Option<&str>,
        build_args: &HashMap<String, String>,
    ) -> Option<BuiltImage> {
        Self::from_model(
            dockerfile,
            &DockerfileModel::parse(text),
            target,
            build_args,
        )
    }

    /// [`BuiltImage::from_dockerfile`] from a Dockerfile already parsed.
    pub fn from_model(
        dockerfile: Option<Arc<SourceFile>>,
        model: &DockerfileModel,
        target: Option<&str>,
        build_args: &HashMap<String, String>,
    ) -> Option<BuiltImage> {
        let stage = model.target_stage(target)?;
        let base = model.base(stage, build_args)?;
        let sets_visible_devices = model
            .env(&base.chain)
            .iter()
            .any(|e| e.pair.key.text == "NVIDIA_VISIBLE_DEVICES");
        Some(BuiltImage {
            dockerfile,
            base,
            sets_visible_devices,
        })
    }

    /// `trainer/Dockerfile` (or "its `dockerfile_inline`"), for messages.
    pub fn describe_dockerfile(&self) -> String {
        match &self.dockerfile {
            Some(file) => format!("`{}`", file.path.display()),
            None => "its `dockerfile_inline`".to_string(),
        }
    }
}

/// An `ENV` setting: the pair and where it is.
#[derive(Debug, Clone)]
pub struct EnvSetting<'d> {
    pub stage: usize,
    pub instruction: usize,
    pub pair: &'d KeyValue,
    /// The value as written (variables not expanded).
    pub value: &'d str,
}

impl<'d> EnvSetting<'d> {
    /// The variable as rules read it; a value with variables in it is unknown.
    pub fn view(&self) -> EnvView<'d> {
        EnvView {
            name: &self.pair.key.text,
            value: (!self.value.contains('$')).then_some(self.value),
            range: self.pair.range,
        }
    }
}

/// The image a stage is ultimately built on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseImage {
    /// With variables expanded; unknown ones are left as written.
    pub image: String,
    /// Every variable had a value.
    pub complete: bool,
    /// The stage whose `FROM` names this image (the end of the stage chain).
    pub stage: usize,
    /// The image word in that `FROM`.
    pub range: TextRange,
    /// The stages from the one asked about down to `stage`.
    pub chain: Vec<usize>,
}

impl BaseImage {
    pub fn accelerator(&self) -> Option<Accelerator> {
        image_accelerator(&self.image)
    }

    pub fn is_scratch(&self) -> bool {
        self.image.eq_ignore_ascii_case("scratch")
    }
}

impl DockerfileModel {
    pub fn parse(text: &str) -> DockerfileModel {
        Self::from_syntax(Dockerfile::parse(text))
    }

    pub fn from_syntax(syntax: Dockerfile) -> DockerfileModel {
        let mut global_args = Vec::new();
        let mut stages: Vec<Stage> = Vec::new();
        for (index, instruction) in syntax.instructions.iter().enumerate() {
            match instruction.keyword.as_str() {
                "FROM" => {
                    let words = instruction.words();
                    if let Some(last) = stages.last_mut() {
                        last.body.end = index;
                    }
                    stages.push(Stage {
                        from: index,
                        image: words[0].clone(),
                        name: words.get(2).map(|w| w.text.to_ascii_lowercase()),
                        body: index + 1..syntax.instructions.len(),
                    });
                }
                "ARG" if stages.is_empty() => {
                    for pair in instruction.key_values() {
                        global_args.push((
                            index,
                            pair.key.text.clone(),
                            pair.value.as_ref().map(|v| v.text.clone()),
                        ));
                    }
                }
                _ => {}
            }
        }
        DockerfileModel {
            syntax,
            global_args,
            stages,
        }
    }

    pub fn instruction(&self, index: usize) -> &Instruction {
        &self.syntax.instructions[index]
    }

    /// The stage `--target` names, or the last stage.
    pub fn target_stage(&self, target: Option<&str>) -> Option<usize> {
        match target {
            Some(t) => {
                let t = t.to_ascii_lowercase();
                self.stages
                    .iter()
                    .position(|s| s.name.as_deref() == Some(t.as_str()))
            }
            None => self.stages.len().checked_sub(1),
        }
    }

    /// The global `ARG` values `FROM` lines see, with `build_args` replacing
    /// the defaults of declared `ARG`s.
    pub(crate) fn args_seen_by_from(
        &self,
        build_args: &HashMap<String, String>,
    ) -> HashMap<String, Option<String>> {
        let mut values: HashMap<String, Option<String>> = HashMap::new();
        for (_, name, default) in &self.global_args {
            let value = match build_args.get(name) {
                Some(v) => Some(v.clone()),
                None => default.as_ref().and_then(|d| {
                    let (text, complete) = expand(d, &|n| values.get(n)?.as_deref());
                    complete.then_some(text)
                }),
            };
            values.insert(name.clone(), value);
        }
        values
    }

    /// What `stage` is built on, following `FROM <earlier stage>`.
    pub fn base(&self, stage: usize, build_args: &HashMap<String, String>) -> Option<BaseImage> {
        let args = self.args_seen_by_from(build_args);
        let mut chain = vec![stage];
        let mut current = stage;
        loop {
            let s = self.stages.get(current)?;
            let (image, complete) = expand(&s.image.text, &|n| args.get(n)?.as_deref());
            let lower = image.to_ascii_lowercase();
            // Only earlier stages can be referenced, which also rules out cycles.
            let parent = self.stages[..current]
                .iter()
                .rposition(|p| p.name.as_deref() == Some(lower.as_str()));
            match parent {
                Some(p) => {
                    chain.push(p);
                    current = p;
                }
                None => {
                    return Some(BaseImage {
                        image,
                        complete,
                        stage: current,
                        range: s.image.range,
                        chain,
                    });
                }
            }
        }
    }

    /// `ENV` settings of a stage and the stages it builds on, outermost
    /// stage first, in file order (later ones win).
    pub fn env(&self, chain: &[usize]) -> Vec<EnvSetting<'_>> {
        let mut settings = Vec::new();
        for &stage in chain.iter().rev() {
            settings.extend(self.stage_env(stage));
        }
        settings
    }

    /// Every stage's `ENV` settings, in file order.
    pub fn env_settings(&self) -> Vec<EnvSetting<'_>> {
        (0..self.stages.len())
            .flat_map(|s| self.stage_env(s))
            .collect()
    }

    /// The `ENV` settings written in one stage.
    pub(crate) fn stage_env(&self, stage: usize) -> Vec<EnvSetting<'_>> {
        let mut settings = Vec::new();
        for index in self.stages[stage].body.clone() {
            let instruction = self.instruction(index);
            if instruction.keyword != "ENV" {
                continue;
            }
            for pair in instruction.key_values() {
                settings.push(EnvSetting {
                    stage,
                    instruction: index,
                    value: pair.value.as_ref().map_or("", |v| v.text.as_str()),
                    pair,
                });
            }
        }
        settings
    }

    /// The resolved meaning of the file as (path, value) leaves, for fix
    /// verification: global args, each stage's base, its `ENV` assignments per
    /// variable and its other instructions in order, and the syntax error count.
    pub fn leaves(&self) -> Vec<(Vec<String>, String)> {
        let mut leaves = Vec::new();
        for (_, name, default) in &self.global_args {
            leaves.push((
                vec!["arg".to_string(), name.clone()],
                default.clone().unwrap_or_default(),
            ));
        }
        for (i, stage) in self.stages.iter().enumerate() {
            let path = |rest: &[&str]| -> Vec<String> {
                ["stage", &i.to_string()]
                    .iter()
                    .chain(rest)
                    .map(|s| s.to_string())
                    .collect()
            };
            leaves.push((path(&["from"]), normalized(self.instruction(stage.from))));
            let mut env: HashMap<String, String> = HashMap::new();
            let mut others = 0;
            for index in stage.body.clone() {
                let instruction = self.instruction(index);
                if instruction.keyword == "ENV" {
                    // Every assignment counts, in order: an earlier one is
                    // what the `RUN`s between them see.
                    for pair in instruction.key_values() {
                        let value = env.entry(pair.key.text.clone()).or_default();
                        if !value.is_empty() {
                            value.push('\n');
                        }
                        value.push('=');
                        value.push_str(pair.value.as_ref().map_or("", |v| v.text.as_str()));
                    }
                } else {
                    leaves.push((
                        path(&["instruction", &others.to_string()]),
                        normalized(instruction),
                    ));
                    others += 1;
                }
            }
            for (name, value) in env {
                leaves.push((path(&["env", &name]), value));
            }
        }
        leaves.push((
            vec!["syntax-errors".to_string()],
            self.syntax.errors.len().to_string(),
        ));
        leaves.sort();
        leaves
    }
}

/// An instruction with its whitespace and line continuations normalized.
fn normalized(instruction: &Instruction) -> String {
    let mut out = instruction.keyword.clone();
    for flag in &instruction.flags {
        out.push_str(&format!(
            " --{}={}",
            flag.name,
            flag.value.as_deref().unwrap_or("")
        ));
    }
    for word in instruction.words() {
        out.push(' ');
        out.push_str(&word.text);
    }
    for heredoc in &instruction.heredocs {
        out.push('\n');
        out.push_str(&heredoc.body.text);
    }
    out
}

/// Expands `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME-default}`,
/// `${NAME:+alt}` and `${NAME+alt}` (nested in the word, as BuildKit's shell
/// lexer does). Unknown variables are kept as written; the flag says whether
/// every variable was known. An expansion that would grow past
/// [`interpolate::budget_for`] its text (an `ARG` doubling its value each
/// line) is not made: the text stays as written and is not complete, like
/// an unknown variable. Iterative and linear (see [`interpolate`]).
pub fn expand<'v>(text: &str, lookup: &dyn Fn(&str) -> Option<&'v str>) -> (String, bool) {
    let expanded = interpolate::expand(
        text,
        interpolate::Dialect::BUILDKIT,
        lookup,
        interpolate::budget_for(text),
    );
    (expanded.text, expanded.complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(text: &str, target: Option<&str>, args: &[(&str, &str)]) -> BaseImage {
        let model = DockerfileModel::parse(text);
        let args = args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        model
            .base(model.target_stage(target).unwrap(), &args)
            .unwrap()
    }

    #[test]
    fn arg_defaults_expand_in_order_and_build_args_win() {
        let text =
            "ARG CUDA=12.4.1\nARG BASE=nvidia/cuda:${CUDA}-devel-ubuntu22.04\nFROM ${BASE}\n";
        let b = base(text, None, &[]);
        assert_eq!(b.image, "nvidia/cuda:12.4.1-devel-ubuntu22.04");
        assert!(b.complete);
        assert_eq!(&text[b.range.as_range()], "${BASE}");
        let b = base(text, None, &[("CUDA", "11.8.0")]);
        assert_eq!(b.image, "nvidia/cuda:11.8.0-devel-ubuntu22.04");
        let b = base(text, None, &[("BASE", "python:3.12-slim")]);
        assert_eq!(b.image, "python:3.12-slim");
    }

    #[test]
    fn stages_are_followed_and_targets_pick_a_stage() {
        let text = "ARG IMG\nFROM nvcr.io/nvidia/pytorch:24.01-py3 AS Build\nRUN make\nFROM build AS test\nFROM python:3.12-slim\n";
        let b = base(text, Some("test"), &[]);
        assert_eq!(b.image, "nvcr.io/nvidia/pytorch:24.01-py3");
        assert_eq!(b.chain, vec![1, 0]);
        assert_eq!(base(text, None, &[]).image, "python:3.12-slim");
    }

    #[test]
    fn unknown_variables_stay_and_defaults_apply() {
        let (e, complete) = expand("nvidia/cuda:${CUDA_VERSION}-base", &|_| None);
        assert_eq!(e, "nvidia/cuda:${CUDA_VERSION}-base");
        assert!(!complete);
        let (e, complete) = expand("elastic:${V:-9.5.1}", &|_| None);
        assert_eq!((e.as_str(), complete), ("elastic:9.5.1", true));
        let vars = |n: &str| (n == "A").then_some("x");
        assert_eq!(expand("$A-${A:+y}${B:-${A}}", &vars).0, "x-yx");
        assert_eq!(expand("\\$A ${A", &vars).0, "$A ${A");
    }

    #[test]
    fn doubling_arg_chains_and_deep_defaults_stay_bounded() {
        // 2^40 bytes if expanded in full (the old expander ran out of
        // memory at 28 lines): past the budget the value is unknown.
        let mut text = String::from("ARG A0=nvcr.io\n");
        for i in 1..40 {
            text.push_str(&format!("ARG A{i}=${{A{p}}}${{A{p}}}\n", p = i - 1));
        }
        text.push_str("FROM ${A39}/nvidia/pytorch:24.01-py3\n");
        let b = base(&text, None, &[]);
        assert_eq!(b.image, "${A39}/nvidia/pytorch:24.01-py3");
        assert!(!b.complete);
        // The first levels are still known.
        let b = base(&text.replace("${A39}", "${A3}"), None, &[]);
        assert_eq!(
            b.image,
            format!("{}/nvidia/pytorch:24.01-py3", "nvcr.io".repeat(8))
        );
        // Defaults nested 100 000 deep (the old expander overflowed its stack).
        let depth = 100_000;
        let text = format!(
            "FROM {}nvcr.io/nvidia/pytorch:24.01-py3{}\n",
            "${a:-".repeat(depth),
            "}".repeat(depth)
        );
        let b = base(&text, None, &[]);
        assert_eq!(b.image, "nvcr.io/nvidia/pytorch:24.01-py3");
        assert!(b.complete);
    }

    #[test]
    fn env_follows_the_stage_chain() {
        let model = DockerfileModel::parse(
            "FROM nvidia/cuda:12.4.1-base-ubuntu22.04 AS base\nENV NCCL_P2P_DISABLE=1\nFROM base\nENV A=1 B=2\n",
        );
        let names: Vec<_> = model
            .env(&[1, 0])
            .iter()
            .map(|e| e.pair.key.text.clone())
            .collect();
        assert_eq!(names, ["NCCL_P2P_DISABLE", "A", "B"]);
    }
}
