//! What a file is, before any rule runs: its kind by name and by text, a
//! Helm template or plain YAML, and whether walked YAML is a manifest.

use super::{FileError, Skip, discover};
use crate::model::script::{Script, ScriptKind};
use crate::syntax::yaml::Yaml;
use std::path::Path;

/// What kind of file a path holds, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Compose files and Kubernetes manifests.
    Yaml,
    Dockerfile,
    /// Files that run commands: scripts, Makefiles, Markdown, workflows.
    Script(ScriptKind),
}

impl FileKind {
    pub fn of(path: &Path) -> FileKind {
        if discover::is_dockerfile_name(&crate::vfs::file_name_text(path)) {
            FileKind::Dockerfile
        } else if let Some(kind) = discover::script_kind(path) {
            FileKind::Script(kind)
        } else {
            FileKind::Yaml
        }
    }

    /// [`FileKind::of`], or, for a file named like none of them (given on
    /// the command line), what its text shows: a shell script when it
    /// starts with a shell's `#!` line, a Dockerfile when it starts like one
    /// (`gpu.build`, `mydockerfile`).
    pub fn of_text(path: &Path, text: &str) -> FileKind {
        match FileKind::of(path) {
            FileKind::Yaml if !discover::is_yaml_file_name(path) && is_shell_shebang(text) => {
                FileKind::Script(ScriptKind::Shell)
            }
            FileKind::Yaml
                if !discover::is_yaml_file_name(path) && starts_like_dockerfile(text) =>
            {
                FileKind::Dockerfile
            }
            kind => kind,
        }
    }

    /// YAML text: parsed as YAML first (a workflow too).
    pub(crate) fn is_yaml(self) -> bool {
        matches!(
            self,
            FileKind::Yaml | FileKind::Script(ScriptKind::Workflow)
        )
    }
}

/// A `# syntax=` or `# escape=` parser directive first, or `FROM` or `ARG`
/// as the first instruction (after comments and blank lines). Such a line
/// is no YAML mapping's first key (`FROM image` has no `: `), so YAML with
/// an unusual name is still read as YAML.
fn starts_like_dockerfile(text: &str) -> bool {
    let mut lines = text
        .trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    let directive = |line: &str| {
        line.strip_prefix('#').is_some_and(|rest| {
            let rest = rest.trim_start().to_ascii_lowercase();
            rest.starts_with("syntax=") || rest.starts_with("escape=")
        })
    };
    if directive(first) {
        return true;
    }
    let Some(instruction) = std::iter::once(first)
        .chain(lines)
        .find(|l| !l.starts_with('#'))
    else {
        return false;
    };
    let (keyword, rest) = instruction
        .split_once(char::is_whitespace)
        .unwrap_or((instruction, ""));
    (keyword.eq_ignore_ascii_case("FROM") || keyword.eq_ignore_ascii_case("ARG"))
        && !rest.trim().is_empty()
        && !instruction.contains(": ")
        && !instruction.ends_with(':')
}

/// `#!/bin/bash`, `#!/usr/bin/env sh`, … on the first line.
fn is_shell_shebang(text: &str) -> bool {
    let Some(first) = text.lines().next().and_then(|l| l.strip_prefix("#!")) else {
        return false;
    };
    first
        .split([' ', '/'])
        .any(|part| matches!(part, "sh" | "bash" | "zsh" | "dash" | "ksh"))
}

/// Which YAML files are linted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every file: it was named, or is named like a compose file.
    Any,
    /// Only files that hold Kubernetes objects (or do not parse, so that a
    /// broken manifest is reported rather than dropped): YAML found by
    /// walking a directory, which may be anybody's.
    ManifestsOnly,
}

/// Parses a YAML file, telling a Helm/Go template (skipped) from broken
/// YAML; `None` when it parses but is outside `scope`.
pub(super) fn parse_yaml(text: &str, scope: Scope) -> Result<Option<Yaml>, FileError> {
    let has_braces = text.contains("{{");
    let yaml = Yaml::parse(text).map_err(|e| {
        match template_action(text, None).filter(|_| has_braces) {
            Some(at) => helm_skip(at),
            None => FileError::at(format!("invalid YAML: {}", e.message), e.offset),
        }
    })?;
    if scope == Scope::ManifestsOnly && !holds_manifest(&yaml) {
        return Ok(None);
    }
    if has_braces && let Some(at) = template_action(text, Some(&yaml)) {
        return Err(helm_skip(at));
    }
    Ok(Some(yaml))
}

/// Where a Helm/Go template action starts, if the file is a template.
///
/// Compose files may carry `{{.Names}}`-style format strings inside quoted
/// values, so only actions that template the YAML itself count: Helm's
/// objects and control words, or `{{` outside any scalar (which no YAML
/// parser reads as text).
fn template_action(text: &str, yaml: Option<&Yaml>) -> Option<usize> {
    const HELM: &[&str] = &[
        ".Values",
        ".Release",
        ".Chart",
        ".Capabilities",
        ".Files",
        ".Template",
        "include ",
        "template ",
        "if ",
        "else",
        "end",
        "range ",
        "with ",
        "define ",
        "toYaml",
        "tpl ",
        "$",
    ];
    let mut from = 0;
    while let Some(found) = text[from..].find("{{") {
        let at = from + found;
        let inner = text[at + 2..].trim_start_matches('-').trim_start();
        let helm_word = HELM.iter().any(|w| inner.starts_with(w));
        let outside_scalar = yaml.is_some_and(|y| !y.offset_in_scalar(at));
        if helm_word || outside_scalar || yaml.is_none() {
            return Some(at);
        }
        from = at + 2;
    }
    None
}

