//! The command line: `gpulint check`, `gpulint rule`.

use crate::engine::build::{DiskStamp, linting_text_read_from_disk};
use crate::engine::config::{Config, validate_selector};
use crate::engine::discover::{ConfigResolver, Target, discover};
use crate::engine::fix::{self, FixMode};
use crate::engine::{self, FileError, FileReport, Scope, Skip};
use crate::fix::Applicability;
use crate::output::{OutputFormat, Summary, github, gitlab, json, junit, sarif, text};
use crate::rules::RuleCode;
use clap::{Parser, Subcommand};
use rayon::prelude::*;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

/// Exit codes: 0 clean, 1 findings, 2 usage, configuration or I/O errors.
pub const EXIT_CLEAN: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "gpulint",
    version,
    about = "Lint container configs for GPU and distributed-training misconfigurations"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lint compose files, Kubernetes manifests and Dockerfiles (directories are searched, honouring .gitignore).
    Check(CheckArgs),
    /// Show the run-time settings gpulint derives for each compose service and
    /// Kubernetes container: /dev/shm size and where it comes from, IPC mode,
    /// GPUs, ulimits, NCCL/CUDA environment.
    Inspect(InspectArgs),
    /// Run the language server on stdin/stdout (for editors).
    Server,
    /// Explain a rule, or list them all.
    Rule {
        /// A rule code such as SHM001.
        code: Option<String>,
        /// List every rule.
        #[arg(long, conflicts_with = "code")]
        all: bool,
    },
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Files or directories to lint; `-` reads standard input. Default: `.`.
    paths: Vec<PathBuf>,
    /// Use this configuration file instead of the nearest gpulint.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The report's format (on the terminal, and in `--output-file`s without one).
    #[arg(long, value_enum, default_value = "text")]
    output_format: OutputFormat,
    /// Also write a report to PATH, in FORMAT or else in `--output-format`
    /// (the terminal then shows text). Repeatable: `--output-file sarif:gpulint.sarif`.
    #[arg(long, value_name = "[FORMAT:]PATH", value_parser = parse_report_file)]
    output_file: Vec<ReportFile>,
    /// The lowest severity that makes the exit status 1: info (any finding),
    /// warning, error, or never. Errors in files or configuration still exit 2.
    #[arg(long, value_enum, default_value = "info")]
    fail_on: FailOn,
    /// Only print findings and errors: no summary line.
    #[arg(short, long)]
    quiet: bool,
    /// The file name to report (and match config against) for `-`.
    #[arg(long)]
    stdin_filename: Option<PathBuf>,
    /// Rule codes or prefixes to enable (comma-separated), replacing config's `select`.
    #[arg(long, value_delimiter = ',')]
    select: Option<Vec<String>>,
    /// Rule codes or prefixes to disable (comma-separated).
    #[arg(long, value_delimiter = ',')]
    ignore: Vec<String>,
    /// Color the text output: auto, always or never.
    #[arg(long, default_value = "auto")]
    color: ColorChoice,
    /// Apply safe fixes (each verified before it is written), then report what is left.
    /// With `-`, print the fixed text on stdout.
    #[arg(long, conflicts_with = "diff")]
    fix: bool,
    /// Print the fixes as one unified diff (for `git apply` or `patch -p1`); write nothing.
    /// Exits 1 when the diff is not empty.
    #[arg(long)]
    diff: bool,
    /// Also apply unsafe fixes with `--fix` or `--diff`.
    #[arg(long)]
    unsafe_fixes: bool,
    /// Suppress every current finding with a `# gpulint: ignore[CODE]`
    /// comment whose reason is a TODO, then report what is left (to adopt
    /// gpulint now and fix the findings later). Each file is verified before
    /// it is written.
    #[arg(long, conflicts_with_all = ["fix", "diff"])]
    add_noqa: bool,
    /// Print how many findings each rule has, instead of the findings.
    #[arg(long)]
    statistics: bool,
}

