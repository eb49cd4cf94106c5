//! Running the enabled rules over one text: dispatch by kind of file and
//! YAML document, suppressions, per-file ignores and severities.

use super::build::DiskStamp;
use super::classify::{FileKind, Scope, mentions_manifest_keys, parse_yaml, read_script};
use super::config::Config;
use super::session::Session;
use super::{FileError, project, suppress};
use crate::diagnostic::Diagnostic;
use crate::model::compose::ComposeFile;
use crate::model::dockerfile::DockerfileModel;
use crate::model::k8s::Manifest;
use crate::model::script::Script;
use crate::rules::{self, ComposeContext, DockerfileContext, KubeContext, Reporter, ScriptContext};
use crate::syntax::yaml::Yaml;
use crate::syntax::yaml_edit::YamlEditor;
use crate::text::LineIndex;
use std::path::Path;

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

    fn contains(&self, code: rules::RuleCode) -> bool {
        self.0[code.index()]
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
/// YAML, or it is a template); Dockerfile syntax errors are findings. The
/// files it refers to are read from disk, by a session of its own.
pub fn lint_text(text: &str, path: &Path, config: &Config) -> Result<Vec<Diagnostic>, FileError> {
    Session::on_disk().lint_text(text, path, config)
}

/// [`Session::lint_text_unsuppressed`], reading other files from disk.
pub fn lint_text_unsuppressed(
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Vec<Diagnostic>, FileError> {
    Session::on_disk().lint_text_unsuppressed(text, path, config)
}

impl Session {
    /// [`lint_text`], reading other files through this session.
    pub fn lint_text(
        &self,
        text: &str,
        path: &Path,
        config: &Config,
    ) -> Result<Vec<Diagnostic>, FileError> {
        Ok(self
            .lint_in_scope(text, path, None, config, Scope::Any)?
            .unwrap_or_default())
    }

    /// [`lint_text`], or `None` for a file outside `scope`. The file is
    /// parsed once for both questions. `stamp` is set when `text` is what
    /// the file held on disk at that stamp (see [`DiskStamp`]).
    pub fn lint_in_scope(
        &self,
        text: &str,
        path: &Path,
        stamp: Option<DiskStamp>,
        config: &Config,
        scope: Scope,
    ) -> Result<Option<Vec<Diagnostic>>, FileError> {
        lint_with_suppressions(self, text, path, stamp, config, scope, true)
    }

    /// [`lint_text`] as if the file had no suppression comments: what they
    /// would hide is reported, and malformed ones are not. `--add-noqa`
    /// checks with it that the comments it adds change nothing but what is
    /// reported.
    pub fn lint_text_unsuppressed(
        &self,
        text: &str,
        path: &Path,
        config: &Config,
    ) -> Result<Vec<Diagnostic>, FileError> {
        Ok(
            lint_with_suppressions(self, text, path, None, config, Scope::Any, false)?
                .unwrap_or_default(),
        )
    }
}

fn lint_with_suppressions(
    session: &Session,
    text: &str,
    path: &Path,
    stamp: Option<DiskStamp>,
    config: &Config,
    scope: Scope,
    suppressing: bool,
) -> Result<Option<Vec<Diagnostic>>, FileError> {
    let active = ActiveRules::for_file(path, config);
    let (diagnostics, index, suppressions, invalid) = match FileKind::of_text(path, text) {
        FileKind::Dockerfile => {
            let diagnostics = lint_dockerfile(session, text, path, stamp, config, &active);
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
            let diagnostics = lint_yaml(session, text, &yaml, path, config, &active);
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
    let is_active = |code: rules::RuleCode| active.contains(code);
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
    diagnostics.sort_by_key(|d| (d.range.start, d.code));
    diagnostics.dedup();
    Ok(Some(diagnostics))
}

fn lint_script(
    text: &str,
    script: &Script,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if script.runs.is_empty() && script.batch.is_none() && script.nccl_env.is_empty() {
        return diagnostics;
    }
    let cx = ScriptContext::new(script, text, &config.rule_settings);
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
    session: &Session,
    text: &str,
    path: &Path,
    stamp: Option<DiskStamp>,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let model = std::sync::Arc::new(DockerfileModel::parse(text));
    session.remember_dockerfile(path, text, stamp, model.clone());
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

/// A YAML document read as what it deploys.
pub(super) enum Document<'y> {
    Kubernetes(Manifest<'y>),
    Compose(ComposeFile<'y>),
}

/// Each document of a YAML file as Kubernetes objects or a compose file
/// (with the Dockerfiles it builds and the rest of its compose project
/// merged in), with its index; other documents are passed over.
pub(super) fn documents<'y>(
    session: &'y Session,
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
            let file = project::read_compose_document(session, yaml, root, text, path, config)?;
            Some((index, Document::Compose(file)))
        })
}

fn lint_yaml(
    session: &Session,
    text: &str,
    yaml: &Yaml,
    path: &Path,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let editor = YamlEditor::new(yaml, text);
    let kserve = super::kserve::scope(session, yaml, text, path);
    for (document_index, document) in documents(session, yaml, text, path, config) {
        match document {
            Document::Kubernetes(manifest) => {
                let cx = KubeContext::new(
                    &manifest,
                    text,
                    &config.rule_settings,
                    &editor,
                    document_index,
                    &kserve,
                );
                for (info, meta) in active.iter() {
                    if let Some(check) = info.check.kubernetes {
                        run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
                    }
                }
            }
            Document::Compose(file) => {
                let cx = ComposeContext::new(
                    &file,
                    text,
                    &config.rule_settings,
                    &editor,
                    document_index,
                );
                let first = diagnostics.len();
                for (info, meta) in active.iter() {
                    if let Some(check) = info.check.compose {
                        run_check(&mut diagnostics, info, meta, &|r| check(&cx, r));
                    }
                }
                if diagnostics.len() > first {
                    let dotenv = project::DotEnv::of_project(session.system(), path, config);
                    project::note_profiles(&file, dotenv.as_ref(), &mut diagnostics[first..]);
                    project::point_at_dotenv(dotenv.as_ref(), text, &mut diagnostics[first..]);
                }
            }
        }
    }
    diagnostics
}
