//! Running the enabled rules over one text: dispatch by kind of file and
//! YAML document, suppressions, per-file ignores and severities.

use super::classify::{FileKind, Scope, mentions_manifest_keys, parse_yaml, read_script};
use super::config::Config;
use super::session::Session;
use super::{FileError, suppress};
use crate::diagnostic::Diagnostic;
use crate::model::dockerfile::DockerfileModel;
use crate::model::k8s::Manifest;
use crate::model::script::Script;
use crate::redact::{Hidden, redact_diagnostic};
use crate::rules::{self, DockerfileContext, KubeContext, Reporter, ScriptContext};
use crate::syntax::yaml::{Yaml, YamlError};
use crate::syntax::yaml_edit::YamlEditor;
use crate::text::LineIndex;
use crate::vfs::Stamp;
use std::path::Path;
use std::sync::Arc;

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
    let mut reporter =
        Reporter::appending_to(std::mem::take(diagnostics), info.code, meta.severity);
    check(&mut reporter);
    *diagnostics = reporter.into_diagnostics();
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
    /// the file held on disk at that stamp (see [`Stamp`]).
    pub fn lint_in_scope(
        &self,
        text: &str,
        path: &Path,
        stamp: Option<Stamp>,
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
    stamp: Option<Stamp>,
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
            let yaml = Arc::new(Ok(yaml));
            let diagnostics = lint_yaml(session, text, &yaml, path, config, &active);
            let Ok(yaml) = &*yaml else {
                unreachable!("parsed above")
            };
            let index = suppression_index(text);
            let (s, i) = suppress::parse(text, suppress::Comments::Yaml(yaml), &index);
            (diagnostics, index, s, i)
        }
        FileKind::Script(kind) => {
            // A workflow that is not YAML is GitHub's to report, not ours.
            // A Quadlet unit is read with the drop-ins Quadlet merges into it.
            let merged = (kind == crate::model::script::ScriptKind::Quadlet)
                .then(|| super::quadlet::merged(session, path, text))
                .flatten();
            let read_text = merged.as_ref().map_or(text, |m| m.text.as_str());
            let Some((script, yaml)) = read_script(session, path, read_text, kind)? else {
                return Ok(Some(Vec::new()));
            };
            let mut diagnostics = lint_script(read_text, &script, config, &active);
            if let Some(merged) = &merged {
                diagnostics = merged.place(diagnostics);
            }
            if let Some(dev) = script.devcontainer.as_deref() {
                diagnostics.extend(super::devcontainer::compose_findings(
                    session, dev, path, config,
                ));
            }
            let index = suppression_index(text);
            // A workflow's comments are YAML's; a dev container's `//`
            // comments its JSON's; a script's are whole lines.
            let json_comments = script
                .devcontainer
                .as_ref()
                .map(|dev| dev.json.comments.as_slice());
            let comments = match (&yaml, json_comments) {
                (Some(yaml), _) => suppress::Comments::Yaml(yaml),
                (None, Some(ranges)) => suppress::Comments::Slashes(ranges),
                (None, None) => suppress::Comments::WholeLine,
            };
            let (s, i) = suppress::parse(text, comments, &index);
            (diagnostics, index, s, i)
        }
    };
    Ok(Some(finish(
        diagnostics,
        &index,
        suppressions,
        invalid,
        &active,
        config,
        suppressing,
    )))
}

/// A file's findings as reported: suppression comments applied (and the
/// malformed ones reported), rules off for the file dropped, severities
/// as configured, sorted.
fn finish(
    diagnostics: Vec<Diagnostic>,
    index: &LineIndex,
    suppressions: Vec<suppress::Suppression>,
    invalid: Vec<Diagnostic>,
    active: &ActiveRules,
    config: &Config,
    suppressing: bool,
) -> Vec<Diagnostic> {
    let is_active = |code: rules::RuleCode| active.contains(code);
    let mut diagnostics = if suppressing {
        let mut kept = suppress::apply(diagnostics, &suppressions, index, is_active);
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
        // Every finding, of every kind of file: no credential is quoted,
        // no long value whole.
        redact_diagnostic(d, &Hidden::default());
    }
    diagnostics.sort_by_key(|d| (d.range.start, d.code));
    diagnostics.dedup();
    diagnostics
}

impl Session {
    /// The findings a compose project's lint places in a file that was not
    /// linted itself (a file the project extends or includes), as that file
    /// reports them: its suppression comments and configuration applied.
    pub fn finish_elsewhere(
        &self,
        source: &crate::text::SourceFile,
        diagnostics: Vec<Diagnostic>,
        config: &Config,
    ) -> Vec<Diagnostic> {
        let path = &source.path;
        let text = &source.text;
        let active = ActiveRules::for_file(path, config);
        let index = suppression_index(text);
        let parsed = Yaml::parse(text).ok();
        let comments = match &parsed {
            Some(yaml) => suppress::Comments::Yaml(yaml),
            None => suppress::Comments::WholeLine,
        };
        let (suppressions, invalid) = suppress::parse(text, comments, &index);
        finish(
            diagnostics,
            &index,
            suppressions,
            invalid,
            &active,
            config,
            true,
        )
    }
}

fn lint_script(
    text: &str,
    script: &Script,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if script.runs.is_empty() && script.batches.is_empty() && script.nccl_env.is_empty() {
        return diagnostics;
    }
    let cx = ScriptContext::new(script, text, &config.rule_settings);
    for (info, meta) in active.iter() {
        if info.check.on_commands() || info.check.slurm.is_some() {
            run_check(&mut diagnostics, info, meta, &|r| {
                info.check.run_commands(&cx, r)
            });
        }
    }
    diagnostics
}

