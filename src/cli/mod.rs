//! The command line: its arguments, and one module per command
//! (`check` with its `--add-noqa` and its report, `inspect`, `rule`).

mod check;
mod inspect;
mod noqa;
mod report;
mod rule;
mod show;
mod sinks;

use crate::engine::config::Config;
use crate::engine::discover::Target;
use crate::output::{OutputFormat, Summary};
use crate::vfs::FileRead;
use clap::{CommandFactory, Parser, Subcommand};
use std::path::{Path, PathBuf};

/// Exit codes: 0 clean, 1 findings, 2 usage, configuration or I/O errors.
pub(crate) const EXIT_CLEAN: u8 = 0;
pub(crate) const EXIT_FINDINGS: u8 = 1;
pub(crate) const EXIT_ERROR: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "gpulint",
    version,
    about = "Lint container configs for GPU and distributed-training misconfigurations"
)]
pub(crate) struct Cli {
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
        /// A rule's code (SHM001) or name (default-shm-on-gpu-service), in any case.
        code: Option<String>,
        /// List every rule.
        #[arg(long, conflicts_with = "code")]
        all: bool,
        /// `text`, or `json`: the rule's metadata and doc (every rule's with `--all`).
        #[arg(long, value_enum, default_value = "text")]
        output_format: ListFormat,
    },
    /// Print a completion script for SHELL on stdout, e.g.
    /// `gpulint completions bash > ~/.local/share/bash-completion/completions/gpulint`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print gpulint's man page (roff) on stdout: `gpulint man | man -l -`.
    Man,
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
    /// Exits 1 when the diff is not empty, 0 when it is or with `--fail-on never`.
    #[arg(long)]
    diff: bool,
    /// Also apply unsafe fixes with `--fix` or `--diff`.
    #[arg(long)]
    unsafe_fixes: bool,
    /// Suppress every current finding with a `# gpulint: ignore[CODE]`
    /// comment (`//` in a devcontainer.json) giving REASON, by default a
    /// TODO, then report what is left (to adopt gpulint now and fix the
    /// findings later). Each file is verified before it is written.
    #[arg(
        long,
        value_name = "REASON",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = crate::engine::noqa::REASON,
        conflicts_with_all = ["fix", "diff"]
    )]
    add_noqa: Option<String>,
    /// Print how many findings each rule has, instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// List the files `check` would lint, one per line, and exit: nothing
    /// is linted.
    #[arg(long, conflicts_with_all = ["fix", "diff", "add_noqa", "show_settings"])]
    show_files: bool,
    /// Print the configuration `check` applies to the first PATH (default
    /// `.`): its gpulint.toml, the rules enabled and their severities, the
    /// `[shm]`, `[compose]` and `[scripts]` settings; and exit.
    #[arg(long, conflicts_with_all = ["fix", "diff", "add_noqa"])]
    show_settings: bool,
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

/// How `gpulint rule` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ListFormat {
    Text,
    Json,
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

/// `[FORMAT:]PATH`. A known format name before the first `:` is the
/// format. A word there that is none (`xml:o.xml`) is refused with the
/// list of formats, rather than taken as a file name: that was a text
/// report in a file named `xml:o.xml`. A single letter stays a path
/// (`C:\\out.sarif`), and so does anything with a separator or a dot
/// before the colon; `./name:with:colons` names such a file.
fn parse_report_file(value: &str) -> Result<ReportFile, String> {
    let (format, path) = match value.split_once(':') {
        Some((name, path)) if OutputFormat::parse(name).is_some() => {
            (OutputFormat::parse(name), path)
        }
        Some((name, _))
            if name.len() > 1
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            use clap::ValueEnum;
            let formats: Vec<&str> = OutputFormat::value_variants()
                .iter()
                .map(|f| f.name())
                .collect();
            return Err(format!(
                "unknown report format `{name}`: the formats are {} (to name a file with a colon in it, write `./{value}`)",
                formats.join(", ")
            ));
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
        Command::Check(args) => check::check(args),
        Command::Rule {
            code,
            all,
            output_format,
        } => rule::rule(code, all, output_format),
        Command::Inspect(args) => inspect::inspect(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "gpulint", &mut script);
            print_stdout(&script)
        }
        Command::Man => {
            let mut page = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut page) {
                Ok(()) => print_stdout(&page),
                Err(e) => usage_error(format!("cannot render the man page: {e}")),
            }
        }
        Command::Server => match crate::lsp::run_stdio() {
            Ok(ending) => ending.exit_status(),
            Err(e) => usage_error(format!("language server: {e}")),
        },
    }
}

/// Whether `--color auto` colours `stdout`. `NO_COLOR` (set and not
/// empty) always wins (no-color.org); then `FORCE_COLOR` (set, not empty,
/// `0` or `false`) forces colour, as Node's and Python's tools read it; the
/// rest is anstream's reading of the clicolors convention: `CLICOLOR_FORCE`
/// forces colour, `CLICOLOR=0` turns it off, and otherwise a terminal
/// that supports colour (`TERM`) gets it.
fn auto_color(stdout: &std::io::Stdout) -> bool {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if set("NO_COLOR").is_some() {
        return false;
    }
    if set("FORCE_COLOR").is_some_and(|v| v != "0" && v != "false") {
        return true;
    }
    anstream::AutoStream::choice(stdout) != anstream::ColorChoice::Never
}

/// Writes a command's whole output to stdout; a closed pipe (`| head`) is
/// no error.
fn print_stdout(bytes: &[u8]) -> u8 {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => EXIT_CLEAN,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_CLEAN,
        Err(e) => usage_error(format!("cannot write output: {e}")),
    }
}

fn usage_error(message: impl std::fmt::Display) -> u8 {
    // The message may quote a path or an argument: escaped for the log.
    eprintln!(
        "gpulint: error: {}",
        crate::output::escape::human(&message.to_string())
    );
    EXIT_ERROR
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
fn read_target(session: &crate::engine::Session, target: &Target) -> Option<FileRead> {
    // Through the session's cache: the project it belongs to reads it too.
    match session.read(&target.path) {
        Err(_) if target.manifest_only => None,
        read => Some(read),
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
