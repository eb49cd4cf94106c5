//! `gpulint check`: gathers the files (standard input, or the paths walked
//! with their configurations), lints or fixes each, then prints what was
//! found and sets the exit status.

use super::report::{FixAction, FixTally, Outcome, Totals, diff_line};
use super::sinks::{Render, Rendered, Sink};
use super::{
    CheckArgs, ColorChoice, EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, FailOn, load_fixed_config,
    paths_or_current, read_target, usage_error,
};
use crate::engine::config::{Config, validate_selector};
use crate::engine::discover::{ConfigResolver, Target, discover_with};
use crate::engine::fix::{self, FixMode};
use crate::engine::{self, FileError, FileKind, FileReport, Scope, Session, Skip};
use crate::output::escape::{human, human_path};
use crate::output::{OutputFormat, text};
use crate::vfs::Stamp;
use rayon::prelude::*;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

mod emit;
mod overlays;
use emit::*;
use overlays::Overlays;

/// A file's report plus what fixing it did.
struct Checked {
    report: FileReport,
    fixing: Option<Fixing>,
}

struct Fixing {
    original: String,
    outcome: fix::FixOutcome,
    /// Why the fixed text could not be written (`--fix` only).
    unwritten: Option<String>,
}

/// The arguments of a run, validated.
struct Plan {
    /// The files are read from disk, once per run.
    session: Session,
    resolver: ConfigResolver,
    paths: Vec<PathBuf>,
    reads_stdin: bool,
    action: FixAction,
    mode: FixMode,
    /// What the run's kustomize builds found, once they are built.
    overlays: std::sync::OnceLock<Overlays>,
}

impl Plan {
    fn of(args: &CheckArgs) -> Result<Plan, String> {
        for selector in args.select.iter().flatten().chain(&args.ignore) {
            validate_selector(selector)?;
        }
        let fixed = load_fixed_config(args.config.as_deref())?;
        let resolver = ConfigResolver::new(fixed, args.select.clone(), args.ignore.clone());
        let paths = paths_or_current(args.paths.clone());
        let reads_stdin = paths.iter().any(|p| p.as_os_str() == "-");
        if reads_stdin && paths.len() > 1 {
            return Err("`-` (standard input) cannot be combined with other paths".into());
        }
        if reads_stdin && args.add_noqa.is_some() {
            return Err("`--add-noqa` edits files; it cannot read standard input".into());
        }
        if let Some(reason) = &args.add_noqa {
            crate::engine::noqa::check_reason(reason).map_err(|e| format!("--add-noqa: {e}"))?;
        }
        let action = if args.fix {
            FixAction::Apply
        } else if args.diff {
            FixAction::Diff
        } else {
            FixAction::Report
        };
        Ok(Plan {
            session: Session::on_disk(),
            resolver,
            paths,
            reads_stdin,
            action,
            mode: FixMode {
                unsafe_fixes: args.unsafe_fixes,
            },
            overlays: std::sync::OnceLock::new(),
        })
    }
}

/// What fixing did across the run.
#[derive(Default)]
struct Fixed {
    tally: FixTally,
    /// Every file's changes as one unified diff, when it is not streamed to
    /// stdout (fixing standard input prints the fixed text instead).
    diff: String,
}