fn lint_dockerfile(
    session: &Session,
    text: &str,
    path: &Path,
    stamp: Option<Stamp>,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let _ = stamp;
    // A compose project that builds this Dockerfile reads the same model:
    // parsed once, by whichever of the two comes first. It is kept with the
    // files the session read (one per path, forgotten with them after each
    // chunk of a run): asking first whether a compose project builds it
    // cost more than the parse.
    let model = match session.source_as(path, text) {
        Some(source) => session
            .workspace()
            .parsed_dockerfile(&source)
            .unwrap_or_else(|| {
                let model = Arc::new(DockerfileModel::parse(text));
                session.workspace().share_dockerfile(&source, model.clone());
                model
            }),
        None => Arc::new(DockerfileModel::parse(text)),
    };
    let cx = DockerfileContext {
        model: &model,
        text,
        settings: &config.rule_settings,
    };
    let mut diagnostics = Vec::new();
    for (info, meta) in active.iter() {
        if info.check.on_dockerfile() {
            run_check(&mut diagnostics, info, meta, &|r| {
                info.check.run_dockerfile(&cx, r)
            });
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
    /// A compose document: the file is linted as part of its projects.
    Compose,
}

/// Each document of a YAML file as Kubernetes objects or a compose
/// document, with its index; other documents are passed over.
pub(super) fn documents(yaml: &Yaml) -> impl Iterator<Item = (usize, Document<'_>)> + '_ {
    yaml.documents
        .iter()
        .enumerate()
        .filter_map(move |(index, document)| {
            let root = document.root?;
            if let Some(manifest) = Manifest::from_document(yaml, root) {
                return Some((index, Document::Kubernetes(manifest)));
            }
            yaml.is_mapping(root).then_some((index, Document::Compose))
        })
}

/// The session that reads `text` for `path`: this one when it does, else
/// one with `text` as a buffer over it.
pub(super) fn reading<'s>(session: &'s Session, text: &str, path: &Path) -> Reading<'s> {
    if session.reads_as(path, text) {
        Reading::Same(session)
    } else {
        Reading::Buffer(Box::new(session.with_buffer(path, text)))
    }
}

/// A session, or one made for a buffer over it.
pub(super) enum Reading<'s> {
    Same(&'s Session),
    Buffer(Box<Session>),
}

impl std::ops::Deref for Reading<'_> {
    type Target = Session;

    fn deref(&self) -> &Session {
        match self {
            Reading::Same(session) => session,
            Reading::Buffer(session) => session,
        }
    }
}

fn lint_yaml(
    session: &Session,
    text: &str,
    parsed: &Arc<Result<Yaml, YamlError>>,
    path: &Path,
    config: &Config,
    active: &ActiveRules,
) -> Vec<Diagnostic> {
    let Ok(yaml) = &**parsed else {
        return Vec::new();
    };
    let mut diagnostics = Vec::new();
    let editor = YamlEditor::new(yaml, text);
    let mut compose = false;
    let kserve = super::kserve::scope(session, yaml, text, path);
    for (document_index, document) in documents(yaml) {
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
                    if info.check.on_kubernetes() {
                        run_check(&mut diagnostics, info, meta, &|r| {
                            info.check.run_kubernetes(&cx, r)
                        });
                    }
                }
            }
            Document::Compose => compose = true,
        }
    }
    // The API's schema is not Podman's: `podman kube play` reads a file a
    // Quadlet `.kube` unit plays leniently (a number as an env value, an
    // unknown field), so what the API would refuse says nothing of it.
    if diagnostics
        .iter()
        .any(|d| d.code == crate::codes::RuleCode::K8S014)
        && played_by_podman(session, path)
    {
        diagnostics.retain(|d| d.code != crate::codes::RuleCode::K8S014);
    }
    if compose {
        // The projects this file is judged in read it: they take this parse.
        if let Some(source) = session.source_as(path, text) {
            session.workspace().share_yaml(&source, parsed.clone());
        }
        diagnostics.extend(compose_findings(session, text, path, config));
    }
    diagnostics
}

/// Whether a Quadlet `.kube` unit beside `path` plays it (`Yaml=` naming it).
fn played_by_podman(session: &Session, path: &Path) -> bool {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let files = &session.workspace().files;
    let this = crate::vfs::normalize(path);
    files.list_files(dir).iter().any(|name| {
        let unit = dir.join(name);
        unit.extension().is_some_and(|e| e == "kube")
            && files.read(&unit).is_ok_and(|read| {
                read.source.text.lines().any(|line| {
                    line.trim()
                        .strip_prefix("Yaml=")
                        .is_some_and(|yaml| crate::vfs::normalize(&dir.join(yaml.trim())) == this)
                })
            })
    })
}

/// The findings in compose file `path` (holding `text`) of every project it
/// is judged in, once each.
fn compose_findings(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
) -> Vec<Diagnostic> {
    let session = reading(session, text, path);
    let mut found: Vec<Diagnostic> = Vec::new();
    // A finding once, however many projects judge the file (a set: a file
    // of many services has many findings).
    let mut seen: foldhash::HashSet<(crate::codes::RuleCode, u32, u32, String)> =
        Default::default();
    session.for_each_finding_in(path, config, |d| {
        if seen.insert((d.code, d.range.start, d.range.end, d.message.clone())) {
            let mut d = d.clone();
            d.file = None;
            found.push(d);
        }
    });
    found
}
