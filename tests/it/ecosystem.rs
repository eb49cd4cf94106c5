//! The ecosystem check (`scripts/ecosystem.py`): gpulint at the root of
//! every repository of `../shared/ecosystem`, against the reviewed baseline
//! `scripts/ecosystem/baseline.tsv`. The check itself is tested here on a
//! small ecosystem made in a temporary directory: it passes when the
//! findings match, and fails, saying what changed, on a finding added, one
//! removed, a severity changed, an unjudged line and an unrecorded file
//! error.

use crate::common;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn ecosystem_check(ecosystem: &Path, baseline: &Path, errors: &Path, update: bool) -> Output {
    let mut command = Command::new("python3");
    command
        .arg(common::root().join("scripts/ecosystem.py"))
        .arg("--gpulint")
        .arg(env!("CARGO_BIN_EXE_gpulint"))
        .arg("--ecosystem")
        .arg(ecosystem)
        .arg("--baseline")
        .arg(baseline)
        .arg("--errors")
        .arg(errors)
        .arg("--jobs")
        .arg("1");
    if update {
        command.arg("--update");
    }
    command.output().expect("python3 runs scripts/ecosystem.py")
}

/// One repository with one finding (SHM001 on a torchrun service) and one
/// file gpulint cannot parse.
fn small_ecosystem(dir: &Path) {
    let repo = dir.join("repos/acme__trainer");
    fs::create_dir_all(&repo).unwrap();
    fs::write(
        dir.join("SOURCES.tsv"),
        "repo\tcommit\tfiles\tkinds\twhy\nacme/trainer\t0000000\t2\tcompose\ta test\n",
    )
    .unwrap();
    fs::write(
        repo.join("compose.yaml"),
        "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node=4 train.py\n    gpus: all\n",
    )
    .unwrap();
    fs::write(
        repo.join("broken.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n",
    )
    .unwrap();
}

/// The baseline with every `?` verdict judged.
fn judge(baseline: &Path, errors: &Path) {
    let judged = fs::read_to_string(baseline)
        .unwrap()
        .replace("\t?\t", "\tTRUE\t");
    fs::write(baseline, judged).unwrap();
    let recorded = fs::read_to_string(errors)
        .unwrap()
        .replace("\t? ", "\tthe flow mapping is never closed: ");
    fs::write(errors, recorded).unwrap();
}

#[test]
fn the_ecosystem_check_fails_on_every_change_to_the_reviewed_findings() {
    let dir = tempfile::tempdir().unwrap();
    small_ecosystem(dir.path());
    let baseline = dir.path().join("baseline.tsv");
    let errors = dir.path().join("errors.tsv");
    // The check against the baseline as it stands: its exit code, then what
    // it printed.
    let check = |expected: i32| {
        let output = ecosystem_check(dir.path(), &baseline, &errors, false);
        let out = common::stdout(&output);
        assert_eq!(output.status.code(), Some(expected), "{out}");
        out
    };

    // A new baseline has unjudged lines: the check fails until they are read.
    let first = ecosystem_check(dir.path(), &baseline, &errors, true);
    assert_eq!(first.status.code(), Some(1), "{}", common::stdout(&first));
    assert!(common::stdout(&first).contains("without a TRUE or NOISE verdict"));
    let written = fs::read_to_string(&baseline).unwrap();
    assert!(
        written.contains("acme__trainer\t./compose.yaml\t2\tSHM001\t"),
        "{written}"
    );

    judge(&baseline, &errors);
    let out = check(0);
    assert!(
        out.contains("the findings match the reviewed baseline"),
        "{out}"
    );
    assert!(
        out.contains("warnings and errors: 1, TRUE 1 (100.0%)"),
        "{out}"
    );

    // An injected finding: a second GPU service.
    let compose = dir.path().join("repos/acme__trainer/compose.yaml");
    let healthy = fs::read_to_string(&compose).unwrap();
    fs::write(
        &compose,
        format!("{healthy}  second:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node=2 t.py\n    gpus: all\n"),
    )
    .unwrap();
    let out = check(1);
    // SHM001 and ULIM001 (memlock) on the new service.
    assert!(out.contains("### acme__trainer (+2 -0)"), "{out}");
    assert!(out.contains("+ ./compose.yaml:6 SHM001 error:"), "{out}");
    assert!(out.contains("2 findings not in the baseline"), "{out}");

    // The finding gone: the config fixed.
    fs::write(
        &compose,
        healthy.replace("gpus: all\n", "gpus: all\n    ipc: host\n"),
    )
    .unwrap();
    let out = check(1);
    assert!(
        out.contains("- ./compose.yaml:2 SHM001 error (TRUE:"),
        "{out}"
    );
    assert!(
        out.contains("1 baseline findings no longer reported"),
        "{out}"
    );

    // A file error nobody recorded.
    fs::write(&compose, &healthy).unwrap();
    fs::write(
        dir.path().join("repos/acme__trainer/other.yaml"),
        "apiVersion: v1\nkind: Pod\nspec: [\n",
    )
    .unwrap();
    let out = check(1);
    assert!(
        out.contains("! file error not recorded: ./other.yaml"),
        "{out}"
    );
}

/// The CI tier: every repository of `../shared/ecosystem` against the
/// committed baseline.
#[test]
#[ignore = "needs ../shared/ecosystem: run by .ci/run"]
fn findings_on_real_repositories_match_the_reviewed_baseline() {
    let ecosystem = common::required_shared("ecosystem");
    let root = common::root();
    let output = ecosystem_check(
        &ecosystem,
        &root.join("scripts/ecosystem/baseline.tsv"),
        &root.join("scripts/ecosystem/errors.tsv"),
        false,
    );
    let out = common::stdout(&output);
    println!("{out}");
    assert_eq!(
        output.status.code(),
        Some(0),
        "the ecosystem's findings differ from the reviewed baseline:\n{out}\n{}",
        common::stderr(&output)
    );
}
