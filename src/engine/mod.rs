//! Runs the rules over files: reading, parsing, rule dispatch, suppressions,
//! configuration and discovery.

pub mod build;
pub mod config;
pub mod discover;
pub mod fix;
pub mod kustomize;
pub mod noqa;
pub mod project;
pub mod suppress;

use crate::diagnostic::Diagnostic;
use crate::model::compose::ComposeFile;
use crate::model::dockerfile::DockerfileModel;
use crate::model::k8s::Manifest;
use crate::model::runtime::{self, ContainerRuntime};
use crate::model::script::{Script, ScriptKind};
use crate::rules::{self, ComposeContext, DockerfileContext, KubeContext, Reporter, ScriptContext};
use crate::syntax::yaml::Yaml;
use crate::syntax::yaml_edit::YamlEditor;
use crate::text::LineIndex;
use config::Config;
use std::path::{Path, PathBuf};

/// Files larger than this are refused rather than parsed.
pub const MAX_FILE_SIZE: u64 = 16 * 1024 * 1024;

/// A file that could not be linted, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub message: String,
    /// Byte offset of the problem, when it has one.
    pub offset: Option<usize>,
    /// Set when the file is not an error but not lintable as written (a
    /// template): it is skipped with a note instead.
    pub skip: Option<Skip>,
}

/// Why a file is passed over: what is in it is not what gets deployed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// A Helm/Go template; `{{` at `offset`.
    HelmTemplate { offset: usize },
    /// A kustomization with patches, or a patch it applies: partial manifests.
    Kustomize { kustomization: PathBuf },
}

impl FileError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            offset: None,
            skip: None,
        }
    }

    pub fn at(message: impl Into<String>, offset: usize) -> Self {
        Self {
            offset: Some(offset),
            ..Self::new(message)
        }
    }
}

/// The outcome for one file.
#[derive(Debug)]
pub struct FileReport {
    /// The path as the user gave it (or `--stdin-filename`).
    pub path: PathBuf,
    /// The text findings and errors are shown in: empty for a clean file.
    pub text: String,
    pub index: LineIndex,
    pub diagnostics: Vec<Diagnostic>,
    pub error: Option<FileError>,
    /// The file was passed over (a template or a kustomize patch), not linted.
    pub skipped: Option<Skip>,
}

impl FileReport {
    /// A linted file and its findings.
    pub fn new(path: PathBuf, text: String, diagnostics: Vec<Diagnostic>) -> Self {
        let index = LineIndex::new(&text);
        Self {
            path,
            text,
            index,
            diagnostics,
            error: None,
            skipped: None,
        }
    }

    /// A file that could not be linted, or was skipped.
    pub fn failed(path: PathBuf, text: String, error: FileError) -> Self {
        let index = LineIndex::new(&text);
        let skipped = error.skip.clone();
        Self {
            path,
            text,
            index,
            diagnostics: Vec::new(),
            error: if skipped.is_some() { None } else { Some(error) },
            skipped,
        }
    }
}

/// Reads a file as UTF-8 text, refusing binary and oversized files.
pub fn read_source(path: &Path) -> Result<String, (FileError, String)> {
    read_source_stamped(path).map(|(text, _)| text)
}

/// [`read_source`], and the stamp of the file it read (see
/// [`build::DiskStamp`]), taken from the same open file.
pub fn read_source_stamped(path: &Path) -> Result<(String, build::DiskStamp), (FileError, String)> {
    use std::io::Read;
    let cannot_read = |e: std::io::Error| {
        (
            FileError::new(format!("cannot read: {}", io_reason(&e))),
            String::new(),
        )
    };
    // One open and one fstat: the size check and the read see the same file.
    let file = open_nonblocking(path).map_err(cannot_read)?;
    let metadata = file.metadata().map_err(cannot_read)?;
    if metadata.is_dir() {
        return Err((FileError::new("is a directory"), String::new()));
    }
    if !metadata.is_file() {
        // A FIFO, socket or device: reading it could wait forever or never end.
        return Err((
            FileError::new("not a regular file (a FIFO, socket or device)"),
            String::new(),
        ));
    }
    if metadata.len() > MAX_FILE_SIZE {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize + 1);
    // A file that grew since the fstat is still cut off at the limit.
    file.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(too_large(bytes.len() as u64));
    }
    let stamp = build::DiskStamp::of(&metadata);
    decode(bytes).map(|text| (text, stamp))
}

/// Opens for reading without waiting for a writer: opening a FIFO blocks
/// until one comes, which may be never. The flag changes nothing for a
/// regular file.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