pub(super) fn check(args: CheckArgs) -> u8 {
    let mut plan = match Plan::of(&args) {
        Ok(plan) => plan,
        Err(e) => return usage_error(e),
    };
    if args.show_settings {
        return super::show::show_settings(&plan.paths[0], &plan.resolver);
    }
    if args.show_files {
        if plan.reads_stdin {
            return usage_error("`--show-files` lists files; it cannot read standard input");
        }
        return super::show::show_files(&plan.session, &plan.paths, &plan.resolver);
    }
    // Discovery before anything is written: a report file must not be one
    // of the files the run reads.
    let discovered = (!plan.reads_stdin)
        .then(|| discover_with(&plan.session.workspace().files, &plan.paths, &plan.resolver));
    if let Some((targets, _)) = &discovered
        && let Err(e) = refuse_inputs_as_reports(&args, &plan, targets)
    {
        return usage_error(e);
    }
    let noqa_errors = if let Some(reason) = &args.add_noqa {
        let errors = super::noqa::add_noqa(&plan.session, &plan.paths, &plan.resolver, reason);
        // The files now hold the comments: the check that follows reads
        // them again, in a session of its own.
        plan.session = Session::on_disk();
        errors
    } else {
        Vec::new()
    };
    let mut emitter = Emitter::new(&args, &plan);
    for line in &noqa_errors {
        emitter.problem(line.clone());
    }
    if plan.reads_stdin {
        match check_stdin(&args, &plan) {
            Ok(checked) => emitter.file(checked),
            Err(e) => return usage_error(e),
        }
    } else if let Some(discovered) = discovered {
        check_paths(&plan, &mut emitter, discovered);
    }
    let status = emitter.finish(&args, &plan, !noqa_errors.is_empty());
    // The process ends with this run: what the session still holds need
    // not be freed piece by piece.
    std::mem::forget(plan);
    status
}

/// Checks standard input as the file `--stdin-filename` names.
fn check_stdin(args: &CheckArgs, plan: &Plan) -> Result<Checked, String> {
    let name = args
        .stdin_filename
        .clone()
        .unwrap_or_else(|| PathBuf::from("-"));
    let mut bytes = Vec::new();
    // The limit files have: a bigger input is refused, not held in memory.
    let limit = engine::MAX_FILE_SIZE;
    std::io::stdin()
        .lock()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    if bytes.len() as u64 > limit {
        let error = FileError::new(format!(
            "standard input is too large (over {limit} bytes; gpulint reads at most {limit})"
        ));
        return Ok(Checked {
            report: FileReport::failed(name, String::new(), error),
            fixing: None,
        });
    }
    let config = plan.resolver.for_file(&name).map_err(|e| e.to_string())?;
    Ok(match engine::decode(bytes) {
        Ok(text) => plan
            .check_one(name, text, &config, Source::Stdin, Scope::Any)
            .expect("every file is in Scope::Any"),
        Err((error, text)) => Checked {
            report: FileReport::failed(name, text, error),
            fixing: None,
        },
    })
}

/// How many files each thread checks between two clearings of the
/// session's caches: enough to keep every thread busy, a project's files
/// together and each kind's run of files long (see [`kind_order`]), few
/// enough that memory stays small. On two threads and the 96,000-file
/// bench tree, 128 files a chunk peaked at 43 MiB, as 64 did, and ran 4%
/// faster on 6,000 files; 512 held 42 MiB and ran slower than 64 before
/// chunks were checked kind by kind.
const FILES_PER_THREAD_AND_CHUNK: usize = 64;

/// How many files a chunk holds (see [`FILES_PER_THREAD_AND_CHUNK`]).
fn files_per_chunk() -> usize {
    FILES_PER_THREAD_AND_CHUNK * rayon::current_num_threads().max(2)
}

