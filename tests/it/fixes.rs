//! Fix fixtures: for every invalid fixture whose findings carry fixes, the
//! unified diff (`<file>.diff`) and the fixed text (`<file>.fixed`) are
//! snapshotted next to it. Each diff must apply with `git apply`, each fix
//! must pass the engine's verification, and fixing the fixed text again
//! must change nothing. Rule docs must declare the fixes their rules offer.

use crate::common;

use common::{Fixture, assert_snapshot, config_selecting, fixtures, root, with_rule_codes};
use gpulint::engine::Session;
use gpulint::engine::config::Config;
use gpulint::engine::fix::{FixMode, fix_text, unified_diff, verify_as_advertised};
use gpulint::fix::Applicability;
use gpulint::rules::RuleCode;
use gpulint::rules::{FixKind, RULES, Target, meta};
use std::path::{Path, PathBuf};
use std::process::Command;

const ALL_FIXES: FixMode = FixMode { unsafe_fixes: true };

/// The files of a rule's invalid fixtures, each with its fixture.
fn invalid_fixtures(code: RuleCode) -> Vec<(PathBuf, std::rc::Rc<Fixture>)> {
    fixtures(code)
        .into_iter()
        .filter(|f| f.name().starts_with("invalid"))
        .flat_map(|f| {
            let f = std::rc::Rc::new(f);
            f.files
                .clone()
                .into_iter()
                .map(move |file| (file, f.clone()))
        })
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// Fixtures whose fixes change the file, with their expected diff and fixed text.
struct Case {
    path: PathBuf,
    original: String,
    diff: String,
    fixed: String,
}

/// Every fixable fixture of every rule, and what failed.
fn cases() -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut failures = Vec::new();
    for rule in RULES {
        let (rule_cases, rule_failures) = rule_cases(rule.code);
        cases.extend(rule_cases);
        failures.extend(rule_failures);
    }
    (cases, failures)
}

/// The fixtures of one rule whose fixes change the file, each checked
/// against its `.diff` and `.fixed` snapshots, verified and fixed again;
/// and what failed. A suppression rule offers no fix: its folder must hold
/// no fix snapshot.
fn rule_cases(code: RuleCode) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut failures = Vec::new();
    if meta(code).applies_to(Target::Suppression) {
        let dir = root().join("fixtures").join(code.as_str());
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|e| e == "diff" || e == "fixed")
            {
                failures.push(format!(
                    "{}: a suppression rule offers no fix, but a fix snapshot exists",
                    path.display()
                ));
            }
        }
        return (cases, failures);
    }
    let config = config_selecting(&[code.as_str()]);
    for (path, fixture) in invalid_fixtures(code) {
        let original = std::fs::read_to_string(&path).unwrap();
        let outcome = match fix_text(&original, Path::new(&relative(&path)), &config, ALL_FIXES) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: {}", path.display(), e.message));
                continue;
            }
        };
        for failed in &outcome.failed {
            failures.push(format!(
                "{}: {} fix {:?} failed verification: {}",
                path.display(),
                failed.code,
                failed.title,
                failed.reason
            ));
        }
        let diff_snap = fixture.snapshot(&path, ".diff");
        let fixed_snap = fixture.snapshot(&path, ".fixed");
        if !outcome.changed(&original) {
            if diff_snap.exists() || fixed_snap.exists() {
                failures.push(format!(
                    "{}: no fix applies, but fix snapshots exist",
                    path.display()
                ));
            }
            continue;
        }
        let diff = unified_diff(&relative(&path), &original, &outcome.fixed_text);
        for (snap, actual) in [(&diff_snap, &diff), (&fixed_snap, &outcome.fixed_text)] {
            if let Err(e) = assert_snapshot(snap, actual) {
                failures.push(e);
            }
        }
        // A second run finds nothing more to fix.
        let again = fix_text(
            &outcome.fixed_text,
            Path::new(&relative(&path)),
            &config,
            ALL_FIXES,
        )
        .unwrap();
        if again.changed(&outcome.fixed_text) {
            failures.push(format!(
                "{}: a second --fix changed the file again:\n{}",
                path.display(),
                unified_diff(&relative(&path), &outcome.fixed_text, &again.fixed_text)
            ));
        }
        cases.push(Case {
            path,
            original,
            diff,
            fixed: outcome.fixed_text,
        });
    }
    (cases, failures)
}

