//! The `reports` target's checks, shared with tests/it/fuzz_regressions.rs:
//! a compose project with hostile file and service names and a hostile
//! `.env`, linted in memory and rendered in every report format (text,
//! concise, github, json, sarif, gitlab, junit). Two promises are checked:
//!
//! - no line of a report starts with `::` (after white space, which the
//!   GitHub runner trims), where the runner would read a workflow command
//!   (`::add-mask::`, `::stop-commands::`): the `github` format's own lines
//!   are its commands, one per finding or file error, and nothing else;
//! - no value the `.env` sets that gpulint hides (one that is more than a
//!   short plain word, see `gpulint::redact`, and that no compose file of
//!   the project writes) appears in any report. What a report shows anyway
//!   without the `.env` (its own words, the path) is not a leak: a value
//!   found in the report of the same project without its `.env` is not
//!   looked for.
//!
//! The input is up to four fields separated by NUL bytes: the compose
//! file's relative path (bytes: a name need not be UTF-8), the `.env`
//! text, the service names (separated by 0x01) and the lines each service
//! gets (a GPU service that reads the `.env`'s variables when empty).
#![allow(dead_code)]

use gpulint::engine::config::Config;
use gpulint::engine::{FileReport, Session};
use gpulint::output::{github, gitlab, json, junit, sarif, text};
use gpulint::project::FileRole;
use gpulint::vfs::MemoryFs;
use std::path::{Component, Path, PathBuf};

/// What a service gets when the input gives it nothing: GPUs, ranks, and
/// settings that quote the `.env`'s values, some glued to other text.
const DEFAULT_BODY: &str = "image: ${IMAGE:-nvcr.io/nvidia/pytorch:24.01-py3}\ngpus: ${GPUS:-all}\nshm_size: ${S:-1g}\ncommand: torchrun --nproc_per_node=${N:-8} train.py\nipc: ${IPC:-private}\nenvironment:\n  NCCL_SOCKET_IFNAME: ${IFACE:-eth0}\n  NCCL_DEBUG: x${DEBUG}\n  HF_TOKEN: ${HF_TOKEN}\nulimits:\n  memlock: ${MEMLOCK:-1024}\n";

/// One input: the compose file's path and text, and the `.env` beside it.
pub struct Case {
    pub path: PathBuf,
    pub compose: String,
    pub env: String,
}

/// The input's case, or `None` for input with no usable path.
pub fn case(data: &[u8]) -> Option<Case> {
    let mut fields = data.splitn(4, |&b| b == 0);
    let path = relative_path(fields.next().unwrap_or_default())?;
    let env = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let names = fields.next().unwrap_or_default();
    let body = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let body = if body.trim().is_empty() {
        DEFAULT_BODY.to_string()
    } else {
        body
    };
    let mut compose = String::from("services:\n");
    let names: Vec<String> = names
        .split(|&b| b == 1)
        .take(4)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    for name in &names {
        compose.push_str("  ");
        compose.push_str(&yaml_quoted(name));
        compose.push_str(":\n");
        for line in body.lines() {
            compose.push_str("    ");
            compose.push_str(line);
            compose.push('\n');
        }
    }
    Some(Case { path, compose, env })
}

/// `bytes` as a relative path without `.`, `..` or a root (reports show
/// it as it is, and nothing outside the memory file system is read), at
/// most 200 bytes; `compose.yaml` when nothing is left.
#[cfg(unix)]
fn relative_path(bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = &bytes[..bytes.len().min(200)];
    let raw = Path::new(std::ffi::OsStr::from_bytes(bytes));
    let mut path = PathBuf::new();
    for component in raw.components() {
        if let Component::Normal(name) = component {
            path.push(name);
        }
    }
    if path.as_os_str().is_empty() {
        path.push("compose.yaml");
    }
    Some(path)
}

#[cfg(not(unix))]
fn relative_path(bytes: &[u8]) -> Option<PathBuf> {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    let mut path = PathBuf::new();
    for component in Path::new(&text).components() {
        if let Component::Normal(name) = component {
            path.push(name);
        }
    }
    if path.as_os_str().is_empty() {
        path.push("compose.yaml");
    }
    Some(path)
}

