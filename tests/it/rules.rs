//! The fixture harness: for every rule, `fixtures/<CODE>/invalid*` (YAML or
//! a Dockerfile such as `invalid_cpu_wheel.Dockerfile`)
//! must produce the rule's findings (their rendering is snapshotted next to
//! the input as `<file>.snap`) and `valid*` must produce none.

use crate::common;

use common::{assert_snapshot, config_selecting, fixtures, lint, render};
use gpulint::rules::RuleCode;
use gpulint::rules::{RULES, Target, meta};

#[test]
fn every_rule_fires_on_its_invalid_fixtures_and_stays_quiet_on_valid_ones() {
    let mut failures = Vec::new();
    for rule in RULES {
        // Suppression rules need the other rules running to have something to suppress.
        let config = if meta(rule.code).applies_to(Target::Suppression) {
            config_selecting(&["ALL"])
        } else {
            config_selecting(&[rule.code.as_str()])
        };
        for fixture in fixtures(rule.code) {
            let name = fixture.name();
            let path = &fixture.path;
            let mut own = 0;
            let mut rendered = String::new();
            for file in &fixture.files {
                let report = lint(file, &config);
                if let Some(e) = &report.error {
                    failures.push(format!("{}: {}", file.display(), e.message));
                    continue;
                }
                own += report
                    .diagnostics
                    .iter()
                    .filter(|d| d.code == rule.code)
                    .count();
                rendered.push_str(&render(&report));
            }
            if name.starts_with("invalid") {
                if own == 0 {
                    failures.push(format!(
                        "{}: expected {} to fire",
                        path.display(),
                        rule.code
                    ));
                }
                let snap = fixture.snapshot(path, ".snap");
                if let Err(e) = assert_snapshot(&snap, &rendered) {
                    failures.push(e);
                }
            } else if name.starts_with("valid") {
                if own != 0 {
                    failures.push(format!(
                        "{}: {} fired on a valid fixture:\n{rendered}",
                        path.display(),
                        rule.code,
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
        for path in fixtures(rule.code).into_iter().flat_map(|f| f.files) {
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

#[test]
fn dockerfile_suppressions_are_whole_line_comments() {
    let config = config_selecting(&["ALL"]);
    let text = "FROM nvcr.io/nvidia/pytorch:24.01-py3\n# gpulint: ignore[DF005] the demo box has one GPU\nENV CUDA_VISIBLE_DEVICES=0\nRUN echo hi # gpulint: ignore[NCCL002] not a comment in a Dockerfile\nENV NCCL_P2P_DISABLE=1\n";
    let report = gpulint::engine::check_text("Dockerfile".into(), text.to_string(), &config);
    let codes: Vec<RuleCode> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [RuleCode::NCCL002], "{}", render(&report));
}