#[derive(Debug, clap::Args)]
struct InspectArgs {
    /// Files or directories to inspect. Default: `.`.
    paths: Vec<PathBuf>,
    /// Use this configuration file instead of the nearest gpulint.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// `text` (a table) or `json` (schema version 1, see README).
    #[arg(long, value_enum, default_value = "text")]
    format: InspectFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum InspectFormat {
    Text,
    Json,
}

/// Where `--output-file` writes a report, and in which format (`None`:
/// the one `--output-format` names).
#[derive(Debug, Clone)]
struct ReportFile {
    format: Option<OutputFormat>,
    path: PathBuf,
}

/// `[FORMAT:]PATH`. Only a known format name before the first `:` counts
/// as one, so `C:\\out.sarif` and `dir:x/out.json` stay paths.
fn parse_report_file(value: &str) -> Result<ReportFile, String> {
    let (format, path) = match value.split_once(':') {
        Some((name, path)) if OutputFormat::parse(name).is_some() => {
            (OutputFormat::parse(name), path)
        }
        _ => (None, value),
    };
    if path.is_empty() {
        return Err("the report path is empty".to_string());
    }
    Ok(ReportFile {
        format,
        path: PathBuf::from(path),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FailOn {
    Info,
    Warning,
    Error,
    Never,
}

impl FailOn {
    fn fails(self, summary: &Summary) -> bool {
        match self {
            FailOn::Info => summary.findings() > 0,
            FailOn::Warning => summary.errors + summary.warnings > 0,
            FailOn::Error => summary.errors > 0,
            FailOn::Never => false,
        }
    }
}

/// What `check` does with fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FixAction {
    Report,
    Apply,
    Diff,
}

/// A file's report plus what fixing it did.
struct Checked {
    report: FileReport,
    fixing: Option<Fixing>,
}

struct Fixing {
    original: String,
    outcome: fix::FixOutcome,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

pub fn run() -> u8 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_CLEAN
            };
        }
    };
    match cli.command {
        Command::Check(args) => check(args),
        Command::Rule { code, all } => rule(code, all),
        Command::Inspect(args) => inspect(args),
        Command::Server => match crate::lsp::run_stdio() {
            Ok(()) => EXIT_CLEAN,
            Err(e) => usage_error(format!("language server: {e}")),
        },
    }
}

fn usage_error(message: impl std::fmt::Display) -> u8 {
    eprintln!("gpulint: error: {message}");
    EXIT_ERROR
}