fn too_large(size: u64) -> (FileError, String) {
    (
        FileError::new(format!(
            "file is too large ({size} bytes; gpulint reads at most {MAX_FILE_SIZE})"
        )),
        String::new(),
    )
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Turns bytes into text, or explains why they are not a text file.
pub fn decode(bytes: Vec<u8>) -> Result<String, (FileError, String)> {
    if let Some(nul) = bytes.iter().take(8192).position(|&b| b == 0) {
        return Err((
            FileError::at("binary file (contains NUL bytes), not text", nul),
            String::new(),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let prefix = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
        (FileError::at("not valid UTF-8 text", valid), prefix)
    })
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
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if discover::is_dockerfile_name(name) {
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
    pub fn is_yaml(self) -> bool {
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

/// Which rules apply to a file, decided once (per-file ignores normalise
/// the path, which is not free), in [`rules::RULES`] order.
struct ActiveRules(Vec<bool>);

impl ActiveRules {
    fn for_file(path: &Path, config: &Config) -> Self {
        ActiveRules(
            rules::RULES
                .iter()
                .zip(config.enabled())
                .map(|(r, &enabled)| enabled && !config.is_ignored_for(path, r.code))
                .collect(),
        )
    }

    fn contains(&self, code: &str) -> bool {
        rules::RULES
            .iter()
            .position(|r| r.code == code)
            .is_some_and(|i| self.0[i])
    }

    /// The enabled rules with their metadata.
    fn iter(
        &self,
    ) -> impl Iterator<Item = (&'static rules::RuleInfo, &'static rules::RuleMeta)> + '_ {
        rules::RULES
            .iter()
            .zip(rules::all_meta())
            .zip(&self.0)
            .filter(|(_, on)| **on)
            .map(|(rule, _)| rule)
    }
}

/// Runs one rule's check and collects its findings.
fn run_check(
    diagnostics: &mut Vec<Diagnostic>,
    info: &rules::RuleInfo,
    meta: &rules::RuleMeta,
    check: &dyn Fn(&mut Reporter),
) {
    let mut reporter = Reporter::new(info.code, meta.severity);
    check(&mut reporter);
    diagnostics.extend(reporter.into_diagnostics());
}

/// Lints one text: a compose file, Kubernetes manifests or a Dockerfile,
/// by the path's name. Errors are about the file as a whole (it is not
/// YAML, or it is a template); Dockerfile syntax errors are findings.
pub fn lint_text(text: &str, path: &Path, config: &Config) -> Result<Vec<Diagnostic>, FileError> {
    Ok(lint_in_scope(text, path, config, Scope::Any)?.unwrap_or_default())
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

/// [`lint_text`], or `None` for a file outside `scope`. The file is parsed
/// once for both questions.
fn lint_in_scope(
    text: &str,
    path: &Path,
    config: &Config,
    scope: Scope,
) -> Result<Option<Vec<Diagnostic>>, FileError> {
    lint_with_suppressions(text, path, config, scope, true)
}

/// [`lint_text`] as if the file had no suppression comments: what they
/// would hide is reported, and malformed ones are not. `--add-noqa` checks
/// with it that the comments it adds change nothing but what is reported.
pub fn lint_text_unsuppressed(
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Vec<Diagnostic>, FileError> {
    Ok(lint_with_suppressions(text, path, config, Scope::Any, false)?.unwrap_or_default())
}

fn lint_with_suppressions(
    text: &str,
    path: &Path,
    config: &Config,
    scope: Scope,
    suppressing: bool,
) -> Result<Option<Vec<Diagnostic>>, FileError> {
    let active = ActiveRules::for_file(path, config);
    let (diagnostics, index, suppressions, invalid) = match FileKind::of_text(path, text) {
        FileKind::Dockerfile => {
            let diagnostics = lint_dockerfile(text, path, config, &active);
            let index = suppression_index(text);
            let (s, i) = suppress::parse(text, suppress::Comments::WholeLine, &index);
            (diagnostics, index, s, i)
        }
        FileKind::Yaml => {
            if scope == Scope::ManifestsOnly && !mentions_manifest_keys(text) {
                return Ok(None);
            }
            let Some(yaml) = parse_yaml(text, scope)? else {
                return Ok(None);
            };
            let diagnostics = lint_yaml(text, &yaml, path, config, &active);
            let index = suppression_index(text);
            let (s, i) = suppress::parse(text, suppress::Comments::Yaml(&yaml), &index);
            (diagnostics, index, s, i)
        }
        FileKind::Script(kind) => {
            // A workflow that is not YAML is GitHub's to report, not ours.
            let Some((script, yaml)) = read_script(text, kind) else {
                return Ok(Some(Vec::new()));
            };
            let diagnostics = lint_script(text, &script, config, &active);
            let index = suppression_index(text);
            // A workflow's comments are YAML's; a script's are whole lines.
            let comments = match &yaml {
                Some(yaml) => suppress::Comments::Yaml(yaml),
                None => suppress::Comments::WholeLine,
            };
            let (s, i) = suppress::parse(text, comments, &index);
            (diagnostics, index, s, i)
        }
    };
    let is_active = |code: &str| active.contains(code);
    let mut diagnostics = if suppressing {
        let mut kept = suppress::apply(diagnostics, &suppressions, &index, is_active);
        kept.extend(invalid);
        kept
    } else {
        diagnostics
    };
    diagnostics.retain(|d| is_active(d.code));
    for d in &mut diagnostics {
        if let Some(severity) = config.severity_override(d.code) {
            d.severity = severity;
        }
    }
    diagnostics.sort_by(|a, b| (a.range.start, a.code).cmp(&(b.range.start, b.code)));
    diagnostics.dedup();
    Ok(Some(diagnostics))
}

/// The commands of a file of `kind`, and for a workflow the YAML they were
/// read from; `None` for a workflow that is not YAML.
fn read_script(text: &str, kind: ScriptKind) -> Option<(Script, Option<Yaml>)> {
    if kind != ScriptKind::Workflow {
        return Some((Script::read(text, kind, None), None));
    }
    let yaml = parse_yaml(text, Scope::Any).ok()??;
    Some((Script::read(text, kind, Some(&yaml)), Some(yaml)))
}

fn lint_script(
    text: &str,
    script: &Script,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if script.runs.is_empty() && script.batch.is_none() {
        return diagnostics;
    }
    let cx = ScriptContext {
        script,
        text,
        settings: &config.rule_settings,
    };
    for (info, meta) in active.iter() {
        if let Some(check) = info.check.commands {
            run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
        }
        if let Some(check) = info.check.slurm {
            run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
        }
    }
    diagnostics
}

fn lint_dockerfile(
    text: &str,
    path: &Path,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let model = std::sync::Arc::new(DockerfileModel::parse(text));
    build::remember_dockerfile(path, text, model.clone());
    let cx = DockerfileContext {
        model: &model,
        text,
        settings: &config.rule_settings,
    };
    let mut diagnostics = Vec::new();
    for (info, meta) in active.iter() {
        if let Some(check) = info.check.dockerfile {
            run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
        }
    }
    diagnostics
}

/// The line index suppression comments are read with; an empty one (no
/// scan of the text) when there cannot be any.
fn suppression_index(text: &str) -> LineIndex {
    if suppress::may_have_directives(text) {
        LineIndex::new(text)
    } else {
        LineIndex::new("")
    }
}

/// Parses a YAML file, telling a Helm/Go template (skipped) from broken
/// YAML; `None` when it parses but is outside `scope`.
fn parse_yaml(text: &str, scope: Scope) -> Result<Option<Yaml>, FileError> {
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

/// Whether any document of a parsed file is a Kubernetes object.
fn holds_manifest(yaml: &Yaml) -> bool {
    yaml.documents
        .iter()
        .filter_map(|d| d.root)
        .any(|root| crate::model::k8s::is_object(yaml, root))
}

/// A manifest names both keys somewhere; most other YAML does not.
fn mentions_manifest_keys(text: &str) -> bool {
    text.contains("apiVersion") && text.contains("kind")
}

/// A YAML document read as what it deploys.
enum Document<'y> {
    Kubernetes(Manifest<'y>),
    Compose(ComposeFile<'y>),
}

/// Each document of a YAML file as Kubernetes objects or a compose file
/// (with the Dockerfiles it builds and the rest of its compose project
/// merged in), with its index; other documents are passed over.
fn documents<'y>(
    yaml: &'y Yaml,
    text: &'y str,
    path: &'y Path,
    config: &'y Config,
) -> impl Iterator<Item = (usize, Document<'y>)> + 'y {
    yaml.documents
        .iter()
        .enumerate()
        .filter_map(move |(index, document)| {
            let root = document.root?;
            if let Some(manifest) = Manifest::from_document(yaml, root) {
                return Some((index, Document::Kubernetes(manifest)));
            }
            let file = project::read_compose_document(yaml, root, text, path, config)?;
            Some((index, Document::Compose(file)))
        })
}

fn lint_yaml(
    text: &str,
    yaml: &Yaml,
    path: &Path,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let editor = YamlEditor::new(yaml, text);
    for (document_index, document) in documents(yaml, text, path, config) {
        match document {
            Document::Kubernetes(manifest) => {
                let cx = KubeContext {
                    manifest: &manifest,
                    text,
                    settings: &config.rule_settings,
                    edit: &editor,
                    document: document_index,
                };
                for (info, meta) in active.iter() {
                    if let Some(check) = info.check.kubernetes {
                        run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
                    }
                }
            }
            Document::Compose(file) => {
                let cx = ComposeContext {
                    file: &file,
                    text,
                    settings: &config.rule_settings,
                    edit: &editor,
                    document: document_index,
                    aliases: Default::default(),
                };
                let first = diagnostics.len();
                for (info, meta) in active.iter() {
                    if let Some(check) = info.check.compose {
                        run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
                    }
                }
                project::note_profiles(&file, &mut diagnostics[first..]);
                project::point_at_dotenv(text, path, config, &mut diagnostics[first..]);
            }
        }
    }
    diagnostics
}

/// The run-time settings of every compose service and Kubernetes container
/// in a text (none for a Dockerfile, which runs nothing by itself). Never
/// panics, like [`check_text`].
pub fn inspect_text(
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Vec<ContainerRuntime>, FileError> {
    without_crashing(|| inspect_yaml(text, path, config))
}

fn inspect_yaml(
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Vec<ContainerRuntime>, FileError> {
    match FileKind::of_text(path, text) {
        FileKind::Yaml => {}
        // Dockerfiles run nothing by themselves.
        FileKind::Dockerfile => return Ok(Vec::new()),
        FileKind::Script(kind) => {
            return Ok(read_script(text, kind)
                .map(|(script, _)| runtime::command_runtimes(&script))
                .unwrap_or_default());
        }
    }
    let Some(yaml) = parse_yaml(text, Scope::Any)? else {
        return Ok(Vec::new());
    };
    let mut containers = Vec::new();
    for (_, document) in documents(&yaml, text, path, config) {
        containers.extend(match document {
            Document::Kubernetes(manifest) => runtime::kubernetes_runtimes(&manifest),
            Document::Compose(file) => runtime::compose_runtimes(&file),
        });
    }
    Ok(containers)
}

/// Lints text that is already in memory (a file or stdin). Never panics: a
/// bug in a rule becomes an error for this file.
pub fn check_text(path: PathBuf, text: String, config: &Config) -> FileReport {
    match without_crashing(|| lint_text(&text, &path, config)) {
        Ok(diagnostics) => FileReport::new(path, text, diagnostics),
        Err(error) => FileReport::failed(path, text, error),
    }
}

/// [`check_text`] for one file of many, or `None` for a file outside
/// `scope`. A clean file's report does not keep its text (there is nothing
/// to show in it), so a run over a big tree holds only the texts of the
/// files with findings or errors.
pub fn check_text_in_scope(
    path: PathBuf,
    text: String,
    config: &Config,
    scope: Scope,
) -> Option<FileReport> {
    match without_crashing(|| lint_in_scope(&text, &path, config, scope)) {
        Ok(Some(diagnostics)) if diagnostics.is_empty() => {
            Some(FileReport::new(path, String::new(), diagnostics))
        }
        Ok(Some(diagnostics)) => Some(FileReport::new(path, text, diagnostics)),
        Ok(None) => None,
        Err(error) => Some(FileReport::failed(path, text, error)),
    }
}

/// Runs `work` on one file, turning a panic (a bug) into an error for that file.
fn without_crashing<T>(work: impl FnOnce() -> Result<T, FileError>) -> Result<T, FileError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
        Err(FileError::new(
            "internal error: gpulint crashed on this file; please report it with the file attached",
        ))
    })
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

/// Reads and lints one file, as `gpulint check` does: a Dockerfile read
/// here stands in for itself when a compose file builds it, while unchanged.
pub fn check_file(path: PathBuf, config: &Config) -> FileReport {
    match read_source_stamped(&path) {
        Ok((text, stamp)) => build::linting_text_read_from_disk(stamp, || {
            let report = check_text_in_scope(path.clone(), text, config, Scope::Any);
            // Every file is in `Scope::Any`.
            report.unwrap_or_else(|| FileReport::new(path, String::new(), Vec::new()))
        }),
        Err((error, text)) => FileReport::failed(path, text, error),
    }
}
