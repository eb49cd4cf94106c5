//! Helpers shared by the integration tests.
#![allow(dead_code)]

use gpulint::engine::config::Config;
use gpulint::engine::{FileReport, check_text};
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A config with only the given rule selectors enabled.
pub fn config_selecting(selectors: &[&str]) -> Config {
    let mut config = Config::default();
    let select: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
    config.set_selection(&select, &[]);
    config
}

/// The fixtures of a rule: `fixtures/<CODE>/{valid,invalid}*` YAML files and
/// Dockerfiles (`invalid_cpu_wheel.Dockerfile`), sorted; snapshots excluded.
pub fn fixture_files(code: &str) -> Vec<PathBuf> {
    let dir = root().join("fixtures").join(code);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
                || gpulint::engine::discover::is_dockerfile_name(&name)
        })
        .collect();
    files.sort();
    files
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
