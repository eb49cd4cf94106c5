//! A run of the engine: the files it reads (a [`Workspace`] over a
//! [`System`]) and what it keeps between files, passed explicitly to
//! whatever lints, inspects or fixes. The command line makes one per run;
//! the language server keeps one, revalidated by file stamps, across edits.
//!
//! Every file is read and parsed once per session, and every compose
//! project loaded and linted once, however many of its files are linted:
//! [`Session::project_lint`] keeps each project's findings, by file, for
//! the files that ask.

use super::config::Config;
use crate::FindingsElsewhere;
use crate::diagnostic::Diagnostic;
use crate::project::{Project, ProjectSpec, Workspace};
use crate::rules::{self, ComposeContext, Reporter};
use crate::text::SourceFile;
use crate::vfs::{Disk, FileRead, Files, Stamp, System, normalize};
use foldhash::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub struct Session {
    workspace: Arc<Workspace>,
    /// Each project's findings, once per project and rule configuration.
    lints: Mutex<HashMap<LintKey, Arc<OnceLock<Arc<ProjectLint>>>>>,
    /// The files the run checks itself, when it says (the command line).
    checked: OnceLock<foldhash::HashSet<PathBuf>>,
}

/// What decides a project's findings: its files, the rules enabled and
/// their settings.
type LintKey = (ProjectSpec, Vec<bool>, crate::rules::RuleSettings);

