//! Helpers shared by the integration tests.

pub mod docker;

use gpulint::engine::config::Config;
use gpulint::engine::{FileReport, check_text};
use gpulint::rules::RuleCode;
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Calls the macro `$callback` with every rule, from the crate's own
/// registry (`for_each_rule!` in crates/gpulint-base/src/codes.rs), as `family { CODE =>
/// module, ... } ...`: the per-rule fixture tests (`rules::SHM001`,
/// `fixes::SHM001`) are generated from it, so `cargo test --test it SHM001`
/// runs one rule's fixtures, and a new rule gets its tests without a
/// second list. `rules::every_fixture_folder_and_rule_has_its_own_test`
/// fails when a fixture folder belongs to no rule.
macro_rules! with_rule_codes {
    ($callback:ident) => {
        gpulint::for_each_rule! { $callback }
    };
}
pub(crate) use with_rule_codes;

macro_rules! code_names {
    ($( $family:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        &[$($(stringify!($code)),*),*]
    };
}

/// The codes `with_rule_codes!` names.
pub const TESTED_RULE_CODES: &[&str] = with_rule_codes!(code_names);

/// A config with only the given rule selectors enabled.
pub fn config_selecting(selectors: &[&str]) -> Config {
    let mut config = Config::default();
    let select: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
    config.set_selection(&select, &[]);
    config
}

fn is_lintable(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    ) || gpulint::engine::discover::is_dockerfile_name(&name)
        || gpulint::engine::discover::script_kind(path).is_some()
}

/// One fixture of a rule: a file (`invalid_cpu_wheel.Dockerfile`), or a
/// directory that is a small repository (`invalid_builds_ngc_image/` with a
/// compose file and the Dockerfile it builds).
pub struct Fixture {
    /// The file or the directory.
    pub path: PathBuf,
    /// The files to lint, sorted (the path itself for a file fixture).
    pub files: Vec<PathBuf>,
}

impl Fixture {
    pub fn name(&self) -> String {
        self.path.file_name().unwrap().to_string_lossy().to_string()
    }

    /// Where a snapshot of `file` goes: next to a file fixture
    /// (`x.yaml.diff`), or beside a directory fixture with the file's path
    /// in the name (`dir.trainer__Dockerfile.diff`), so snapshots never sit
    /// among the files the repository fixture is linted as.
    pub fn snapshot(&self, file: &Path, suffix: &str) -> PathBuf {
        if file == self.path {
            return self.path.with_file_name(format!("{}{suffix}", self.name()));
        }
        let inner = file
            .strip_prefix(&self.path)
            .unwrap()
            .to_string_lossy()
            .replace(['/', '\\'], "__");
        self.path
            .with_file_name(format!("{}.{inner}{suffix}", self.name()))
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else if is_lintable(&path) {
            out.push(path);
        }
    }
}

/// The fixtures of a rule: `fixtures/<CODE>/{valid,invalid}*` YAML files,
/// Dockerfiles and repository directories, sorted; snapshots excluded.
pub fn fixtures(code: RuleCode) -> Vec<Fixture> {
    fixtures_in_folder(code.as_str())
}

/// The fixtures of `fixtures/<folder>/`, a rule's or another (`_examples`).
pub fn fixtures_in_folder(folder: &str) -> Vec<Fixture> {
    let dir = root().join("fixtures").join(folder);
    let mut fixtures: Vec<Fixture> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter_map(|path| {
            if path.is_dir() {
                let mut files = Vec::new();
                files_under(&path, &mut files);
                files.sort();
                Some(Fixture { path, files })
            } else if is_lintable(&path) {
                Some(Fixture {
                    files: vec![path.clone()],
                    path,
                })
            } else {
                None
            }
        })
        .collect();
    fixtures.sort_by(|a, b| a.path.cmp(&b.path));
    fixtures
}

pub fn lint(path: &Path, config: &Config) -> FileReport {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // Report paths relative to the repository, so snapshots do not depend on the checkout.
    let shown = path.strip_prefix(root()).unwrap_or(path).to_path_buf();
    check_text(shown, text, config)
}

pub fn render(report: &FileReport) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        out.push_str(&gpulint::output::text::render(
            report,
            d,
            Default::default(),
        ));
        out.push('\n');
    }
    out
}

