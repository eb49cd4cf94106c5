//! The fixture harness: for every rule, `fixtures/<CODE>/invalid*.y(a)ml`
//! must produce the rule's findings (their rendering is snapshotted next to
//! the input as `<file>.snap`) and `valid*.y(a)ml` must produce none.

mod common;

use common::{assert_snapshot, config_selecting, lint, render, root};
use gpulint::rules::{RULES, Target, meta};
use std::path::PathBuf;

fn fixture_files(code: &str) -> Vec<PathBuf> {
    let dir = root().join("fixtures").join(code);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    files
}

#[test]
fn every_rule_fires_on_its_invalid_fixtures_and_stays_quiet_on_valid_ones() {
    let mut failures = Vec::new();
    for rule in RULES {
        // Suppression rules need the other rules running to have something to suppress.
        let config = if meta(rule.code).applies_to(Target::Suppression) {
            config_selecting(&["ALL"])
        } else {
            config_selecting(&[rule.code])
        };
        for path in fixture_files(rule.code) {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let report = lint(&path, &config);
            if let Some(e) = &report.error {
                failures.push(format!("{}: {}", path.display(), e.message));
                continue;
            }
            let own = report
                .diagnostics
                .iter()
                .filter(|d| d.code == rule.code)
                .count();
            if name.starts_with("invalid") {
                if own == 0 {
                    failures.push(format!(
                        "{}: expected {} to fire",
                        path.display(),
                        rule.code
                    ));
                }
                let snap = path.with_file_name(format!("{name}.snap"));
                if let Err(e) = assert_snapshot(&snap, &render(&report)) {
                    failures.push(e);
                }
            } else if name.starts_with("valid") {
                if own != 0 {
                    failures.push(format!(
                        "{}: {} fired on a valid fixture:\n{}",
                        path.display(),
                        rule.code,
                        render(&report)
                    ));
                }
            } else {
                failures.push(format!(
                    "{}: fixture names start with `valid` or `invalid`",
                    path.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn compose_findings_say_what_breaks_and_what_to_do() {
    // Messages follow one convention: no trailing period, a note with the
    // run-time failure, and a help with the remedy.
    let config = config_selecting(&["ALL"]);
    for rule in RULES {
        for path in fixture_files(rule.code) {
            for d in lint(&path, &config).diagnostics {
                assert!(
                    !d.message.ends_with('.'),
                    "{}: message ends with a period: {}",
                    d.code,
                    d.message
                );
                assert!(
                    d.help.is_some(),
                    "{}: no help in {}",
                    d.code,
                    path.display()
                );
                if !meta(d.code).applies_to(Target::Suppression) {
                    assert!(
                        d.note.is_some(),
                        "{}: no note in {}",
                        d.code,
                        path.display()
                    );
                }
            }
        }
    }
}