fn helm_skip(offset: usize) -> FileError {
    FileError {
        skip: Some(Skip::HelmTemplate { offset }),
        ..FileError::at(
            "a Helm/Go template ({{ ... }}), not plain YAML: lint the rendered output instead",
            offset,
        )
    }
}

/// Whether any document of a parsed file is a Kubernetes object.
fn holds_manifest(yaml: &Yaml) -> bool {
    yaml.documents
        .iter()
        .filter_map(|d| d.root)
        .any(|root| crate::model::k8s::is_object(yaml, root))
}

/// A manifest names both keys somewhere; most other YAML does not.
pub(super) fn mentions_manifest_keys(text: &str) -> bool {
    text.contains("apiVersion") && text.contains("kind")
}

/// Whether a YAML file found by walking a directory (and not named like a
/// compose file) holds Kubernetes objects. Text that does not parse counts,
/// so that a broken manifest or a Helm template is reported, not dropped.
pub fn is_manifest_candidate(text: &str) -> bool {
    mentions_manifest_keys(text)
        && match Yaml::parse(text) {
            Ok(yaml) => holds_manifest(&yaml),
            Err(_) => true,
        }
}

/// The commands of a file of `kind`, and for a workflow the YAML they were
/// read from; `None` for a workflow that is not YAML; a located error for
/// a `devcontainer.json` that is not JSON with comments.
pub(super) fn read_script(
    session: &super::session::Session,
    path: &Path,
    text: &str,
    kind: ScriptKind,
) -> Result<Option<(Script, Option<Yaml>)>, FileError> {
    let mut read = match kind {
        ScriptKind::Workflow => parse_yaml(text, Scope::Any)
            .ok()
            .flatten()
            .map(|yaml| (Script::read(text, kind, Some(&yaml)), Some(yaml))),
        ScriptKind::DevContainer => Script::devcontainer(text)
            .map(|mut script| {
                read_devcontainer_build(session, path, &mut script);
                Some((script, None))
            })
            .map_err(|e| FileError::at(format!("invalid JSON: {}", e.message), e.offset))?,
        _ => Some((Script::read(text, kind, None), None)),
    };
    if let Some((script, _)) = &mut read {
        read_env_files(session, path, kind, script);
    }
    Ok(read)
}

/// The variables of each run's `--env-file` (a literal path), read from
/// the file where the run would find it: relative to the script's
/// directory, to the repository a workflow is in (the runner's workspace),
/// or to the folder that holds a dev container's `.devcontainer`. A file
/// not there, or one the CLI would refuse, leaves the run as written.
fn read_env_files(
    session: &super::session::Session,
    path: &Path,
    kind: ScriptKind,
    script: &mut Script,
) {
    if !script
        .runs
        .iter()
        .any(|site| site.run.option("--env-file").is_some())
    {
        return;
    }
    let dir = crate::project::discover::dir_of(path);
    let base = match kind {
        ScriptKind::Workflow => folder_holding(&dir, ".github"),
        ScriptKind::DevContainer => folder_holding(&dir, ".devcontainer"),
        _ => None,
    }
    .unwrap_or(dir);
    for site in &mut script.runs {
        let files: Vec<_> = site
            .run
            .options_named("--env-file")
            .map(|(_, o)| o.clone())
            .filter(|o| !o.dynamic)
            .collect();
        for file in files {
            let Some(value) = file.value.as_deref() else {
                continue;
            };
            let at = crate::vfs::normalize(&base.join(value));
            let Ok((text, _)) = session.read(&at) else {
                continue;
            };
            let _ = site.run.read_env_file(&file, &text);
        }
    }
}

/// A dev container that builds its image (`build.dockerfile`, no `image`):
/// the base image of the Dockerfile's last stage, its `ARG`s set from
/// `build.args` as the Dev Container CLI passes them, is what the
/// container is made from (evidence for the rules, as an image would be).
/// The Dockerfile's path is relative to the `devcontainer.json`;
/// `${localWorkspaceFolder}` is the folder that holds `.devcontainer`.
fn read_devcontainer_build(session: &super::session::Session, path: &Path, script: &mut Script) {
    use crate::syntax::jsonc::Value;
    let Some(dev) = script.devcontainer.as_deref() else {
        return;
    };
    let root = &dev.json.root;
    if root.get("image").is_some() {
        return;
    }
    let build = root.get("build");
    let Some(dockerfile) = build
        .and_then(|b| b.get("dockerfile").or_else(|| b.get("dockerFile")))
        .or_else(|| root.get("dockerFile"))
        .and_then(Value::as_str)
    else {
        return;
    };
    let dir = crate::project::discover::dir_of(path);
    let workspace = folder_holding(&dir, ".devcontainer").unwrap_or_else(|| dir.clone());
    let file = match dockerfile.strip_prefix("${localWorkspaceFolder}") {
        Some(rest) => workspace.join(rest.trim_start_matches('/')),
        None => dir.join(dockerfile),
    };
    let file = crate::vfs::normalize(&file);
    let Ok((text, _)) = session.read(&file) else {
        return;
    };
    let args: foldhash::HashMap<String, String> = build
        .and_then(|b| b.get("args"))
        .and_then(Value::as_object)
        .map(|members| {
            members
                .iter()
                .filter_map(|m| Some((m.key.clone(), m.value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    // What Compose's `build:` is read with: the last stage's base.
    let built = crate::model::dockerfile::BuiltImage::from_dockerfile(None, &text, None, &args);
    let Some(base) = built.map(|b| b.base).filter(|b| b.complete) else {
        return;
    };
    for site in &mut script.runs {
        site.run.built_from = Some(base.image.clone());
    }
}

/// The folder that holds the nearest `name` folder `dir` is in (the
/// repository of a `.github` workflow, the workspace of a `.devcontainer`).
fn folder_holding(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    dir.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == name))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
}