fn check(args: CheckArgs) -> u8 {
    for selector in args.select.iter().flatten().chain(&args.ignore) {
        if let Err(e) = validate_selector(selector) {
            return usage_error(e);
        }
    }
    let fixed = match load_fixed_config(args.config.as_deref()) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let resolver = ConfigResolver::new(fixed, args.select.clone(), args.ignore.clone());
    let paths = paths_or_current(args.paths.clone());
    let reads_stdin = paths.iter().any(|p| p.as_os_str() == "-");
    if reads_stdin && paths.len() > 1 {
        return usage_error("`-` (standard input) cannot be combined with other paths");
    }

    let mut noqa_errors = Vec::new();
    if args.add_noqa {
        if reads_stdin {
            return usage_error("`--add-noqa` edits files; it cannot read standard input");
        }
        noqa_errors = add_noqa(&paths, &resolver);
    }

    let action = if args.fix {
        FixAction::Apply
    } else if args.diff {
        FixAction::Diff
    } else {
        FixAction::Report
    };
    let mode = FixMode {
        unsafe_fixes: args.unsafe_fixes,
    };

    let mut checked: Vec<Checked> = Vec::new();
    let mut config_errors = Vec::new();
    // Paths that could not be read or configured: never linted, not in `checked`.
    let mut unchecked = 0usize;
    if reads_stdin {
        let name = args
            .stdin_filename
            .clone()
            .unwrap_or_else(|| PathBuf::from("-"));
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().lock().read_to_end(&mut bytes) {
            return usage_error(format!("cannot read standard input: {e}"));
        }
        let config = match resolver.for_file(&name) {
            Ok(c) => c,
            Err(e) => return usage_error(e),
        };
        checked.push(match engine::decode(bytes) {
            Ok(text) => check_one(name, text, &config, action, mode, Source::Stdin, Scope::Any)
                .expect("every file is in Scope::Any"),
            Err((error, text)) => Checked {
                report: FileReport::failed(name, text, error),
                fixing: None,
            },
        });
    } else {
        let (targets, errors) = discover(&paths, &resolver);
        unchecked += errors.len();
        config_errors.extend(
            errors
                .into_iter()
                .map(|e| format!("{}: error: {}", e.path.display(), e.message)),
        );
        let check_target = |t: &Target| -> Result<Option<Checked>, String> {
            if let Some(skip) = &t.skip {
                let error = FileError {
                    skip: Some(skip.clone()),
                    ..FileError::new("part of a kustomize overlay")
                };
                return Ok(Some(Checked {
                    report: FileReport::failed(t.path.clone(), String::new(), error),
                    fixing: None,
                }));
            }
            let config = resolver.for_file(&t.path).map_err(|e| e.to_string())?;
            let Some(read) = read_target(t) else {
                return Ok(None);
            };
            Ok(match read {
                Ok((text, stamp)) => {
                    let scope = scope_of(t);
                    let from = Source::Disk(stamp);
                    check_one(t.path.clone(), text, &config, action, mode, from, scope)
                }
                Err((error, text)) => Some(Checked {
                    report: FileReport::failed(t.path.clone(), text, error),
                    fixing: None,
                }),
            })
        };
        // One file (what pre-commit and editors often pass) is not worth
        // starting the thread pool for.
        let results: Vec<Result<Option<Checked>, String>> = if targets.len() <= 1 {
            targets.iter().map(check_target).collect()
        } else {
            targets.par_iter().map(check_target).collect()
        };
        for r in results {
            match r {
                Ok(Some(c)) => checked.push(c),
                Ok(None) => {}
                Err(e) => {
                    unchecked += 1;
                    config_errors.push(format!("gpulint: error: {e}"));
                }
            }
        }
    }
    config_errors.sort();
    config_errors.dedup();

    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let style = text::Style { color };
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    for line in config_errors.iter().chain(&noqa_errors) {
        let _ = writeln!(stderr, "{line}");
    }
    for note in skip_notes(checked.iter().map(|c| &c.report)) {
        let _ = writeln!(stderr, "{note}");
    }
    for c in &checked {
        if let Some(error) = &c.report.error {
            let _ = writeln!(stderr, "{}", text::file_error_line(&c.report, error));
        }
        if let Some(fixing) = &c.fixing {
            for failed in &fixing.outcome.failed {
                let original =
                    FileReport::new(c.report.path.clone(), fixing.original.clone(), Vec::new());
                let _ = writeln!(
                    stderr,
                    "{}: warning: the {} fix \"{}\" was not applied: {}; the finding is left for you to fix by hand",
                    text::location(&original, failed.offset),
                    failed.code,
                    failed.title,
                    failed.reason
                );
            }
        }
    }

    let applied: usize = checked
        .iter()
        .filter_map(|c| c.fixing.as_ref())
        .map(|f| f.outcome.applied.len())
        .sum();
    let fixed_files = checked
        .iter()
        .filter(|c| {
            c.fixing
                .as_ref()
                .is_some_and(|f| f.outcome.changed(&f.original))
        })
        .count();
    let diff: String = checked
        .iter()
        .filter_map(|c| Some((&c.report.path, c.fixing.as_ref()?)))
        .map(|(path, f)| {
            fix::unified_diff(
                &crate::output::shown_path(path),
                &f.original,
                &f.outcome.fixed_text,
            )
        })
        .collect();
    let reports: Vec<FileReport> = checked.into_iter().map(|c| c.report).collect();
    let summary = Summary::of(&reports);

    let terminal_format = if args.output_file.iter().any(|f| f.format.is_none()) {
        OutputFormat::Text
    } else {
        args.output_format
    };
    let outcome = Outcome {
        reports: &reports,
        summary: &summary,
        action,
        mode,
        applied,
        fixed_files,
        unchecked,
        quiet: args.quiet,
        statistics: args.statistics,
    };
    for file in &args.output_file {
        let format = file.format.unwrap_or(args.output_format);
        let report = outcome.render(format, text::Style { color: false });
        if let Err(e) = write_report(&file.path, &report) {
            let _ = writeln!(
                stderr,
                "gpulint: error: cannot write the {} report to {}: {e}",
                format.name(),
                file.path.display()
            );
            return EXIT_ERROR;
        }
    }

    let written = if action == FixAction::Diff {
        // The diff alone goes to stdout, so it can be piped into `git apply`.
        let written = stdout.write_all(diff.as_bytes());
        let _ = writeln!(
            stderr,
            "{} {} in {}.",
            if applied == 0 {
                "Nothing to fix:"
            } else {
                "Would fix"
            },
            plural(applied, "finding"),
            plural(fixed_files, "file")
        );
        written
    } else if reads_stdin && action == FixAction::Apply {
        // Like a formatter: the fixed text on stdout, what is left on stderr.
        let report = &reports[0];
        for d in &report.diagnostics {
            let _ = writeln!(stderr, "{}", text::concise(report, d));
        }
        stdout.write_all(report.text.as_bytes())
    } else {
        stdout.write_all(outcome.render(terminal_format, style).as_bytes())
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = writeln!(stderr, "gpulint: error: cannot write output: {e}");
        return EXIT_ERROR;
    }
    // A fix that could not be applied leaves its finding, which sets the
    // status like any other; the file itself was checked.
    if summary.failed_files > 0 || !config_errors.is_empty() || !noqa_errors.is_empty() {
        EXIT_ERROR
    } else if action == FixAction::Diff {
        if fixed_files > 0 && args.fail_on != FailOn::Never {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        }
    } else if args.fail_on.fails(&summary) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// What a `check` run found and fixed, to render in any format.
struct Outcome<'a> {
    reports: &'a [FileReport],
    summary: &'a Summary,
    action: FixAction,
    mode: FixMode,
    applied: usize,
    fixed_files: usize,
    /// Paths that were never linted (not found, bad configuration).
    unchecked: usize,
    quiet: bool,
    statistics: bool,
}

