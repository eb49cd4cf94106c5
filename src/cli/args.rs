//! The command line's arguments, as clap parses them.

use crate::output::{OutputFormat, Summary};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "gpulint",
    version,
    about = "Lint container configs for GPU and distributed-training misconfigurations"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
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
pub(super) struct CheckArgs {
    /// Files or directories to lint; `-` reads standard input. Default: `.`.
    pub(super) paths: Vec<PathBuf>,
    /// Use this configuration file instead of the nearest gpulint.toml.
    #[arg(long)]
    pub(super) config: Option<PathBuf>,
    /// The report's format (on the terminal, and in `--output-file`s without one).
    #[arg(long, value_enum, default_value = "text")]
    pub(super) output_format: OutputFormat,
    /// Also write a report to PATH, in FORMAT or else in `--output-format`
    /// (the terminal then shows text). Repeatable: `--output-file sarif:gpulint.sarif`.
    #[arg(long, value_name = "[FORMAT:]PATH", value_parser = parse_report_file)]
    pub(super) output_file: Vec<ReportFile>,
    /// The lowest severity that makes the exit status 1: info (any finding),
    /// warning, error, or never. Errors in files or configuration still exit 2.
    #[arg(long, value_enum, default_value = "info")]
    pub(super) fail_on: FailOn,
    /// Only print findings and errors: no summary line.
    #[arg(short, long)]
    pub(super) quiet: bool,
    /// The file name to report (and match config against) for `-`.
    #[arg(long)]
    pub(super) stdin_filename: Option<PathBuf>,
    /// Rule codes or prefixes to enable (comma-separated), replacing config's `select`.
    #[arg(long, value_delimiter = ',')]
    pub(super) select: Option<Vec<String>>,
    /// Rule codes or prefixes to disable (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub(super) ignore: Vec<String>,
    /// Color the text output: auto, always or never.
    #[arg(long, default_value = "auto")]
    pub(super) color: ColorChoice,
    /// Apply safe fixes (each verified before it is written), then report what is left.
    /// With `-`, print the fixed text on stdout.
    #[arg(long, conflicts_with = "diff")]
    pub(super) fix: bool,
    /// Print the fixes as one unified diff (for `git apply` or `patch -p1`); write nothing.
    /// Exits 1 when the diff is not empty, 0 when it is or with `--fail-on never`.
    #[arg(long)]
    pub(super) diff: bool,
    /// Also apply unsafe fixes with `--fix` or `--diff`.
    #[arg(long)]
    pub(super) unsafe_fixes: bool,
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
    pub(super) add_noqa: Option<String>,
    /// Print how many findings each rule has, instead of the findings.
    #[arg(long)]
    pub(super) statistics: bool,
    /// List the files `check` would lint, one per line, and exit: nothing
    /// is linted.
    #[arg(long, conflicts_with_all = ["fix", "diff", "add_noqa", "show_settings"])]
    pub(super) show_files: bool,
    /// Print the configuration `check` applies to the first PATH (default
    /// `.`): its gpulint.toml, the rules enabled and their severities, the
    /// `[shm]`, `[compose]` and `[scripts]` settings; and exit.
    #[arg(long, conflicts_with_all = ["fix", "diff", "add_noqa"])]
    pub(super) show_settings: bool,
}

#[derive(Debug, clap::Args)]
pub(super) struct InspectArgs {
    /// Files or directories to inspect. Default: `.`.
    pub(super) paths: Vec<PathBuf>,
    /// Use this configuration file instead of the nearest gpulint.toml.
    #[arg(long)]
    pub(super) config: Option<PathBuf>,
    /// `text` (a table) or `json` (schema version 1, see README).
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: InspectFormat,
}

/// How `gpulint rule` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum ListFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum InspectFormat {
    Text,
    Json,
}

/// Where `--output-file` writes a report, and in which format (`None`:
/// the one `--output-format` names).
#[derive(Debug, Clone)]
pub(super) struct ReportFile {
    pub(super) format: Option<OutputFormat>,
    pub(super) path: PathBuf,
}

/// `[FORMAT:]PATH`. A known format name before the first `:` is the
/// format. A word there that is none (`xml:o.xml`) is refused with the
/// list of formats, rather than taken as a file name: that was a text
/// report in a file named `xml:o.xml`. A single letter stays a path
/// (`C:\\out.sarif`), and so does anything with a separator or a dot
/// before the colon; `./name:with:colons` names such a file.
pub(super) fn parse_report_file(value: &str) -> Result<ReportFile, String> {
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
pub(super) enum FailOn {
    Info,
    Warning,
    Error,
    Never,
}

impl FailOn {
    pub(super) fn fails(self, summary: &Summary) -> bool {
        match self {
            FailOn::Info => summary.findings() > 0,
            FailOn::Warning => summary.errors + summary.warnings > 0,
            FailOn::Error => summary.errors > 0,
            FailOn::Never => false,
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum ColorChoice {
    Auto,
    Always,
    Never,
}