/// Walks the paths and checks every file found, in parallel, a chunk of
/// files at a time in path order: each chunk's reports are emitted while
/// the next chunk is checked, and once a chunk is checked the session
/// forgets the texts, parses and projects it loaded, so memory is bounded
/// by a chunk, not by the tree. A project whose files fall in two chunks
/// is loaded in each, as it would be by two runs; a chunk ends only where
/// the directory changes, so that is rare.
fn check_paths(
    plan: &Plan,
    emitter: &mut Emitter,
    (targets, errors): (Vec<Target>, Vec<crate::engine::discover::DiscoveryError>),
) {
    emitter.unchecked += errors.len();
    // A file under a configuration that does not load is reported by
    // discovery with the configuration's error: that error is said once
    // for the configuration, not once per file under it.
    let mut config_errors: Vec<String> = Vec::new();
    let mut errors: Vec<String> = errors
        .into_iter()
        .filter_map(|e| {
            if let Err(config) = plan.resolver.for_file(&e.path)
                && config.0 == e.message
            {
                config_errors.push(format!("gpulint: error: {}", human(&config.0)));
                return None;
            }
            Some(format!(
                "{}: error: {}",
                human_path(&e.path),
                human(&e.message)
            ))
        })
        .collect();
    config_errors.sort();
    config_errors.dedup();
    errors.sort();
    for line in config_errors.into_iter().chain(errors) {
        emitter.problem(line);
    }
    plan.session.set_checked_files(
        targets
            .iter()
            .filter(|t| t.skip.is_none())
            .map(|t| t.path.clone()),
    );
    let _ = plan.overlays.set(Overlays::build(plan, &targets));
    if targets.len() <= 1 {
        // One file (what pre-commit and editors often pass) is not worth
        // starting the thread pool for.
        check_chunks(plan, &targets, emitter);
    } else {
        // On a thread of the pool, so that the thread emitting each chunk
        // checks the next one too, instead of sleeping until it is done.
        rayon::scope(|_| check_chunks(plan, &targets, emitter));
    }
}