/// Compares `actual` with the file at `path`, or writes it when `UPDATE_SNAPSHOTS=1`.
pub fn assert_snapshot(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(path, actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|_| {
        format!(
            "{}: snapshot missing; run `UPDATE_SNAPSHOTS=1 cargo test` and review it",
            path.display()
        )
    })?;
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, actual)
            .unified_diff()
            .header("expected", "actual")
            .to_string();
        return Err(format!(
            "{}: output changed (UPDATE_SNAPSHOTS=1 to accept):\n{diff}",
            path.display()
        ));
    }
    Ok(())
}

/// `../shared/<relative>`, beside the checkout, for a test that is
/// `#[ignore = "needs ../shared/..."]`: it runs only when asked for
/// (`cargo test -- --ignored`, as `.ci/run` does), and then fails when the
/// path is missing rather than passing without checking anything.
pub fn required_shared(relative: &str) -> PathBuf {
    let path = root().join("../shared").join(relative);
    assert!(
        path.exists(),
        "../shared/{relative} is missing: this test needs the shared corpus beside the checkout"
    );
    path
}

/// A real tool (a validator, pre-commit) for a test that is
/// `#[ignore = "needs <name>: installed by .ci/run"]`: `$env_var` if set,
/// else `name` if it runs from the PATH. The test runs only when asked for,
/// and then fails when the tool is missing rather than passing.
pub fn required_tool(env_var: &str, name: &str, install: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(env_var) {
        return PathBuf::from(path);
    }
    let found = std::process::Command::new(name)
        .arg("--help")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "{name} is missing: {install}, or set {env_var} (.ci/run installs it)"
    );
    PathBuf::from(name)
}

/// How many cases each property test generates: `PROPTEST_CASES` if set,
/// else 400 under CI (`CI` set, as `.ci/run` sets it) and 100 elsewhere, so
/// that a plain `cargo test` stays quick and CI searches harder.
pub fn property_cases() -> u32 {
    if let Some(cases) = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return cases;
    }
    if std::env::var_os("CI").is_some() {
        400
    } else {
        100
    }
}

/// Runs the gpulint binary in `dir`, without colours.
pub fn gpulint(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `dir/name`, creating its directories.
pub fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The workflow commands a GitHub runner acts on in `log`, as its
/// `ActionCommandManager` reads them (actions/runner, `ActionCommand.cs`):
/// lines end at LF, CR or CRLF (.NET's `ReadLine`); a line is a command
/// when, after leading white space, it starts with `::name` up to a second
/// `::`, or (the legacy form, anywhere in the line) holds `##[name` up to
/// `]`; `name` must be a registered command. `stop-commands::TOKEN` stops
/// processing until a command named TOKEN (the stop is returned, the
/// resume is not).
pub fn workflow_commands(log: &str) -> Vec<String> {
    const REGISTERED: &[&str] = &[
        "set-env",
        "set-output",
        "save-state",
        "add-mask",
        "add-path",
        "add-matcher",
        "remove-matcher",
        "debug",
        "warning",
        "error",
        "notice",
        "group",
        "endgroup",
        "echo",
        "stop-commands",
    ];
    let name_of = |info: &str| info.split(' ').next().unwrap_or("").to_string();
    let mut commands = Vec::new();
    let mut stopped_until: Option<String> = None;
    for line in log.split(['\n', '\r']) {
        let trimmed = line.trim_start();
        // The command's name and its data.
        let parsed = if let Some(rest) = trimmed.strip_prefix("::")
            && let Some(end) = rest.find("::")
        {
            Some((name_of(&rest[..end]), rest[end + 2..].to_string()))
        } else if let Some(at) = line.find("##[")
            && let Some(end) = line[at..].find(']')
        {
            Some((
                name_of(&line[at + 3..at + end]),
                line[at + end + 1..].to_string(),
            ))
        } else {
            None
        };
        let Some((name, data)) = parsed else {
            continue;
        };
        if let Some(token) = &stopped_until {
            // While stopped, only the token (any name) resumes.
            if name.eq_ignore_ascii_case(token) {
                stopped_until = None;
            }
            continue;
        }
        if !REGISTERED.contains(&name.as_str()) {
            continue;
        }
        if name == "stop-commands" {
            stopped_until = Some(data);
        }
        commands.push(line.to_string());
    }
    commands
}