impl Outcome<'_> {
    fn render(&self, format: OutputFormat, style: text::Style) -> String {
        let reports = self.reports;
        match format {
            OutputFormat::Json => json::render(reports),
            OutputFormat::Github => github::render(reports),
            OutputFormat::Sarif => sarif::render(reports),
            OutputFormat::Gitlab => gitlab::render(reports),
            OutputFormat::Junit => junit::render(reports),
            OutputFormat::Concise => reports
                .iter()
                .flat_map(|r| {
                    r.diagnostics
                        .iter()
                        .map(move |d| text::concise(r, d) + "\n")
                })
                .collect(),
            OutputFormat::Text if self.statistics => {
                let mut out = statistics(reports);
                if !self.quiet {
                    out.push_str(&summary_line(
                        self.summary,
                        reports,
                        self.mode,
                        self.unchecked,
                    ));
                    out.push('\n');
                }
                out
            }
            OutputFormat::Text => {
                let mut out = String::new();
                for report in reports {
                    for d in &report.diagnostics {
                        if self.quiet {
                            out.push_str(&text::concise(report, d));
                        } else {
                            out.push_str(&text::render(report, d, style));
                        }
                        out.push('\n');
                    }
                }
                if !self.quiet {
                    if self.action == FixAction::Apply {
                        out.push_str(&format!(
                            "Fixed {} in {}.\n",
                            plural(self.applied, "finding"),
                            plural(self.fixed_files, "file")
                        ));
                    }
                    out.push_str(&summary_line(
                        self.summary,
                        reports,
                        self.mode,
                        self.unchecked,
                    ));
                    out.push('\n');
                }
                out
            }
        }
    }
}

/// `--statistics`: one line per rule code, most findings first, as
/// `COUNT  CODE  [*] summary` (`[*]`: some are fixable with `--fix`).
fn statistics(reports: &[FileReport]) -> String {
    use std::collections::BTreeMap;
    let mut counts: BTreeMap<RuleCode, (usize, bool)> = BTreeMap::new();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        let entry = counts.entry(d.code).or_default();
        entry.0 += 1;
        entry.1 |= d.fix.is_some();
    }
    let mut rows: Vec<(RuleCode, usize, bool)> = counts
        .into_iter()
        .map(|(code, (n, fixable))| (code, n, fixable))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let width = rows
        .iter()
        .map(|r| r.1.to_string().len())
        .max()
        .unwrap_or(1);
    let code_width = rows.iter().map(|r| r.0.as_str().len()).max().unwrap_or(0);
    let mut out = String::new();
    for (code, n, fixable) in rows {
        let marker = if fixable { "[*]" } else { "[ ]" };
        let summary = &crate::rules::meta(code).summary;
        out.push_str(&format!(
            "{n:>width$}\t{code:<code_width$}\t{marker} {summary}\n"
        ));
    }
    out
}