/// Refuses an `--output-file` that is one of the files the run reads (a
/// path named or walked, the `--config` file, and every file of the compose
/// projects the run's compose files are judged in: `.env`, `env_file`s,
/// `include`d and `extends` files): creating the report would truncate it
/// before it is read. Compared by what the paths are (device and inode,
/// through links), then by their canonical paths.
fn refuse_inputs_as_reports(
    args: &CheckArgs,
    plan: &Plan,
    targets: &[Target],
) -> Result<(), String> {
    // Only an existing file can be an input: nothing to load otherwise.
    if !args.output_file.iter().any(|f| f.path.exists()) {
        return Ok(());
    }
    // The projects are loaded here once, and the session keeps them for
    // the check itself.
    let project_files: Vec<PathBuf> = targets
        .iter()
        .filter(|t| !t.manifest_only && FileKind::of(&t.path) == FileKind::Yaml)
        .filter_map(|t| Some((t, plan.resolver.for_file(&t.path).ok()?)))
        .flat_map(|(t, config)| {
            plan.session
                .projects_of(&t.path, &config)
                .into_iter()
                .flat_map(|spec| {
                    let lint = plan.session.project_lint(&spec, &config);
                    lint.project
                        .files
                        .iter()
                        .map(|f| f.source.path.clone())
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let inputs = || {
        targets
            .iter()
            .map(|t| t.path.as_path())
            .chain(plan.paths.iter().map(PathBuf::as_path))
            .chain(args.config.as_deref())
            .chain(project_files.iter().map(PathBuf::as_path))
    };
    for file in &args.output_file {
        let Ok(report) = std::fs::metadata(&file.path) else {
            // Not there yet: no input can be it.
            continue;
        };
        let canonical = file.path.canonicalize().ok();
        let same = |input: &Path| {
            std::fs::metadata(input).is_ok_and(|m| same_file(&m, &report))
                || (canonical.is_some() && input.canonicalize().ok() == canonical)
        };
        if let Some(input) = inputs().find(|input| same(input)) {
            return Err(format!(
                "--output-file {} is {}, which this run reads: writing the report would destroy it; name another file",
                human_path(&file.path),
                if input == file.path {
                    "an input".to_string()
                } else {
                    format!("the input {}", human_path(input))
                }
            ));
        }
    }
    Ok(())
}

/// Whether two metadata are of one file.
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    false
}

/// What checking one file gave: its report, rendered for each destination
/// by the worker that checked it; `None` when it is not gpulint's.
type Done = Result<Option<(Checked, Vec<Rendered>)>, String>;

/// Checks `targets` chunk by chunk (see [`check_paths`]), emitting each
/// chunk's reports while the next chunk is checked.
fn check_chunks(plan: &Plan, targets: &[Target], emitter: &mut Emitter) {
    let renders = emitter.renders();
    let check = |t: &Target| -> Done {
        let checked = check_target(t, plan)?;
        Ok(checked.map(|c| {
            let rendered: Vec<Rendered> = renders.iter().map(|r| r.file(&c.report)).collect();
            (c, rendered)
        }))
    };
    let mut linted = vec![false; targets.len()];
    // The compose project findings in files no chunk linted so far,
    // gathered before each chunk's projects are forgotten.
    let mut elsewhere = crate::engine::FindingsElsewhere::default();
    let mut checked_before: Vec<Done> = Vec::new();
    // What the session loaded for the chunk before: freed beside the next
    // chunk's check, by the thread that emits, so that memory stays bounded
    // by a chunk on one thread too (a spawned drop waits for an idle
    // thread, and one thread is never idle before the end).
    let mut forgotten_before: Option<crate::vfs::Forgotten> = None;
    let mut start = 0;
    while start < targets.len() {
        let end = chunk_end(targets, start);
        let chunk = &targets[start..end];
        let mut emit_before = || {
            emit_chunk(emitter, std::mem::take(&mut checked_before));
            drop(forgotten_before.take());
        };
        let order = kind_order(chunk);
        let check_in_kind_order = || -> Vec<Done> {
            let by_kind: Vec<Done> = if rayon::current_thread_index().is_none() {
                order.iter().map(|&i| check(&chunk[i])).collect()
            } else {
                order.par_iter().map(|&i| check(&chunk[i])).collect()
            };
            in_path_order(&order, by_kind)
        };
        let results: Vec<Done> = if rayon::current_thread_index().is_none() {
            // Outside the pool (a single file): one after the other.
            emit_before();
            check_in_kind_order()
        } else {
            rayon::join(emit_before, check_in_kind_order).1
        };
        let mut linted_here = foldhash::HashSet::default();
        for (i, result) in (start..end).zip(&results) {
            if let Ok(Some((c, _))) = result {
                linted[i] = true;
                linted_here.insert(crate::vfs::normalize(&c.report.path));
            }
        }
        elsewhere.merge(plan.session.findings_elsewhere(&linted_here));
        let next_dir = targets.get(end).and_then(|t| t.path.parent());
        forgotten_before = Some(plan.session.forget_loaded(next_dir));
        checked_before = results;
        start = end;
    }
    emit_chunk(emitter, checked_before);
    let linted: foldhash::HashSet<PathBuf> = targets
        .iter()
        .zip(&linted)
        .filter(|(t, _)| elsewhere.concerns(&t.path))
        .filter(|(_, linted)| **linted)
        .map(|(t, _)| crate::vfs::normalize(&t.path))
        .collect();
    add_findings_elsewhere(plan, elsewhere, &linted, emitter);
    if let Some(overlays) = plan.overlays.get() {
        overlays.emit_elsewhere(plan, targets, emitter);
    }
}

/// The order to check a chunk's files in: its Dockerfiles, then its
/// scripts, manifests and compose files, each kind in path order. Each
/// kind runs its own parser, model and rules; a thread that checks one
/// kind after another keeps that code in its instruction cache, where
/// path order (a directory's Dockerfile, compose file and manifest in
/// turn) evicted it at every file. Reports are still emitted in path
/// order ([`in_path_order`]).
fn kind_order(chunk: &[Target]) -> Vec<usize> {
    let kind = |t: &Target| match FileKind::of(&t.path) {
        FileKind::Dockerfile => 0u8,
        FileKind::Script(_) => 1,
        FileKind::Yaml if t.manifest_only => 2,
        FileKind::Yaml => 3,
    };
    let kinds: Vec<u8> = chunk.iter().map(kind).collect();
    let mut order: Vec<usize> = (0..chunk.len()).collect();
    // Stable: path order within a kind.
    order.sort_by_key(|&i| kinds[i]);
    order
}

/// Results checked in `order` (indexes into the chunk), put back in the
/// chunk's path order.
fn in_path_order(order: &[usize], by_kind: Vec<Done>) -> Vec<Done> {
    let mut slots: Vec<Option<Done>> = (0..order.len()).map(|_| None).collect();
    for (&i, done) in order.iter().zip(by_kind) {
        slots[i] = Some(done);
    }
    slots
        .into_iter()
        .map(|done| done.expect("each file of the chunk is checked once"))
        .collect()
}

/// Emits one chunk's reports, in path order.
fn emit_chunk(emitter: &mut Emitter, results: Vec<Done>) {
    for result in results {
        match result {
            Ok(Some((c, rendered))) => emitter.rendered_file(c, rendered),
            Ok(None) => {}
            Err(e) => {
                emitter.unchecked += 1;
                emitter.problem(format!("gpulint: error: {}", human(&e)));
            }
        }
    }
    emitter.flush_stdout();
}

/// Where the chunk that starts at `start` ends: [`files_per_chunk`] files
/// on, then on to the end of that directory.
fn chunk_end(targets: &[Target], start: usize) -> usize {
    let mut end = (start + files_per_chunk()).min(targets.len());
    let dir = |t: &Target| t.path.parent().map(Path::to_path_buf);
    if end < targets.len() {
        let last = dir(&targets[end - 1]);
        while end < targets.len() && dir(&targets[end]) == last {
            end += 1;
        }
    }
    end
}

/// A compose project is linted whole when any of its files is: what its
/// lint finds in files that were not linted themselves (a file it extends
/// or includes, outside the paths given) is reported under those files,
/// once each, in path order after the files that were linted.
fn add_findings_elsewhere(
    plan: &Plan,
    elsewhere: crate::engine::FindingsElsewhere,
    linted: &foldhash::HashSet<PathBuf>,
    emitter: &mut Emitter,
) {
    for (path, (source, diagnostics)) in elsewhere.into_files() {
        if linted.contains(&path) {
            continue;
        }
        let config = match plan.resolver.for_file(&source.path) {
            Ok(config) => config,
            Err(e) => {
                emitter.problem(format!("gpulint: error: {e}"));
                continue;
            }
        };
        let diagnostics = plan.session.finish_elsewhere(&source, diagnostics, &config);
        if diagnostics.is_empty() {
            continue;
        }
        // Named as a path, not as the project that reached it first
        // (`svc/a/../../shared/base.yaml`): several may have, in any order.
        emitter.file(Checked {
            report: FileReport::new(path, source.text.clone(), diagnostics),
            fixing: None,
        });
    }
}

/// Checks one discovered file; `None` for one that is not gpulint's (walked
/// YAML that is no manifest or cannot be read), an error when its
/// configuration does not load.
fn check_target(t: &Target, plan: &Plan) -> Result<Option<Checked>, String> {
    let overlays = plan.overlays.get();
    if let Some(skip) = &t.skip {
        if let Some(overlays) = overlays
            && let Some(checked) = overlays.check_patch(t, plan)?
        {
            return Ok(Some(checked));
        }
        let skip = match (skip, overlays) {
            (Skip::Kustomize { kustomization, .. }, Some(overlays)) => Skip::Kustomize {
                kustomization: kustomization.clone(),
                why: overlays
                    .failed
                    .get(&crate::vfs::normalize(kustomization))
                    .cloned(),
            },
            _ => skip.clone(),
        };
        let error = FileError {
            skip: Some(skip),
            ..FileError::new("part of a kustomize overlay")
        };
        return Ok(Some(Checked {
            report: FileReport::failed(t.path.clone(), String::new(), error),
            fixing: None,
        }));
    }
    let config = plan.resolver.for_file(&t.path).map_err(|e| e.to_string())?;
    let Some(read) = read_target(&plan.session, t) else {
        return Ok(None);
    };
    Ok(match read {
        Ok((text, stamp)) => {
            let scope = scope_of(t, &plan.session);
            let from = Source::File {
                stamp: stamp.filter(crate::vfs::Stamp::is_disk),
            };
            let checked = plan.check_one(t.path.clone(), text, &config, from, scope);
            match (checked, overlays) {
                (Some(checked), Some(overlays)) => Some(overlays.add_to(checked, plan, &config)),
                (checked, _) => checked,
            }
        }
        Err((error, text)) => Some(Checked {
            report: FileReport::failed(t.path.clone(), text, error.into()),
            fixing: None,
        }),
    })
}

/// Whether [`print_file_problems`] has anything to say about `c`.
fn has_file_problems(c: &Checked) -> bool {
    c.report.error.is_some()
        || c.fixing
            .as_ref()
            .is_some_and(|f| !f.outcome.failed.is_empty() || f.outcome.unsettled > 0)
}

/// On stderr, as the file is emitted: why it could not be checked, and
/// the fixes that were not applied.
fn print_file_problems(c: &Checked) {
    let mut stderr = std::io::stderr().lock();
    if let Some(error) = &c.report.error {
        let _ = writeln!(stderr, "{}", text::file_error_line(&c.report, error));
    }
    if let Some(fixing) = &c.fixing {
        let original = FileReport::new(c.report.path.clone(), fixing.original.clone(), Vec::new());
        for failed in &fixing.outcome.failed {
            let _ = writeln!(
                stderr,
                "{}: warning: the {} fix \"{}\" was not applied: {}; the finding is left for you to fix by hand",
                text::location(&original, failed.offset),
                failed.code,
                human(&failed.title),
                human(&failed.reason)
            );
        }
        if fixing.outcome.unsettled > 0 {
            let _ = writeln!(
                stderr,
                "{}: warning: {} not applied: gpulint stops fixing a file after {} passes; run it again to apply them",
                text::location(&original, 0),
                if fixing.outcome.unsettled == 1 {
                    "1 more fix was".to_string()
                } else {
                    format!("{} more fixes were", fixing.outcome.unsettled)
                },
                fixing.outcome.passes
            );
        }
    }
}

/// The report on stdout: the diff with `--diff`, the fixed text when fixing
/// standard input, the report in the terminal's format otherwise.
fn print_outcome(
    args: &CheckArgs,
    plan: &Plan,
    outcome: &Outcome,
    fixed: &Fixed,
    report_end: &[u8],
) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    if plan.action == FixAction::Diff {
        // The diff alone goes to stdout, so it can be piped into `git apply`.
        // (Streamed file by file when checking paths; held for stdin.)
        let written = stdout.write_all(fixed.diff.as_bytes());
        if !args.quiet {
            eprintln!("{}", diff_line(&fixed.tally, plan.mode));
        }
        written
    } else if plan.reads_stdin && plan.action == FixAction::Apply {
        // Like a formatter: the fixed text on stdout, what is left on stderr.
        let report = &outcome.reports[0];
        let mut stderr = std::io::stderr().lock();
        for d in &report.diagnostics {
            let _ = writeln!(stderr, "{}", text::concise(report, d));
        }
        stdout.write_all(report.text.as_bytes())
    } else {
        // The end of the terminal's report: its footer, or the whole of a
        // whole-run format's document.
        stdout.write_all(report_end).and_then(|()| stdout.flush())
    }
}

/// Which files of its kind a discovered target is linted as.
fn scope_of(target: &Target, session: &Session) -> Scope {
    // A file Compose reads as a compose file (named by `COMPOSE_FILE`, an
    // overlay) is linted as one, whatever its name.
    if target.manifest_only && !session.is_read_as_compose(&target.path) {
        Scope::ManifestsOnly
    } else {
        Scope::Any
    }
}

/// Where a linted text came from.
#[derive(Clone, Copy)]
enum Source {
    /// A file; `stamp` is set when the text is what it held on disk then.
    File { stamp: Option<Stamp> },
    /// Standard input: its fixed text goes to stdout, not to a file.
    Stdin,
}

impl Plan {
    /// Lints one file's text, fixing it first when asked; `None` when it is
    /// outside `scope`.
    fn check_one(
        &self,
        path: PathBuf,
        text: String,
        config: &Config,
        from: Source,
        scope: Scope,
    ) -> Option<Checked> {
        if self.action == FixAction::Report {
            // Plain checking decides the scope on the parse it lints. Only a
            // text that is the file on disk may stand in for it when a
            // compose file builds it (fixing lints texts that are not on disk).
            let stamp = match from {
                Source::File { stamp } => stamp,
                Source::Stdin => None,
            };
            let report = self
                .session
                .check_text_in_scope(path, text, stamp, config, scope);
            return report.map(|report| Checked {
                report,
                fixing: None,
            });
        }
        if scope == Scope::ManifestsOnly && !engine::is_manifest_candidate(&text) {
            return None;
        }
        let write = matches!(from, Source::File { .. });
        Some(self.fix_one(path, text, config, write))
    }

    /// Fixes one file's text (or prints the diff), and reports what remains.
    fn fix_one(&self, path: PathBuf, text: String, config: &Config, write: bool) -> Checked {
        let session = &self.session;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fix::fix_text_in(session, &text, &path, config, self.mode)
        }));
        let outcome = match outcome {
            Ok(Ok(outcome)) => outcome,
            // Not YAML, a template, or a crash: report it as plain checking does.
            Ok(Err(_)) | Err(_) => {
                return Checked {
                    report: session.check_text(path, text, config),
                    fixing: None,
                };
            }
        };
        if self.action == FixAction::Diff {
            // The diff goes to stdout; report files still list the findings.
            let report = FileReport::new(path, text.clone(), outcome.found.clone());
            return Checked {
                report,
                fixing: Some(Fixing {
                    original: text,
                    outcome,
                    unwritten: None,
                }),
            };
        }
        if write
            && outcome.changed(&text)
            && let Err(reason) =
                crate::engine::write::write_fixed(&path, &text, &outcome.fixed_text)
        {
            // The file keeps its findings, and says why their fixes are not in it.
            let mut report = FileReport::new(path, text.clone(), outcome.found.clone());
            report.error = Some(FileError::new(format!("cannot write the fixes: {reason}")));
            return Checked {
                report,
                fixing: Some(Fixing {
                    original: text,
                    outcome,
                    unwritten: Some(reason),
                }),
            };
        }
        let report = FileReport::new(path, outcome.fixed_text.clone(), outcome.remaining.clone());
        Checked {
            report,
            fixing: Some(Fixing {
                original: text,
                outcome,
                unwritten: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str, manifest_only: bool) -> Target {
        Target {
            path: PathBuf::from(path),
            explicit: false,
            manifest_only,
            skip: None,
        }
    }

    #[test]
    fn a_chunk_is_checked_kind_by_kind_and_reported_in_path_order() {
        let chunk = [
            target("a/Dockerfile", false),
            target("a/compose.yaml", false),
            target("a/deploy.yaml", true),
            target("a/run.sh", false),
            target("b/Dockerfile", false),
            target("b/compose.yaml", false),
        ];
        let order = kind_order(&chunk);
        // Dockerfiles, scripts, manifests, compose files; path order within.
        assert_eq!(order, [0, 4, 3, 2, 1, 5]);
        let by_kind: Vec<Done> = order
            .iter()
            .map(|&i| Err(chunk[i].path.display().to_string()))
            .collect();
        let back: Vec<String> = in_path_order(&order, by_kind)
            .into_iter()
            .map(|done| match done {
                Err(path) => path,
                Ok(_) => unreachable!("only errors were put in"),
            })
            .collect();
        let paths: Vec<String> = chunk.iter().map(|t| t.path.display().to_string()).collect();
        assert_eq!(back, paths);
    }
}
