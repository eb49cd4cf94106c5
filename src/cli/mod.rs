//! The command line: `gpulint check`, `gpulint rule`.

use crate::engine::config::{Config, validate_selector};
use crate::engine::discover::{ConfigResolver, discover};
use crate::engine::{self, FileReport};
use crate::output::{OutputFormat, Summary, json, text};
use clap::{Parser, Subcommand};
use rayon::prelude::*;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

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
    /// Lint compose files (directories are searched, honouring .gitignore).
    Check(CheckArgs),
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
    #[arg(long, value_enum, default_value = "text")]
    output_format: OutputFormat,
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
    let fixed = match &args.config {
        Some(path) => match Config::load(path) {
            Ok(c) => Some(c),
            Err(e) => return usage_error(e),
        },
        None => None,
    };
    let resolver = ConfigResolver::new(fixed, args.select.clone(), args.ignore.clone());
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let reads_stdin = paths.iter().any(|p| p.as_os_str() == "-");
    if reads_stdin && paths.len() > 1 {
        return usage_error("`-` (standard input) cannot be combined with other paths");
    }

    let mut reports: Vec<FileReport> = Vec::new();
    let mut config_errors = Vec::new();
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
        reports.push(match engine::decode(bytes) {
            Ok(text) => engine::check_text(name, text, &config),
            Err((error, text)) => FileReport::failed(name, text, error),
        });
    } else {
        let (targets, errors) = discover(&paths, &resolver);
        config_errors.extend(
            errors
                .into_iter()
                .map(|e| format!("{}: error: {}", e.path.display(), e.message)),
        );
        let results: Vec<Result<FileReport, String>> = targets
            .par_iter()
            .map(|t| {
                let config = resolver.for_file(&t.path).map_err(|e| e.to_string())?;
                Ok(engine::check_file(t.path.clone(), &config))
            })
            .collect();
        for r in results {
            match r {
                Ok(report) => reports.push(report),
                Err(e) => config_errors.push(format!("gpulint: error: {e}")),
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
    let summary = Summary::of(&reports);
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    for line in &config_errors {
        let _ = writeln!(stderr, "{line}");
    }
    for report in &reports {
        if let Some(error) = &report.error {
            let _ = writeln!(stderr, "{}", text::file_error_line(report, error));
        }
    }
    let written = match args.output_format {
        OutputFormat::Json => stdout.write_all(json::render(&reports).as_bytes()),
        OutputFormat::Concise => reports
            .iter()
            .flat_map(|r| r.diagnostics.iter().map(move |d| text::concise(r, d)))
            .try_for_each(|line| writeln!(stdout, "{line}")),
        OutputFormat::Text => {
            let mut out = String::new();
            for report in &reports {
                for d in &report.diagnostics {
                    if args.quiet {
                        out.push_str(&text::concise(report, d));
                        out.push('\n');
                    } else {
                        out.push_str(&text::render(report, d, style));
                        out.push('\n');
                    }
                }
            }
            if !args.quiet {
                out.push_str(&summary_line(&summary));
                out.push('\n');
            }
            stdout.write_all(out.as_bytes())
        }
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = writeln!(stderr, "gpulint: error: cannot write output: {e}");
        return EXIT_ERROR;
    }
    if summary.failed_files > 0 || !config_errors.is_empty() {
        EXIT_ERROR
    } else if summary.findings() > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn summary_line(s: &Summary) -> String {
    let mut line = if s.findings() == 0 {
        format!("All checks passed ({} checked).", plural(s.files, "file"))
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
    if s.failed_files > 0 {
        line.push_str(&format!(
            " {} could not be linted (see errors above).",
            plural(s.failed_files, "file")
        ));
    }
    line
}

fn rule(code: Option<String>, all: bool) -> u8 {
    let mut out = String::new();
    match code {
        Some(code) if !all => {
            let Some((_, meta)) = crate::rules::rule(&code) else {
                return usage_error(format!("unknown rule `{code}` (see `gpulint rule --all`)"));
            };
            out.push_str(&format!(
                "{} ({}) — {} by default, fix: {}\n\n{}",
                meta.name,
                meta.code,
                meta.severity,
                match meta.fix {
                    crate::rules::FixKind::None => "none",
                    crate::rules::FixKind::Safe => "safe",
                    crate::rules::FixKind::Unsafe => "unsafe",
                    crate::rules::FixKind::DisplayOnly => "display-only",
                },
                meta.body
            ));
        }
        _ => {
            for meta in crate::rules::all_meta() {
                out.push_str(&format!(
                    "{:<8} {:<8} {:<40} {}\n",
                    meta.code, meta.severity, meta.name, meta.summary
                ));
            }
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    EXIT_CLEAN
}