/// `--add-noqa`: adds suppression comments to every file under `paths`
/// that has findings, verified (see [`crate::engine::noqa`]), and says how
/// many on stderr. Returns the errors, one line each.
fn add_noqa(paths: &[PathBuf], resolver: &ConfigResolver) -> Vec<String> {
    let (targets, _) = discover(paths, resolver);
    let results: Vec<(PathBuf, Result<Option<crate::engine::noqa::Added>, String>)> = targets
        .par_iter()
        .filter(|t| t.skip.is_none())
        .filter_map(|t| {
            let config = match resolver.for_file(&t.path) {
                Ok(c) => c,
                // `check` reports it when it lints the file.
                Err(_) => return None,
            };
            let (text, _) = read_target(t)?.ok()?;
            if t.manifest_only && !engine::is_manifest_candidate(&text) {
                return None;
            }
            let added = crate::engine::noqa::add_noqa(&text, &t.path, &config).and_then(|a| {
                if let Some(a) = &a {
                    fix::write_fixed(&t.path, &text, &a.text)
                        .map_err(|e| format!("cannot write the comments: {e}"))?;
                }
                Ok(a)
            });
            Some((t.path.clone(), added))
        })
        .collect();
    let mut errors = Vec::new();
    let (mut comments, mut findings, mut files) = (0, 0, 0);
    for (path, result) in results {
        match result {
            Ok(Some(a)) => {
                comments += a.comments;
                findings += a.findings;
                files += 1;
            }
            Ok(None) => {}
            Err(e) => errors.push(format!("{}: error: {e}", path.display())),
        }
    }
    errors.sort();
    eprintln!(
        "Added {} for {} in {}.",
        plural(comments, "suppression comment"),
        plural(findings, "finding"),
        plural(files, "file")
    );
    errors
}

/// Writes a report file, creating its directory.
fn write_report(path: &Path, report: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, report)
}

fn inspect(args: InspectArgs) -> u8 {
    use crate::output::inspect::{Inspected, render_json, render_text};
    let fixed = match load_fixed_config(args.config.as_deref()) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let resolver = ConfigResolver::new(fixed, None, Vec::new());
    let (targets, errors) = discover(&paths_or_current(args.paths), &resolver);
    for e in &errors {
        eprintln!("{}: error: {}", e.path.display(), e.message);
    }
    let files: Vec<Inspected> = targets
        .par_iter()
        .filter(|t| t.skip.is_none())
        .filter_map(|t| {
            let read = read_target(t)?.map(|(text, _)| text);
            let (text, outcome) = match (resolver.for_file(&t.path), read) {
                (_, Ok(text)) if t.manifest_only && !engine::is_manifest_candidate(&text) => {
                    return None;
                }
                (Err(e), _) => (String::new(), Err(FileError::new(e.to_string()))),
                (Ok(_), Err((error, text))) => (text, Err(error)),
                (Ok(config), Ok(text)) => {
                    let outcome = engine::inspect_text(&text, &t.path, &config);
                    (text, outcome)
                }
            };
            Some(Inspected {
                path: t.path.clone(),
                text,
                outcome,
            })
        })
        .collect();
    let failed = !errors.is_empty()
        || files
            .iter()
            .any(|f| f.outcome.as_ref().is_err_and(|e| e.skip.is_none()));
    let rendered = match args.format {
        InspectFormat::Json => render_json(&files),
        InspectFormat::Text => render_text(&files),
    };
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(rendered.as_bytes()).is_err() {
        return EXIT_ERROR;
    }
    if failed { EXIT_ERROR } else { EXIT_CLEAN }
}

/// `--config`: the one configuration for every file, if given.
fn load_fixed_config(path: Option<&Path>) -> Result<Option<Config>, String> {
    path.map(|p| Config::load(p).map_err(|e| e.to_string()))
        .transpose()
}

/// The command-line paths, or `.` when none are given.
fn paths_or_current(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    }
}

/// A discovered file's text, or why it cannot be read; `None` for walked
/// YAML that cannot be read (and may not be ours).
fn read_target(target: &Target) -> Option<Result<(String, DiskStamp), (FileError, String)>> {
    match engine::read_source_stamped(&target.path) {
        Err(_) if target.manifest_only => None,
        read => Some(read),
    }
}

