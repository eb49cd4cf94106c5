//! `gpulint check --show-files` and `--show-settings`: what a run would
//! read, and the configuration it would apply, without linting anything.

use super::{EXIT_ERROR, print_stdout, read_target};
use crate::engine::config::Config;
use crate::engine::discover::{ConfigResolver, Target, discover_with};
use crate::engine::{self, Session};
use crate::model::size::HumanBytes;
use crate::output::escape::{human, human_path};
use crate::output::shown_path;
use rayon::prelude::*;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// `--show-files`: every file `check` would lint under `paths`, one per
/// line in the order it reports them. Walked YAML is listed only when it
/// is a manifest (or Compose reads it), as `check` decides; kustomize
/// patches, which `check` passes over unread, are not listed. Paths that
/// cannot be walked, or whose configuration does not load, are errors on
/// stderr (exit 2).
pub(super) fn show_files(session: &Session, paths: &[PathBuf], resolver: &ConfigResolver) -> u8 {
    let (targets, errors) = discover_with(&session.workspace().files, paths, resolver);
    let linted: Vec<bool> = targets.par_iter().map(|t| would_lint(session, t)).collect();
    let mut out = String::new();
    for (t, linted) in targets.iter().zip(linted) {
        if linted {
            // As `check`'s text and JSON reports name it.
            out.push_str(&human_path(&t.path));
            out.push('\n');
        }
    }
    let status = print_stdout(out.as_bytes());
    let mut problems: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: error: {}", human_path(&e.path), human(&e.message)))
        .collect();
    problems.sort();
    problems.dedup();
    for line in &problems {
        eprintln!("{line}");
    }
    if problems.is_empty() {
        status
    } else {
        EXIT_ERROR
    }
}

/// Whether `check` lints the discovered file (a walked YAML file only
/// when it is a manifest, or a file Compose reads).
fn would_lint(session: &Session, t: &Target) -> bool {
    if t.skip.is_some() {
        return false;
    }
    if !t.manifest_only {
        return true;
    }
    match read_target(session, t) {
        None => false,
        Some(Err(_)) => true,
        Some(Ok((text, _))) => {
            engine::is_manifest_candidate(&text) || session.is_read_as_compose(&t.path)
        }
    }
}

/// `--show-settings`: the configuration `check` applies to `path` (a file,
/// or the files of a directory): where it comes from, the rules it enables
/// and their severities, and its `[shm]`, `[compose]` and `[scripts]`
/// settings.
pub(super) fn show_settings(path: &Path, resolver: &ConfigResolver) -> u8 {
    // The resolver looks up a file's directory: a directory's own files
    // are what it is asked about.
    let probe = if path.is_dir() {
        path.join("gpulint.toml")
    } else {
        path.to_path_buf()
    };
    match resolver.for_file(&probe) {
        Ok(config) => print_stdout(settings(path, &config).as_bytes()),
        Err(e) => {
            eprintln!("gpulint: error: {}", human(&e.to_string()));
            EXIT_ERROR
        }
    }
}

fn settings(path: &Path, config: &Config) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Settings for {}", human_path(path));
    let source = match &config.path {
        Some(file) => human(&shown_path(file)).into_owned(),
        None => "none (no gpulint.toml found: the defaults)".to_string(),
    };
    let _ = writeln!(out, "config file: {source}");
    let metas = crate::rules::all_meta();
    let enabled: Vec<_> = metas.iter().filter(|m| config.is_enabled(m.code)).collect();
    let _ = writeln!(
        out,
        "\nenabled rules ({} of {}), with their severity:",
        enabled.len(),
        metas.len()
    );
    for m in &enabled {
        let (severity, why) = match config.severity_override(m.code) {
            Some(s) => (s, "  (set by [severity])"),
            None => (m.severity, ""),
        };
        let _ = writeln!(
            out,
            "  {:<9} {:<8} {}{why}",
            m.code.as_str(),
            severity.as_str(),
            m.name
        );
    }
    let disabled: Vec<String> = metas
        .iter()
        .filter(|m| !config.is_enabled(m.code))
        .map(|m| m.code.to_string() + if m.opt_in { " (opt-in)" } else { "" })
        .collect();
    if !disabled.is_empty() {
        let _ = writeln!(out, "disabled rules: {}", disabled.join(", "));
    }
    let s = &config.rule_settings;
    let _ = writeln!(out, "\n[shm]");
    let _ = writeln!(
        out,
        "  min-size = {} ({} bytes)",
        HumanBytes(s.min_shm),
        s.min_shm
    );
    match s.min_shm_multi_gpu {
        Some(bytes) => {
            let _ = writeln!(
                out,
                "  min-size-multi-gpu = {} ({bytes} bytes)",
                HumanBytes(bytes)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  min-size-multi-gpu = not set (derived from each workload)"
            );
        }
    }
    let _ = writeln!(out, "  dataloader-workers = {}", s.dataloader_workers);
    let _ = writeln!(out, "  fix-size = {:?}", s.fix_shm_size);
    let _ = writeln!(out, "\n[compose]");
    if config.compose_projects.is_empty() {
        let _ = writeln!(out, "  projects = none");
    }
    for set in &config.compose_projects {
        let files: Vec<String> = set
            .iter()
            .map(|f| human(&shown_path(f)).into_owned())
            .collect();
        let _ = writeln!(out, "  project = {}", files.join(" + "));
    }
    match &s.compose_fragments {
        Some(f) => {
            let _ = writeln!(
                out,
                "  fragments = {} (relative to {})",
                human(&f.patterns.join(", ")),
                human(&shown_path(&f.root))
            );
        }
        None => {
            let _ = writeln!(out, "  fragments = none");
        }
    }
    let _ = writeln!(out, "\n[scripts]\n  markdown = {}", config.lint_markdown);
    out
}
