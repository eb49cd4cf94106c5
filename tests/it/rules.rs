//! The fixture harness: for every rule, `fixtures/<CODE>/invalid*` (YAML or
//! a Dockerfile such as `invalid_cpu_wheel.Dockerfile`)
//! must produce the rule's findings (their rendering is snapshotted next to
//! the input as `<file>.snap`) and `valid*` must produce none.

use crate::common;

use common::{
    TESTED_RULE_CODES, assert_snapshot, config_selecting, fixtures, lint, render, root,
    with_rule_codes,
};
use gpulint::rules::RuleCode;
use gpulint::rules::{RULES, Target, meta};
use std::collections::BTreeSet;

/// One rule's fixtures: each `invalid*` one makes the rule fire (its
/// rendering matches the snapshot beside it), each `valid*` one none.
fn assert_fixtures(code: RuleCode) {
    let mut failures = Vec::new();
    // Suppression rules need the other rules running to have something to suppress.
    let config = if meta(code).applies_to(Target::Suppression) {
        config_selecting(&["ALL"])
    } else {
        config_selecting(&[code.as_str()])
    };
    for fixture in fixtures(code) {
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
            own += report.diagnostics.iter().filter(|d| d.code == code).count();
            rendered.push_str(&render(&report));
        }
        if name.starts_with("invalid") {
            if own == 0 {
                failures.push(format!("{}: expected {} to fire", path.display(), code));
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
                    code,
                ));
            }
        } else {
            failures.push(format!(
                "{}: fixture names start with `valid` or `invalid`",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One test per rule, named by its code (`rules::SHM001`), so that one
/// rule's fixtures run alone.
macro_rules! fixture_tests {
    ($( $family:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        $($(
            #[test]
            #[allow(non_snake_case)]
            fn $code() {
                assert_fixtures(RuleCode::$code);
            }
        )*)*
    };
}
with_rule_codes!(fixture_tests);

/// A rule or a fixture folder that `with_rule_codes!` misses would have no
/// fixture test at all: this fails instead.
#[test]
fn every_fixture_folder_and_rule_has_its_own_test() {
    let tested: BTreeSet<&str> = TESTED_RULE_CODES.iter().copied().collect();
    let rules: BTreeSet<&str> = RULES.iter().map(|r| r.code.as_str()).collect();
    let folders: BTreeSet<String> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .filter(|name| !name.starts_with('_'))
        .collect();
    if let Err(message) = missing_tests(&tested, &rules, &folders) {
        panic!("{message}");
    }
}

/// The rules and fixture folders (`_`-prefixed ones are shared, not a
/// rule's) that have no test among `tested`.
fn missing_tests(
    tested: &BTreeSet<&str>,
    rules: &BTreeSet<&str>,
    folders: &BTreeSet<String>,
) -> Result<(), String> {
    let untested: Vec<&str> = rules
        .iter()
        .copied()
        .chain(folders.iter().map(String::as_str))
        .filter(|code| !tested.contains(code))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if untested.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no fixture test for {untested:?}: register the rule in for_each_rule! (crates/gpulint-base/src/codes.rs) or remove the folder"
        ))
    }
}

#[test]
fn missing_tests_names_an_untested_rule_and_folder() {
    let tested = BTreeSet::from(["SHM001"]);
    let rules = BTreeSet::from(["SHM001", "SHM002"]);
    let folders = BTreeSet::from(["SHM001".to_string(), "NEW001".to_string()]);
    let error = missing_tests(&tested, &rules, &folders).unwrap_err();
    assert!(error.contains(r#"["NEW001", "SHM002"]"#), "{error}");
    assert!(missing_tests(&tested, &BTreeSet::from(["SHM001"]), &BTreeSet::new()).is_ok());
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