/// One test per rule, named by its code (`fixes::SHM001`): its fixes
/// match their snapshots, pass verification and are idempotent.
macro_rules! fix_tests {
    ($( $family:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        $($(
            #[test]
            #[allow(non_snake_case)]
            fn $code() {
                let (_, failures) = rule_cases(RuleCode::$code);
                assert!(failures.is_empty(), "{}", failures.join("\n\n"));
            }
        )*)*
    };
}
with_rule_codes!(fix_tests);

#[test]
fn every_fixable_rule_has_a_fixture_showing_its_fix() {
    let (cases, _) = cases();
    assert!(
        cases.len() >= 10,
        "only {} fixtures have fixes",
        cases.len()
    );
    for rule in RULES {
        let kind = meta(rule.code).fix;
        if matches!(kind, FixKind::Safe | FixKind::Unsafe) {
            let dir = root().join("fixtures").join(rule.code.as_str());
            assert!(
                cases.iter().any(|c| c.path.starts_with(&dir)),
                "{}: the doc says its fix is {kind:?}, but no fixture's fix changes anything",
                rule.code
            );
        }
    }
}

#[test]
fn rule_docs_declare_the_fixes_their_rules_offer() {
    // The doc's `fix` is the most a rule offers; an edit into a shared
    // anchor may make one unsafe, never more permissive.
    for rule in RULES {
        let declared = match meta(rule.code).fix {
            FixKind::None => None,
            FixKind::Safe => Some(Applicability::Safe),
            FixKind::Unsafe => Some(Applicability::Unsafe),
            FixKind::DisplayOnly => Some(Applicability::DisplayOnly),
        };
        let config = config_selecting(&[rule.code.as_str()]);
        let mut offered = Vec::new();
        for (path, _) in invalid_fixtures(rule.code) {
            let report = common::lint(&path, &config);
            offered.extend(
                report
                    .diagnostics
                    .iter()
                    .filter(|d| d.code == rule.code)
                    .filter_map(|d| d.fix.as_ref().map(|f| f.applicability)),
            );
        }
        match declared {
            None => assert!(
                offered.is_empty(),
                "{}: doc says `fix = \"none\"` but fixes are offered",
                rule.code
            ),
            Some(declared) => {
                assert!(
                    offered.contains(&declared),
                    "{}: doc says {declared:?} but the fixtures show {offered:?}",
                    rule.code
                );
                assert!(
                    offered.iter().all(|a| *a <= declared),
                    "{}: a fix is more permissive than the doc's {declared:?}: {offered:?}",
                    rule.code
                );
            }
        }
    }
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Copies each fixture into a scratch tree at its repository path and applies the diff there.
fn apply_each(tool: &str, args: &[&str]) -> Vec<String> {
    let (cases, _) = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let scratch = tempfile::tempdir().unwrap();
        let target = scratch.path().join(relative(&case.path));
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, &case.original).unwrap();
        let patch = scratch.path().join("fix.diff");
        std::fs::write(&patch, &case.diff).unwrap();
        let result = run(Command::new(tool)
            .args(args)
            .arg(&patch)
            .current_dir(scratch.path()));
        if let Err(e) = result {
            failures.push(format!("{}: {e}", case.path.display()));
            continue;
        }
        let patched = std::fs::read_to_string(&target).unwrap();
        if patched != case.fixed {
            failures.push(format!(
                "{}: `{tool}` produced different text than --fix",
                case.path.display()
            ));
        }
    }
    failures
}

