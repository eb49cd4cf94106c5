//! A run of the command line: which command, how it colours, and what it
//! exits with.

use super::*;
use crate::engine::config::Config;
use crate::engine::discover::Target;
use crate::vfs::FileRead;
use clap::{CommandFactory, Parser};
use std::path::{Path, PathBuf};

/// Exit codes: 0 clean, 1 findings, 2 usage, configuration or I/O errors.
pub(crate) const EXIT_CLEAN: u8 = 0;

pub(crate) const EXIT_FINDINGS: u8 = 1;

pub(crate) const EXIT_ERROR: u8 = 2;

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
pub(super) fn auto_color(stdout: &std::io::Stdout) -> bool {
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
pub(super) fn print_stdout(bytes: &[u8]) -> u8 {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => EXIT_CLEAN,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_CLEAN,
        Err(e) => usage_error(format!("cannot write output: {e}")),
    }
}

pub(super) fn usage_error(message: impl std::fmt::Display) -> u8 {
    // The message may quote a path or an argument: escaped for the log.
    eprintln!(
        "gpulint: error: {}",
        crate::output::escape::human(&message.to_string())
    );
    EXIT_ERROR
}

/// `--config`: the one configuration for every file, if given.
pub(super) fn load_fixed_config(path: Option<&Path>) -> Result<Option<Config>, String> {
    path.map(|p| Config::load(p).map_err(|e| e.to_string()))
        .transpose()
}

/// The command-line paths, or `.` when none are given.
pub(super) fn paths_or_current(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    }
}

/// A discovered file's text, or why it cannot be read; `None` for walked
/// YAML that cannot be read (and may not be ours).
pub(super) fn read_target(session: &crate::engine::Session, target: &Target) -> Option<FileRead> {
    // Through the session's cache: the project it belongs to reads it too.
    match session.read(&target.path) {
        Err(_) if target.manifest_only => None,
        read => Some(read),
    }
}

pub(super) fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