/// Which files of its kind a discovered target is linted as.
fn scope_of(target: &Target) -> Scope {
    if target.manifest_only {
        Scope::ManifestsOnly
    } else {
        Scope::Any
    }
}

/// Where a linted text came from.
#[derive(Clone, Copy)]
enum Source {
    /// A file, as it was on disk at this stamp.
    Disk(DiskStamp),
    /// Standard input: its fixed text goes to stdout, not to a file.
    Stdin,
}

/// Lints one file's text, fixing it first when asked; `None` when it is
/// outside `scope`.
fn check_one(
    path: PathBuf,
    text: String,
    config: &Config,
    action: FixAction,
    mode: FixMode,
    from: Source,
    scope: Scope,
) -> Option<Checked> {
    if action == FixAction::Report {
        // Plain checking decides the scope on the parse it lints. Only a
        // text that is the file on disk may stand in for it when a compose
        // file builds it (fixing lints texts that are not on disk).
        let check = || engine::check_text_in_scope(path, text, config, scope);
        let report = match from {
            Source::Disk(stamp) => linting_text_read_from_disk(stamp, check),
            Source::Stdin => check(),
        };
        return report.map(|report| Checked {
            report,
            fixing: None,
        });
    }
    if scope == Scope::ManifestsOnly && !engine::is_manifest_candidate(&text) {
        return None;
    }
    let write = matches!(from, Source::Disk(_));
    Some(fix_one(path, text, config, action, mode, write))
}

/// Fixes one file's text (or prints the diff), and reports what remains.
fn fix_one(
    path: PathBuf,
    text: String,
    config: &Config,
    action: FixAction,
    mode: FixMode,
    write: bool,
) -> Checked {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fix::fix_text(&text, &path, config, mode)
    }));
    let outcome = match outcome {
        Ok(Ok(outcome)) => outcome,
        // Not YAML, a template, or a crash: report it as plain checking does.
        Ok(Err(_)) | Err(_) => {
            return Checked {
                report: engine::check_text(path, text, config),
                fixing: None,
            };
        }
    };
    if action == FixAction::Diff {
        // The diff goes to stdout; report files still list the findings.
        let report = FileReport::new(path, text.clone(), outcome.found.clone());
        return Checked {
            report,
            fixing: Some(Fixing {
                original: text,
                outcome,
            }),
        };
    }
    if write
        && outcome.changed(&text)
        && let Err(reason) = fix::write_fixed(&path, &text, &outcome.fixed_text)
    {
        let mut report = engine::check_text(path, text, config);
        report.error = Some(FileError::new(format!("cannot write the fixes: {reason}")));
        return Checked {
            report,
            fixing: None,
        };
    }
    let report = FileReport::new(path, outcome.fixed_text.clone(), outcome.remaining.clone());
    Checked {
        report,
        fixing: Some(Fixing {
            original: text,
            outcome,
        }),
    }
}

/// One note per Helm chart and per kustomize overlay that was skipped,
/// saying how to lint what it renders to.
fn skip_notes<'a>(reports: impl Iterator<Item = &'a FileReport>) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut charts: BTreeMap<PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    let mut overlays: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for report in reports {
        match &report.skipped {
            Some(Skip::HelmTemplate { .. }) => charts
                .entry(chart_root(&report.path))
                .or_default()
                .push(&report.path),
            Some(Skip::Kustomize { kustomization }) => {
                let dir = kustomization
                    .parent()
                    .unwrap_or(Path::new("."))
                    .to_path_buf();
                *overlays.entry(dir).or_default() += 1;
            }
            None => {}
        }
    }
    let shown = |p: &Path| {
        let s = p.display().to_string();
        if s.is_empty() { ".".to_string() } else { s }
    };
    let mut notes = Vec::new();
    for (chart, files) in charts {
        let what = if files.len() == 1 {
            format!("the Helm template {}", shown(files[0]))
        } else {
            format!("{} Helm templates in {}", files.len(), shown(&chart))
        };
        let source = if chart.join("Chart.yaml").is_file() {
            shown(&chart)
        } else {
            "<chart>".to_string()
        };
        notes.push(format!(
            "gpulint: note: skipped {what}: templates are not YAML until rendered; lint the output instead: `helm template {source} | gpulint check -`"
        ));
    }
    for (dir, files) in overlays {
        notes.push(format!(
            "gpulint: note: skipped the kustomize overlay in {} ({}): patches are partial manifests; lint the built output instead: `kubectl kustomize {} | gpulint check -`",
            shown(&dir),
            plural(files, "file"),
            shown(&dir)
        ));
    }
    notes
}