/// A compose project's findings, each in the file it is in
/// ([`Diagnostic::file`] is set on every one).
pub struct ProjectLint {
    pub project: Arc<Project>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Session {
    /// A session that reads each file once (the command line's).
    pub fn new(system: impl System + 'static) -> Self {
        Session::with_files(Files::snapshot(system))
    }

    /// A long-lived session that reads a file again when its stamp changes
    /// (the language server's).
    pub fn revalidating(system: impl System + 'static) -> Self {
        Session::with_files(Files::revalidating(system))
    }

    /// The next generation of a long-lived session (see
    /// [`Workspace::renewed`]): what changed is read again, the rest kept.
    pub fn renewed(&self, system: impl System + 'static) -> Self {
        Session {
            workspace: Arc::new(self.workspace.renewed(system)),
            lints: Mutex::default(),
            checked: OnceLock::new(),
        }
    }

    fn with_files(files: Files) -> Self {
        Session {
            workspace: Arc::new(Workspace::new(files)),
            lints: Mutex::default(),
            checked: OnceLock::new(),
        }
    }

    /// Names the files this run checks itself (once; later calls are
    /// ignored): a dev container then leaves out of its view of a compose
    /// file that is one of them what that file reports anyway.
    pub fn set_checked_files(&self, files: impl IntoIterator<Item = PathBuf>) {
        let _ = self
            .checked
            .set(files.into_iter().map(|p| normalize(&p)).collect());
    }

    /// Whether the run checks `path` itself (see
    /// [`Session::set_checked_files`]).
    pub(crate) fn checks_itself(&self, path: &Path) -> bool {
        self.checked
            .get()
            .is_some_and(|files| files.contains(&normalize(path)))
    }

    /// A session that reads the disk.
    pub fn on_disk() -> Self {
        Session::new(Disk)
    }

    pub fn system(&self) -> &dyn System {
        self.workspace.files.system()
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// A file as the session reads it: once.
    pub fn read(&self, path: &Path) -> FileRead {
        match self.workspace.files.read(path) {
            Ok(text) => Ok((text.source.text.clone(), text.stamp)),
            Err(failure) => Err((failure.0.clone(), failure.1.clone())),
        }
    }

    /// A session whose file `path` holds `text` (an editor's buffer, a fix
    /// being verified, standard input) and whose every other file is this
    /// session's, read once for both.
    pub fn with_buffer(&self, path: &Path, text: &str) -> Session {
        Session::new(Layered {
            under: self.workspace.clone(),
            path: normalize(path),
            text: text.to_string(),
        })
    }

    /// The file this session reads for `path`, when it holds `text`: the
    /// text a lint was given is then the one the projects read, and a
    /// parse of it serves both.
    pub(super) fn source_as(&self, path: &Path, text: &str) -> Option<Arc<SourceFile>> {
        self.workspace
            .files
            .read(path)
            .ok()
            .filter(|t| t.source.text == text)
            .map(|t| t.source)
    }

    /// Whether this session reads `text` for `path`.
    pub(super) fn reads_as(&self, path: &Path, text: &str) -> bool {
        self.workspace
            .files
            .read(path)
            .is_ok_and(|t| t.source.text == text)
    }

    /// Forgets what was read, parsed, loaded and linted so far, but for
    /// the projects found in the directories above `keep_above` (see
    /// [`Workspace::forget_loaded`]); take [`Self::findings_elsewhere`]
    /// first.
    ///
    /// Returns what was forgotten, to be dropped where it costs least.
    pub fn forget_loaded(&self, keep_above: Option<&Path>) -> crate::vfs::Forgotten {
        let lints = std::mem::take(&mut *self.lints.lock().unwrap_or_else(|p| p.into_inner()));
        Box::new((self.workspace.forget_loaded(keep_above), lints))
    }

    /// Whether Compose reads `path` as a compose file whatever its name:
    /// walked YAML that is linted as one. It is when `COMPOSE_FILE` in its
    /// directory's `.env` names it (`base.yaml:gpu.yaml`), or when it is an
    /// overlay of its directory's project (`gpu.yaml` beside a
    /// `compose.yaml` whose services it completes). Asked when the file is
    /// checked, so the `.env` is read once, with the directory's project;
    /// a directory of manifests alone is not probed for compose files.
    pub fn is_read_as_compose(&self, path: &Path) -> bool {
        use crate::project::discover::{compose_file_project, dir_of, overlay_of};
        compose_file_project(&self.workspace, &dir_of(path)).is_some_and(|spec| spec.names(path))
            || overlay_of(&self.workspace, path).is_some()
    }

    /// The projects `path` (a compose file) is judged in.
    pub fn projects_of(&self, path: &Path, config: &Config) -> Vec<ProjectSpec> {
        crate::project::discover::projects_of(&self.workspace, path, &config.compose_projects, &[])
    }

    /// The findings of the project `spec`, linted once per configuration
    /// of its rules.
    pub fn project_lint(&self, spec: &ProjectSpec, config: &Config) -> Arc<ProjectLint> {
        let key = (
            spec.clone(),
            config.enabled().to_vec(),
            config.rule_settings.clone(),
        );
        let slot = self
            .lints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_default()
            .clone();
        slot.get_or_init(|| {
            let project = self.workspace.project(spec);
            let diagnostics = lint_project(&project, config);
            Arc::new(ProjectLint {
                project,
                diagnostics,
            })
        })
        .clone()
    }

    /// Visits the findings that lie in compose file `path`, of every
    /// project it is judged in (a finding of two projects twice).
    pub(crate) fn for_each_finding_in(
        &self,
        path: &Path,
        config: &Config,
        mut visit: impl FnMut(&Diagnostic),
    ) {
        let wanted = normalize(path);
        for spec in self.projects_of(path, config) {
            let lint = self.project_lint(&spec, config);
            for d in &lint.diagnostics {
                if d.file
                    .as_ref()
                    .is_some_and(|f| normalize(&f.path) == wanted)
                {
                    visit(d);
                }
            }
        }
    }

    /// Every project this session linted.
    pub(crate) fn project_lints(&self) -> Vec<Arc<ProjectLint>> {
        self.lints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter_map(|slot| slot.get().cloned())
            .collect()
    }

    /// The compose project findings in files other than `linted`, by file
    /// (sorted by path, each file once): what a project's extended or
    /// included files get when only its own files were linted.
    pub fn findings_elsewhere(&self, linted: &foldhash::HashSet<PathBuf>) -> FindingsElsewhere {
        let mut found = FindingsElsewhere::default();
        for lint in self.project_lints() {
            for d in &lint.diagnostics {
                let Some(file) = &d.file else { continue };
                if linted.contains(&normalize(&file.path)) {
                    continue;
                }
                let mut d = d.clone();
                d.file = None;
                found.add(file, d);
            }
        }
        found
    }
}

/// Runs the enabled compose rules over a project.
pub(crate) fn lint_project(project: &Project, config: &Config) -> Vec<Diagnostic> {
    let cx = ComposeContext::new(project, &config.rule_settings);
    let mut diagnostics = Vec::new();
    for ((info, meta), &enabled) in rules::RULES
        .iter()
        .zip(rules::all_meta())
        .zip(config.enabled())
    {
        if !enabled || !info.check.on_compose() {
            continue;
        }
        let mut reporter = Reporter::new(info.code, meta.severity);
        info.check.run_compose(&cx, &mut reporter);
        diagnostics.extend(reporter.into_diagnostics());
    }
    note_profiles(project, &cx, &mut diagnostics);
    point_at_dotenv(project, &mut diagnostics);
    // What the `.env` sets is not the compose files' to quote.
    let hidden = hidden_values(project);
    if !hidden.is_empty() {
        for d in &mut diagnostics {
            crate::redact::redact_diagnostic(d, &hidden);
        }
    }
    // Every finding names its file.
    for d in &mut diagnostics {
        if d.file.is_none() {
            d.file = project.files.first().map(|f| f.source.clone());
        }
    }
    diagnostics
}

/// The values of the project's variables (its `.env`, an include's
/// `env_file`) that none of its files writes: a message or `inspect` may
/// not quote them (a `.env` can hold a token, or be a link to
/// `.git/config`).
pub(crate) fn hidden_values(project: &Project) -> crate::redact::Hidden {
    let in_compose_files = |value: &str| {
        project
            .files
            .iter()
            .any(|f| f.role != crate::project::FileRole::Env && f.source.text.contains(value))
    };
    let values = project
        .env
        .iter()
        .filter_map(|(name, var)| match &var.value {
            crate::project::env::Value::Known(value) if !in_compose_files(value) => {
                Some((name.to_string(), value.clone()))
            }
            _ => None,
        });
    // And every value an env file writes, as written, whether or not
    // Compose could read the line (a refused line is quoted in the
    // refusal, and framed): its text is no more the compose files' to show.
    let raw: Vec<(String, String)> = project
        .files
        .iter()
        .filter(|f| f.role == crate::project::FileRole::Env)
        .flat_map(|f| crate::project::env::raw_values(&f.source.text))
        .filter(|(_, value)| !in_compose_files(value))
        .collect();
    let values: Vec<(String, String)> = values.chain(raw).collect();
    crate::redact::Hidden::values_not_in(values.iter().map(|(n, v)| (n.as_str(), v.as_str())), "")
}

/// A finding about a service behind `profiles:` says so: the service is
/// linted like any other, but runs only with `--profile` (or
/// `COMPOSE_PROFILES`) naming one of them. When `COMPOSE_PROFILES` in the
/// project's `.env` enables one, a plain `docker compose up` starts it:
/// the note says that instead, with the `.env` line as a related span.
fn note_profiles(project: &Project, cx: &ComposeContext, diagnostics: &mut [Diagnostic]) {
    for service in project.services.iter().filter(|s| !s.profiles.is_empty()) {
        let profiles = service
            .profiles
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let plural = if service.profiles.len() == 1 { "" } else { "s" };
        let enabled = project
            .profiles
            .iter()
            .find(|p| *p == "*" || service.profiles.contains(p));
        let (said, related) = match (enabled, project.env.get("COMPOSE_PROFILES")) {
            (Some(profile), Some(var)) => {
                let list = project.profiles.join(",");
                (
                    format!(
                        "`{}` is in profile{plural} {profiles}: `COMPOSE_PROFILES={list}` in the project's .env enables `{profile}`, so `docker compose up` starts it",
                        service.name
                    ),
                    env_label(
                        project,
                        var,
                        format!("`COMPOSE_PROFILES={list}` enables profile `{profile}`"),
                    ),
                )
            }
            _ => (
                format!(
                    "`{}` is in profile{plural} {profiles}: it runs with `docker compose --profile {}`",
                    service.name, service.profiles[0]
                ),
                None,
            ),
        };
        // The findings inside any of the service's definitions.
        let scopes: Vec<(Arc<SourceFile>, crate::text::TextRange)> = service
            .definitions
            .iter()
            .map(|d| {
                let key = cx.range(d.key);
                let map = project.range(d.map);
                (
                    key.file.expect("compose spans name their file"),
                    key.range.cover(map),
                )
            })
            .collect();
        for d in diagnostics.iter_mut().filter(|d| {
            scopes.iter().any(|(file, scope)| {
                d.file.as_ref().is_some_and(|f| Arc::ptr_eq(f, file))
                    && d.range.start >= scope.start
                    && d.range.end <= scope.end
            })
        }) {
            d.note = Some(match d.note.take() {
                Some(note) => format!("{note}; {said}").into(),
                None => said.as_str().into(),
            });
            d.related.extend(related.clone());
        }
    }
}

/// A related span at the `.env` line that sets a variable.
fn env_label(
    project: &Project,
    var: &crate::project::env::Var,
    message: String,
) -> Option<crate::diagnostic::Label> {
    let index = project.file_index(&var.file)?;
    Some(crate::diagnostic::Label {
        range: var.range,
        message,
        file: Some(project.file(index).source.clone()),
    })
}

/// A finding whose value is interpolated from the project's `.env` points
/// at the line of `.env` that decides it.
fn point_at_dotenv(project: &Project, diagnostics: &mut [Diagnostic]) {
    if project.env.is_empty() {
        return;
    }
    for d in diagnostics.iter_mut() {
        let Some(file) = &d.file else { continue };
        let Some(written) = file.text.get(d.range.start as usize..d.range.end as usize) else {
            continue;
        };
        let mut rest = written;
        let mut named: Vec<&str> = Vec::new();
        while let Some(at) = rest.find('$') {
            let after = rest[at + 1..].trim_start_matches('{');
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if len > 0 && !named.contains(&&after[..len]) {
                named.push(&after[..len]);
            }
            rest = &after[len..];
        }
        let mut labels = Vec::new();
        for name in named {
            let Some(var) = project.env.get(name) else {
                continue;
            };
            let shown = match &var.value {
                crate::project::env::Value::Known(value) => format!("`{name}={value}`"),
                crate::project::env::Value::Unknown(_) => format!("`{name}`"),
            };
            labels.extend(env_label(
                project,
                var,
                format!("{shown} in the project's .env decides this value"),
            ));
        }
        d.related.extend(labels);
    }
}

/// A session's files with one of them replaced by a buffer.
struct Layered {
    under: Arc<Workspace>,
    path: PathBuf,
    text: String,
}

impl Layered {
    fn is_buffer(&self, path: &Path) -> bool {
        normalize(path) == self.path
    }
}

impl System for Layered {
    fn read(&self, path: &Path) -> FileRead {
        if self.is_buffer(path) {
            return Ok((
                self.text.clone(),
                Some(crate::vfs::buffer_stamp(&self.text)),
            ));
        }
        match self.under.files.read(path) {
            Ok(text) => Ok((text.source.text.clone(), text.stamp)),
            Err(failure) => Err((failure.0.clone(), failure.1.clone())),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        self.is_buffer(path) || self.under.files.is_file(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        !self.is_buffer(path) && self.under.files.is_dir(path)
    }

    fn canonicalize(&self, path: &Path) -> Option<PathBuf> {
        self.under
            .files
            .canonicalize(path)
            .or_else(|| self.is_buffer(path).then(|| normalize(path)))
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        if self.is_buffer(path) {
            return Some(crate::vfs::buffer_stamp(&self.text));
        }
        self.under.files.stamp(path)
    }

    fn list_files(&self, dir: &Path) -> Option<Vec<std::ffi::OsString>> {
        let mut names = self.under.files.list_files(dir);
        if self.path.parent().map(normalize).as_deref() == Some(&normalize(dir))
            && let Some(name) = self.path.file_name()
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_os_string());
        }
        Some(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::MemoryFs;

    fn session(files: &[(&str, &str)]) -> Session {
        Session::new(MemoryFs::new(
            files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())),
        ))
    }

    fn lint(session: &Session, path: &str) {
        let path = Path::new(path);
        let (text, _) = session.read(path).unwrap();
        session.lint_text(&text, path, &Config::default()).unwrap();
    }

    #[test]
    fn a_project_takes_the_parse_its_file_was_linted_with() {
        let session = session(&[(
            "/p/compose.yaml",
            "services:\n  t:\n    image: x\n    gpus: all\n",
        )]);
        let path = Path::new("/p/compose.yaml");
        let (text, _) = session.read(path).unwrap();
        let source = session.source_as(path, &text).expect("the session's text");
        // What the lint of a compose file hands over before its projects
        // are loaded: the loader takes it instead of parsing again.
        let linted = Arc::new(crate::syntax::yaml::Yaml::parse(&text));
        session.workspace().share_yaml(&source, linted.clone());
        let config = Config::default();
        let spec = session.projects_of(path, &config).remove(0);
        let project = session.project_lint(&spec, &config).project.clone();
        let loaded = project.files[0].parsed.as_ref().expect("parsed");
        assert!(Arc::ptr_eq(&linted, loaded));
        // And the lint hands its parse over: the project it then asks for
        // reads the parse kept for the text.
        let session = self::session(&[("/p/compose.yaml", &text)]);
        lint(&session, "/p/compose.yaml");
        let source = session.source_as(path, &text).unwrap();
        let project = &session.project_lints()[0].project;
        let loaded = project.files[0].parsed.as_ref().expect("parsed");
        assert!(Arc::ptr_eq(&session.workspace().yaml(&source), loaded));
    }

    #[test]
    fn a_dockerfile_model_is_kept_with_the_files_until_they_are_forgotten() {
        let session = session(&[
            ("/p/Dockerfile", "FROM nvcr.io/nvidia/pytorch:24.01-py3\n"),
            ("/p/compose.yaml", "services:\n  t:\n    build: .\n"),
            ("/q/Dockerfile", "FROM nvcr.io/nvidia/pytorch:24.01-py3\n"),
        ]);
        for path in ["/p/Dockerfile", "/q/Dockerfile"] {
            lint(&session, path);
        }
        let sources: Vec<_> = ["/p/Dockerfile", "/q/Dockerfile"]
            .iter()
            .map(|path| {
                let (text, _) = session.read(Path::new(path)).unwrap();
                session.source_as(Path::new(path), &text).unwrap()
            })
            .collect();
        let kept = |source| session.workspace().parsed_dockerfile(source).is_some();
        // Linted before the project that builds it, and kept for it (and
        // for any other: asking whether one does cost more than the parse).
        assert!(sources.iter().all(kept));
        // `check` forgets them with the chunk of files they were read in.
        drop(session.forget_loaded(None));
        assert!(!sources.iter().any(kept));
    }
}