/// `name` as a YAML double-quoted scalar, whatever it holds.
fn yaml_quoted(name: &str) -> String {
    let mut out = String::from("\"");
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// Each format's report of `reports`, as `gpulint check` writes it.
pub fn render_all(reports: &[FileReport]) -> Vec<(&'static str, String)> {
    let mut full = String::new();
    let mut concise = String::new();
    for report in reports {
        if let Some(error) = &report.error {
            for out in [&mut full, &mut concise] {
                out.push_str(&text::file_error_line(report, error));
                out.push('\n');
            }
        }
        for d in &report.diagnostics {
            full.push_str(&text::render(report, d, text::Style::default()));
            full.push('\n');
            concise.push_str(&text::concise(report, d));
            concise.push('\n');
        }
    }
    vec![
        ("text", full),
        ("concise", concise),
        ("github", github::render(reports)),
        ("json", json::render(reports)),
        ("sarif", sarif::render(reports)),
        ("gitlab", gitlab::render(reports)),
        ("junit", junit::render(reports)),
    ]
}

/// The files of `case` in memory, the `.env` only `with_env`.
fn session(case: &Case, with_env: bool) -> (Session, Vec<PathBuf>) {
    let dir = case.path.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut files = vec![(case.path.clone(), case.compose.clone())];
    let mut linted = vec![case.path.clone()];
    // A name that is no compose file's is linted as YAML of its own: the
    // same text as the directory's `compose.yaml` is its project.
    let name = gpulint::vfs::file_name_text(&case.path);
    if !gpulint::engine::discover::is_compose_file_name(&name) {
        let compose = dir.join("compose.yaml");
        files.push((compose.clone(), case.compose.clone()));
        linted.push(compose);
    }
    if with_env {
        files.push((dir.join(".env"), case.env.clone()));
    }
    (Session::new(MemoryFs::new(files)), linted)
}

/// Every report of `case`, rendered in every format, and the values its
/// `.env` sets that gpulint hides.
fn reports(case: &Case, config: &Config, with_env: bool) -> Reports {
    let (session, linted) = session(case, with_env);
    let reports: Vec<FileReport> = linted
        .iter()
        .map(|path| session.check_file(path.clone(), config))
        .collect();
    let mut hidden = Vec::new();
    for path in &linted {
        for spec in session.projects_of(path, config) {
            let project = session.project_lint(&spec, config).project.clone();
            let in_compose_files = |value: &str| {
                project
                    .files
                    .iter()
                    .any(|f| f.role != FileRole::Env && f.source.text.contains(value))
            };
            let known = project.env.iter().filter_map(|(_, var)| match &var.value {
                gpulint::project::env::Value::Known(value) => Some(value.clone()),
                gpulint::project::env::Value::Unknown(_) => None,
            });
            let raw = project
                .files
                .iter()
                .filter(|f| f.role == FileRole::Env)
                .flat_map(|f| gpulint::project::env::raw_values(&f.source.text))
                .map(|(_, value)| value);
            for value in known.chain(raw) {
                // A value of a few characters (`"6`) is found in any
                // report's own text (`tests="6"` in JUnit's): what shows
                // it cannot be told from what only looks like it.
                if value.trim().chars().count() >= MIN_CHECKED_VALUE
                    && !gpulint::redact::is_short_plain_word(&value)
                    && !in_compose_files(&value)
                    && !hidden.contains(&value)
                {
                    hidden.push(value);
                }
            }
        }
    }
    let commands = reports
        .iter()
        .map(|r| r.diagnostics.len() + usize::from(r.error.is_some() && r.skipped.is_none()))
        .sum();
    Reports {
        rendered: render_all(&reports),
        hidden,
        commands,
    }
}

/// A case's reports in every format, the values its `.env` sets that
/// gpulint hides, and how many workflow commands the `github` report has.
struct Reports {
    rendered: Vec<(&'static str, String)>,
    hidden: Vec<String>,
    commands: usize,
}

/// The lines of `out` as the GitHub runner reads them: split at LF and CR.
fn lines(out: &str) -> impl Iterator<Item = &str> {
    out.split(['\n', '\r'])
}

/// Runs the checks on one input (see the module docs); panics on a broken
/// promise, naming the format, the line or value and the input.
pub fn run(data: &[u8], config: &Config) {
    let Some(case) = case(data) else {
        return;
    };
    let Reports {
        rendered,
        hidden,
        commands,
    } = reports(&case, config, true);
    let shown = |format: &str| {
        format!(
            "in the {format} report of {:?}\n--- compose ---\n{}\n--- .env ---\n{}",
            case.path, case.compose, case.env
        )
    };
    for (format, out) in &rendered {
        if *format == "github" {
            continue;
        }
        if let Some(line) = lines(out).find(|l| l.trim_start().starts_with("::")) {
            panic!(
                "a line starts a workflow command: {line:?}\n{}",
                shown(format)
            );
        }
    }
    let (_, github) = rendered.iter().find(|(f, _)| *f == "github").unwrap();
    let github_lines: Vec<&str> = lines(github).filter(|l| !l.is_empty()).collect();
    if github_lines.len() != commands {
        panic!(
            "{} lines for {commands} commands:\n{github}\n{}",
            github_lines.len(),
            shown("github")
        );
    }
    for line in github_lines {
        let command = ["::error ", "::warning ", "::notice "]
            .iter()
            .any(|c| line.starts_with(c));
        if !command {
            panic!(
                "a line is not one of gpulint's commands: {line:?}\n{}",
                shown("github")
            );
        }
    }
    if hidden.is_empty() {
        return;
    }
    // What the reports say without the `.env` is no value of it; nor is
    // the placeholder a value is shown by (`${S}` holds the value `{S}`).
    let without: Vec<(&str, String)> = reports(&case, config, false)
        .rendered
        .into_iter()
        .map(|(format, out)| (format, without_placeholders(&out)))
        .collect();
    let rendered: Vec<(&str, String)> = rendered
        .iter()
        .map(|(format, out)| (*format, without_placeholders(out)))
        .collect();
    for value in &hidden {
        if without.iter().any(|(_, out)| out.contains(value.as_str())) {
            continue;
        }
        if let Some((format, out)) = rendered
            .iter()
            .find(|(_, out)| out.contains(value.as_str()))
        {
            let line = out
                .lines()
                .find(|l| l.contains(value.as_str()))
                .unwrap_or_default();
            panic!(
                "the hidden value {value:?} is shown: {line:?}\n{}",
                shown(format)
            );
        }
    }
}

/// The shortest hidden value whose appearance in a report is checked.
const MIN_CHECKED_VALUE: usize = 4;

/// `text` without the placeholders redaction names hidden values by
/// (`${NAME}`), each replaced by `${}`.
fn without_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        let name = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if name > 0 && rest[name..].starts_with('}') {
            rest = &rest[name..];
        }
    }
    out.push_str(rest);
    out
}