/// The chart a template belongs to: the nearest directory above it with a
/// `Chart.yaml`, else its own directory.
fn chart_root(template: &Path) -> PathBuf {
    let dir = template.parent().unwrap_or(Path::new("."));
    dir.ancestors()
        .find(|d| d.join("Chart.yaml").is_file())
        .unwrap_or(dir)
        .to_path_buf()
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `unchecked`: paths that were never linted, besides `s.failed_files`.
fn summary_line(s: &Summary, reports: &[FileReport], mode: FixMode, unchecked: usize) -> String {
    let failed = s.failed_files + unchecked;
    let mut line = if s.findings() == 0 && failed == 0 {
        format!("All checks passed ({} checked).", plural(s.files, "file"))
    } else if s.findings() == 0 {
        // Not "all passed": some files were never checked.
        format!(
            "No problems found in {}.",
            plural(s.files - s.failed_files, "file")
        )
    } else {
        format!(
            "Found {} ({} error{}, {}, {} info) in {} of {} checked.",
            plural(s.findings(), "problem"),
            s.errors,
            if s.errors == 1 { "" } else { "s" },
            plural(s.warnings, "warning"),
            s.infos,
            plural(s.files_with_findings, "file"),
            s.files
        )
    };
    let fixes = |applicability| {
        reports
            .iter()
            .flat_map(|r| &r.diagnostics)
            .filter(|d| {
                d.fix
                    .as_ref()
                    .is_some_and(|f| f.applicability == applicability)
            })
            .count()
    };
    let (safe, unsafe_) = (fixes(Applicability::Safe), fixes(Applicability::Unsafe));
    if safe > 0 || unsafe_ > 0 {
        if mode.unsafe_fixes {
            line.push_str(&format!(" {} fixable with `--fix`.", safe + unsafe_));
        } else if safe == 0 {
            line.push_str(&format!(" {unsafe_} fixable with `--fix --unsafe-fixes`."));
        } else if unsafe_ == 0 {
            line.push_str(&format!(" {safe} fixable with `--fix`."));
        } else {
            line.push_str(&format!(
                " {safe} fixable with `--fix` ({unsafe_} more with `--unsafe-fixes`)."
            ));
        }
    }
    if failed > 0 {
        line.push_str(&format!(
            " {} could not be checked (see errors above).",
            plural(failed, "file")
        ));
    }
    if s.skipped_files > 0 {
        line.push_str(&format!(
            " {} skipped (see notes above).",
            plural(s.skipped_files, "template or patch file")
        ));
    }
    line
}

/// Rows as text columns, each padded to its widest cell in characters (a
/// `Display` value's own formatting may ignore `{:<8}`); the last is not padded.
fn aligned_columns<const N: usize>(rows: &[[String; N]]) -> String {
    let width = |column: usize| {
        rows.iter()
            .map(|r| r[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..N).map(width).collect();
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < N {
                let pad = widths[i] - cell.chars().count() + 1;
                out.push_str(&" ".repeat(pad));
            }
        }
        out.push('\n');
    }
    out
}

fn rule(code: Option<String>, all: bool) -> u8 {
    let mut out = String::new();
    match code {
        Some(code) if !all => {
            let Ok(code) = code.parse::<RuleCode>() else {
                return usage_error(format!("unknown rule `{code}` (see `gpulint rule --all`)"));
            };
            let meta = crate::rules::meta(code);
            out.push_str(&format!(
                "{} ({}) — {} by default, fix: {}\n\n{}",
                meta.name,
                meta.code,
                meta.severity,
                meta.fix.as_str(),
                meta.body
            ));
        }
        _ => {
            let rows: Vec<[String; 4]> = crate::rules::all_meta()
                .iter()
                .map(|m| {
                    [
                        m.code.to_string(),
                        m.severity.to_string(),
                        m.name.clone(),
                        m.summary.clone(),
                    ]
                })
                .collect();
            out.push_str(&aligned_columns(&rows));
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    EXIT_CLEAN
}