#[test]
fn every_fix_diff_applies_with_git_apply() {
    let failures = apply_each("git", &["apply", "--whitespace=nowarn"]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs GNU patch (`git apply` is checked by its own test): run by .ci/run"]
fn every_fix_diff_applies_with_patch_p1() {
    assert!(
        Command::new("patch").arg("--version").output().is_ok(),
        "`patch` is not installed"
    );
    let failures = apply_each("patch", &["-p1", "--quiet", "--forward", "-i"]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn insert_only_fixes_leave_every_other_byte_alone() {
    // BOM, CRLF, tabs in comments, odd indentation, flow style, quoting, no final newline.
    let original = "\u{feff}# GPU stack\r\nservices:\r\n\r\n   trainer:     # main job\r\n       image: 'nvcr.io/nvidia/pytorch:24.01-py3'\t# pinned\r\n       command: [\"torchrun\", \"--nproc_per_node=4\", \"train.py\"]\r\n       deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 4}]}}}\r\n\r\n   # a CPU helper\r\n   redis: {image: \"redis:7\"}";
    let config = config_selecting(&["SHM001", "GPU002", "ULIM001"]);
    let outcome = fix_text(
        original,
        Path::new("c.yml"),
        &config,
        FixMode {
            unsafe_fixes: false,
        },
    )
    .unwrap();
    assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
    let codes: Vec<RuleCode> = outcome.applied.iter().map(|a| a.code).collect();
    assert_eq!(codes.len(), 3, "{codes:?}");
    let fixed = &outcome.fixed_text;
    assert!(fixed.starts_with('\u{feff}') && !fixed.ends_with('\n'));
    assert!(
        !fixed.replace("\r\n", "").contains('\n'),
        "a bare LF crept in:\n{fixed}"
    );
    // Only insertions: every byte of the original survives, in order.
    let diff = similar::TextDiff::from_chars(original, fixed.as_str());
    for op in diff.ops() {
        assert!(
            matches!(op.tag(), similar::DiffTag::Equal | similar::DiffTag::Insert),
            "the fix deleted or replaced original text: {op:?}\n{fixed}"
        );
    }
    assert_eq!(
        fixed,
        "\u{feff}# GPU stack\r\nservices:\r\n\r\n   trainer:     # main job\r\n       image: 'nvcr.io/nvidia/pytorch:24.01-py3'\t# pinned\r\n       command: [\"torchrun\", \"--nproc_per_node=4\", \"train.py\"]\r\n       deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 4, capabilities: [gpu]}]}}}\r\n       shm_size: \"8gb\"\r\n       ulimits:\r\n           memlock: -1\r\n\r\n   # a CPU helper\r\n   redis: {image: \"redis:7\"}"
    );
}

/// Many services merging one anchor: each finding's fix edits the anchor,
/// names three of the services it also changes and counts the rest, and
/// applying one fixes every service; no fix fails its verification.
#[test]
fn a_fix_on_an_anchor_many_services_merge_names_a_few_and_fixes_all() {
    let mut text = String::from(
        "x-gpu: &gpu\n  image: nvcr.io/nvidia/pytorch:24.01-py3\n  command: torchrun train.py\n  shm_size: 1gb\n  gpus: all\nservices:\n",
    );
    for i in 0..6 {
        text.push_str(&format!("  s{i}:\n    <<: *gpu\n"));
    }
    let config = config_selecting(&["SHM002"]);
    let diagnostics =
        gpulint::engine::lint_text(&text, Path::new("compose.yaml"), &config).unwrap();
    assert_eq!(diagnostics.len(), 6);
    let fix = diagnostics[0].fix.as_ref().unwrap();
    assert_eq!(
        fix.title,
        "Raise `shm_size` to \"3gb\" (in anchor `&gpu`, which also changes `s1`, `s2`, `s3` and 2 more)"
    );
    assert_eq!(fix.applicability, Applicability::Unsafe);
    let outcome = fix_text(
        &text,
        Path::new("compose.yaml"),
        &config,
        FixMode { unsafe_fixes: true },
    )
    .unwrap();
    assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
    assert!(
        outcome.fixed_text.contains("  shm_size: 3gb\n"),
        "{}",
        outcome.fixed_text
    );
    let after = gpulint::engine::lint_text(&outcome.fixed_text, Path::new("compose.yaml"), &config);
    assert_eq!(after.unwrap().len(), 0);
}

/// Every fix applies on its own as its finding says it does: "(safe:
/// `--fix` applies it)" must mean `--fix` applies it, whatever other rules
/// then say of the fixed file, and an unsafe one must apply with
/// `--unsafe-fixes`. Checked on every fixture with the default rules (a
/// fixture's own test selects its rule only), so a fix that another rule's
/// finding undoes (SHM003's `size=1gb` to `1g` where SHM002 wants more)
/// is caught.
#[test]
fn every_fix_applies_on_its_own_as_advertised() {
    let config = Config::default();
    let session = Session::on_disk();
    let mut failures = Vec::new();
    let mut checked = 0;
    let folders = RULES
        .iter()
        .map(|r| r.code.as_str().to_string())
        .chain(["_examples".to_string(), "_projects".to_string()]);
    for folder in folders {
        for fixture in common::fixtures_in_folder(&folder) {
            for path in &fixture.files {
                let text = std::fs::read_to_string(path).unwrap();
                let path = PathBuf::from(relative(path));
                let Ok(diagnostics) = session.lint_text(&text, &path, &config) else {
                    continue;
                };
                for d in &diagnostics {
                    let Some(fix) = &d.fix else { continue };
                    if fix.applicability == Applicability::DisplayOnly {
                        continue;
                    }
                    checked += 1;
                    if let Err(reason) =
                        verify_as_advertised(&session, &text, &path, &config, &diagnostics, d)
                    {
                        failures.push(format!(
                            "{}: the {} fix {:?} ({}) does not apply on its own: {reason}",
                            path.display(),
                            d.code,
                            fix.title,
                            fix.applicability.as_str()
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} fixes checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
