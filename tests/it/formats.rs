//! The CI report formats (`github`, `sarif`, `gitlab`, `junit`),
//! `--output-file` and `--fail-on`, end to end through the binary; SARIF is
//! checked with the official schema and Microsoft's SARIF multitool.

use crate::common;

use common::{copy_dir, gpulint, stdout, workflow_commands, write};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const GPU_SERVICE: &str =
    "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n";

/// A repository with a finding whose second span is in another file, one
/// whose names need escaping, and a file that is not YAML.
fn mixed_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &common::root().join("fixtures/SHM001/invalid_builds_ngc_image"),
        &dir.path().join("builds"),
    );
    // `%`, `:` and `,` in the path; `%` in the service name, which the
    // message quotes; CR in a path segment.
    write(
        dir.path(),
        "odd,dir:50%/docker-compose.yml",
        GPU_SERVICE.replace("trainer", "train%er"),
    );
    write(dir.path(), "cr\rdir/compose.yaml", GPU_SERVICE);
    write(dir.path(), "broken/compose.yaml", "services: [1, 2\n");
    dir
}

#[test]
fn github_format_snapshot() {
    let repo = mixed_repository();
    let out = gpulint(repo.path(), &["check", "--output-format", "github", "."]);
    assert_eq!(out.status.code(), Some(2), "a file could not be linted");
    let text = stdout(&out);
    // Workflow commands are one line each, whatever the message holds.
    for line in text.lines() {
        assert!(line.starts_with("::"), "not a workflow command: {line:?}");
        assert!(!line.contains('\r'), "raw CR in {line:?}");
    }
    assert!(
        text.contains("file=odd%2Cdir%3A50%25/docker-compose.yml,line=2,col=3,"),
        "{text}"
    );
    assert!(text.contains("file=cr%0Ddir/compose.yaml,"), "{text}");
    assert!(text.contains("::GPU service `train%25er` runs"), "{text}");
    assert!(
        text.contains("title=gpulint SHM001 (default-shm-on-gpu-service)::"),
        "{text}"
    );
    assert!(
        text.contains("%0Abuilds/trainer/Dockerfile:4:6: "),
        "the cross-file span is named in the message: {text}"
    );
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort(); // discovery runs in parallel; the snapshot is of the set
    common::assert_snapshot(
        &common::root().join("tests/snapshots/github_format.txt"),
        &(lines.join("\n") + "\n"),
    )
    .unwrap();
}

fn sarif_of_fixtures() -> (Value, String) {
    let out = gpulint(
        &common::root(),
        &["check", "--output-format", "sarif", "fixtures"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    (serde_json::from_str(&text).expect("SARIF is JSON"), text)
}

#[test]
fn sarif_carries_rules_regions_related_locations_and_fixes() {
    let (sarif, _) = sarif_of_fixtures();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), gpulint::rules::all_meta().len());
    for (rule, meta) in rules.iter().zip(gpulint::rules::all_meta()) {
        assert_eq!(rule["id"], meta.code.as_str());
        let help = rule["help"]["markdown"].as_str().unwrap();
        assert!(
            help.contains(meta.body),
            "{}: help is the rule doc",
            meta.code
        );
        assert!(
            rule["helpUri"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/rules/{}.md", meta.code))
        );
    }
    let results = run["results"].as_array().unwrap();
    assert!(results.len() > 100, "{} results", results.len());
    for result in results {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        let location = &result["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert!(
            location["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .starts_with("fixtures/")
        );
        assert!(location["region"]["startLine"].as_u64().unwrap() >= 1);
    }
    // The compose service that builds an NGC image points into its Dockerfile.
    let cross_file = results
        .iter()
        .find(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == "fixtures/SHM001/invalid_builds_ngc_image/compose.yml"
        })
        .expect("the cross-file fixture is reported");
    let related = &cross_file["relatedLocations"][0];
    assert_eq!(related["id"], 1);
    assert!(
        cross_file["message"]["text"]
            .as_str()
            .unwrap()
            .contains("\n[fixtures/SHM001/invalid_builds_ngc_image/trainer/Dockerfile:4:6](1): "),
        "the message links to the related location: {}",
        cross_file["message"]["text"]
    );
    assert_eq!(
        related["physicalLocation"]["artifactLocation"]["uri"],
        "fixtures/SHM001/invalid_builds_ngc_image/trainer/Dockerfile"
    );
    assert_eq!(related["physicalLocation"]["region"]["startLine"], 4);
    assert!(
        related["message"]["text"]
            .as_str()
            .unwrap()
            .contains("nvcr.io/nvidia/pytorch:24.01-py3")
    );
    assert!(results.iter().any(|r| r["fixes"].is_array()));
}

/// Byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    start
        + text[start..]
            .chars()
            .take(column as usize - 1)
            .map(char::len_utf8)
            .sum::<usize>()
}

#[test]
fn sarif_fix_regions_are_the_json_reports_byte_edits() {
    let (sarif, _) = sarif_of_fixtures();
    let out = gpulint(
        &common::root(),
        &["check", "--output-format", "json", "fixtures"],
    );
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(results.len(), diagnostics.len());
    let mut checked = 0;
    for (result, diagnostic) in results.iter().zip(diagnostics) {
        assert_eq!(result["ruleId"], diagnostic["code"]);
        let Some(fix) = result["fixes"].get(0) else {
            assert!(diagnostic["fix"].is_null());
            continue;
        };
        let path = diagnostic["path"].as_str().unwrap();
        let text = std::fs::read_to_string(common::root().join(path)).unwrap();
        let mut expected: Vec<(u64, u64, &str)> = diagnostic["fix"]["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["start"]["offset"].as_u64().unwrap(),
                    e["end"]["offset"].as_u64().unwrap(),
                    e["content"].as_str().unwrap(),
                )
            })
            .collect();
        expected.sort();
        let actual: Vec<(u64, u64, &str)> = fix["artifactChanges"][0]["replacements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let region = &r["deletedRegion"];
                let at = |line: &str, column: &str| {
                    offset_of(
                        &text,
                        region[line].as_u64().unwrap(),
                        region[column].as_u64().unwrap(),
                    ) as u64
                };
                (
                    at("startLine", "startColumn"),
                    at("endLine", "endColumn"),
                    r["insertedContent"]["text"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(actual, expected, "{path}: {}", result["ruleId"]);
        checked += 1;
    }
    assert!(checked > 30, "only {checked} fixes compared");
}

/// The fixture set's SARIF in `dir`, and a copy that `break_it` spoils.
fn sarif_reports(dir: &Path, break_it: impl FnOnce(&mut Value)) -> (PathBuf, PathBuf) {
    let (mut sarif, text) = sarif_of_fixtures();
    let report = dir.join("fixtures.sarif");
    std::fs::write(&report, text).unwrap();
    break_it(&mut sarif);
    let broken = dir.join("broken.sarif");
    std::fs::write(&broken, sarif.to_string()).unwrap();
    (report, broken)
}

#[test]
#[ignore = "needs Python jsonschema and the SARIF 2.1.0 schema (GPULINT_SARIF_SCHEMA): installed by .ci/run"]
fn sarif_validates_against_the_official_schema() {
    let python = common::required_tool(
        "GPULINT_JSONSCHEMA_PYTHON",
        "python3",
        "a Python with `pip install jsonschema`",
    );
    let schema = std::env::var_os("GPULINT_SARIF_SCHEMA").expect(
        "GPULINT_SARIF_SCHEMA names the sarif-2.1.0.json of npm @microsoft/sarif-multitool (.ci/run sets it)",
    );
    let scratch = tempfile::tempdir().unwrap();
    // A report broken on purpose shows the validator can fail.
    let (report, broken_report) = sarif_reports(scratch.path(), |sarif| {
        sarif["runs"][0]["results"][0]["level"] = "severe".into();
    });
    let script = "import json, sys\n\
        from jsonschema.validators import validator_for\n\
        schema = json.load(open(sys.argv[1]))\n\
        validator = validator_for(schema)(schema)\n\
        for path in sys.argv[2:]:\n\
        \x20   errors = list(validator.iter_errors(json.load(open(path))))\n\
        \x20   print(path, len(errors), [e.message for e in errors[:5]])\n";
    let out = Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(&schema)
        .arg(&report)
        .arg(&broken_report)
        .output()
        .unwrap();
    let printed = stdout(&out);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = printed.lines().collect();
    assert!(lines[0].ends_with("fixtures.sarif 0 []"), "{printed}");
    assert!(lines[1].contains("broken.sarif 1 ["), "{printed}");
}

#[test]
#[ignore = "needs the SARIF multitool: installed by .ci/run"]
fn sarif_passes_the_sarif_multitool() {
    let multitool = common::required_tool(
        "GPULINT_SARIF_MULTITOOL",
        "sarif-multitool",
        "npm install @microsoft/sarif-multitool",
    );
    let scratch = tempfile::tempdir().unwrap();
    // The multitool's own rules (SARIF1xxx errors, SARIF2xxx warnings, as
    // GitHub code scanning applies them); a bad URI shows it can fail.
    let (report, broken_report) = sarif_reports(scratch.path(), |sarif| {
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
            "/absolute/with/base.yml".into();
    });
    let problems = |path: &Path| {
        // The file goes first: `--level` would take it as another level.
        let out = Command::new(&multitool)
            .arg("validate")
            .arg(path)
            .args(["--level", "Error;Warning;Note"])
            .output()
            .unwrap();
        let printed = stdout(&out) + &String::from_utf8_lossy(&out.stderr);
        assert!(printed.contains("1 files scanned"), "{printed}");
        printed
            .lines()
            .filter(|l| l.contains(": error ") || l.contains(": warning ") || l.contains(": note "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(problems(&report), Vec::<String>::new());
    let found = problems(&broken_report);
    assert!(found.iter().any(|l| l.contains("SARIF1004")), "{found:?}");
}

fn gitlab_issues(dir: &Path) -> Vec<Value> {
    let out = gpulint(dir, &["check", "--output-format", "gitlab", "."]);
    serde_json::from_str(&stdout(&out)).expect("Code Quality JSON")
}

#[test]
fn gitlab_fingerprints_survive_moved_lines_and_tell_twins_apart() {
    let dir = tempfile::tempdir().unwrap();
    // Two services with the same NCCL setting: two findings on equal text.
    let compose = "services:\n  a:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: 8gb\n    environment:\n      NCCL_P2P_DISABLE: \"1\"\n  b:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: 8gb\n    environment:\n      NCCL_P2P_DISABLE: \"1\"\n";
    write(dir.path(), "compose.yaml", compose);
    let before = gitlab_issues(dir.path());
    write(
        dir.path(),
        "compose.yaml",
        format!("# a comment\n\n{compose}"),
    );
    let after = gitlab_issues(dir.path());
    assert_eq!(before.len(), after.len());
    assert!(before.len() >= 2);
    let fingerprints = |issues: &[Value]| {
        issues
            .iter()
            .map(|i| i["fingerprint"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(fingerprints(&before), fingerprints(&after));
    let mut unique = fingerprints(&before);
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), before.len(), "fingerprints are unique");
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b["check_name"], a["check_name"]);
        assert_eq!(b["location"]["path"], "compose.yaml");
        let line = |i: &Value| {
            i["location"]["positions"]["begin"]["line"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(
            line(a),
            line(b) + 2,
            "the lines moved, the fingerprint did not"
        );
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&a["severity"].as_str().unwrap())
        );
        assert!(
            a["description"]
                .as_str()
                .unwrap()
                .starts_with(a["check_name"].as_str().unwrap())
        );
    }
}

#[test]
fn junit_report_is_well_formed_with_a_case_per_finding() {
    let repo = mixed_repository();
    write(
        repo.path(),
        "clean/compose.yaml",
        "services:\n  web:\n    image: nginx\n",
    );
    write(
        repo.path(),
        "markup/compose.yaml",
        GPU_SERVICE.replace("trainer", "a<b>&\"c\""),
    );
    let out = gpulint(repo.path(), &["check", "--output-format", "junit", "."]);
    let xml = stdout(&out);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(
        suites.len(),
        7,
        "a suite per file, the built Dockerfile too"
    );
    let count = |name: &str| doc.descendants().filter(|n| n.has_tag_name(name)).count();
    let failures = count("failure");
    assert_eq!(
        root.attribute("failures"),
        Some(failures.to_string().as_str())
    );
    assert_eq!(count("error"), 1, "the broken file");
    assert_eq!(root.attribute("errors"), Some("1"));
    let cases = count("testcase");
    assert_eq!(root.attribute("tests"), Some(cases.to_string().as_str()));
    let clean = suites
        .iter()
        .find(|s| s.attribute("name") == Some("clean/compose.yaml"))
        .unwrap();
    assert_eq!(clean.attribute("failures"), Some("0"));
    let markup = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("failure")
                && n.attribute("message")
                    .is_some_and(|m| m.contains("`a<b>&\"c\"`"))
        })
        .expect("markup in messages survives escaping");
    assert!(
        markup
            .text()
            .unwrap()
            .starts_with("markup/compose.yaml:2:3: ")
    );
}

#[test]
fn output_file_writes_the_report_while_the_terminal_shows_text() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE);
    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "sarif",
            "--output-file",
            "reports/gpulint.sarif",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let terminal = stdout(&out);
    assert!(terminal.contains("warning[SHM001]"), "{terminal}");
    assert!(terminal.contains("Found 1 problem"), "{terminal}");
    let sarif: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("reports/gpulint.sarif")).unwrap(),
    )
    .unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "SHM001");

    // FORMAT:PATH reports keep --output-format on the terminal.
    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "github",
            "--output-file",
            "junit:out/junit.xml",
            "--output-file",
            "gitlab:out/codequality.json",
        ],
    );
    assert!(
        stdout(&out).starts_with("::warning file=compose.yaml,"),
        "{}",
        stdout(&out)
    );
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    roxmltree::Document::parse(&junit).unwrap();
    let gitlab: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/codequality.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(gitlab[0]["check_name"], "SHM001");

    // A report that cannot be written is an error, not a silent loss.
    std::fs::create_dir(dir.path().join("taken")).unwrap();
    let out = gpulint(dir.path(), &["check", "--output-file", "json:taken"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write the json report to taken"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn diff_mode_still_reports_findings_to_output_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE);
    let out = gpulint(
        dir.path(),
        &["check", "--diff", "--output-file", "concise:findings.txt"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("--- a/compose.yaml"),
        "{}",
        stdout(&out)
    );
    let findings = std::fs::read_to_string(dir.path().join("findings.txt")).unwrap();
    assert!(
        findings.starts_with("./compose.yaml:2:3: warning[SHM001]"),
        "{findings}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap(),
        GPU_SERVICE
    );
}

#[test]
fn fail_on_sets_the_lowest_severity_that_fails() {
    let dir = tempfile::tempdir().unwrap();
    // A single-process GPU service: SHM001 is a warning, not an error.
    write(dir.path(), "compose.yaml", GPU_SERVICE);
    let status = |fail_on: &str| {
        gpulint(dir.path(), &["check", "-q", "--fail-on", fail_on])
            .status
            .code()
    };
    assert_eq!(status("info"), Some(1));
    assert_eq!(status("warning"), Some(1));
    assert_eq!(status("error"), Some(0));
    assert_eq!(status("never"), Some(0));
    // Files that cannot be linted still fail, whatever the threshold.
    write(dir.path(), "broken/compose.yaml", "services: [1\n");
    assert_eq!(status("never"), Some(2));
    let out = gpulint(
        dir.path(),
        &["check", "--diff", "--fail-on", "never", "compose.yaml"],
    );
    assert_eq!(out.status.code(), Some(0));
}

/// Bytes a terminal acts on: C0 controls but LF and TAB, DEL, and C1.
fn terminal_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect()
}

/// A repository whose names and paths try to inject workflow commands and
/// terminal escapes.
fn hostile_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let hostile =
        "x\\n::error::injected\\e]0;retitled\\a\\u009b2J##[add-mask]secret\\r::warning::again";
    write(
        dir.path(),
        "compose.yaml",
        GPU_SERVICE.replace("  trainer:", &format!("  \"{hostile}\":")),
    );
    write(dir.path(), "nl\n::error::path/compose.yaml", GPU_SERVICE);
    write(dir.path(), "::add-mask::dir/compose.yaml", GPU_SERVICE);
    write(
        dir.path(),
        "bad\n::error::broken/compose.yaml",
        "services: [1, 2\n",
    );
    dir
}

#[test]
fn nothing_read_from_a_file_becomes_a_workflow_command_or_a_terminal_escape() {
    let repo = hostile_repository();
    // Not `--diff`: a patch must hold the file's bytes to apply, so the
    // action stops the runner's command processing around it (and around
    // everything gpulint prints; tests/it/integrations.rs).
    let runs: &[&[&str]] = &[
        &["check", "--color", "never", "."],
        &["check", "--color", "always", "."],
        &["check", "--output-format", "concise", "."],
        &["check", "--quiet", "."],
        &["check", "--statistics", "."],
        &["inspect", "."],
    ];
    for args in runs {
        let out = gpulint(repo.path(), args);
        let (stdout, stderr) = (stdout(&out), common::stderr(&out));
        assert!(
            stdout.contains("injected") || args.contains(&"--statistics"),
            "{args:?}: the hostile service is reported\n{stdout}"
        );
        for (stream, log) in [("stdout", &stdout), ("stderr", &stderr)] {
            let commands = workflow_commands(log);
            assert!(
                commands.is_empty(),
                "{args:?} {stream}: {commands:#?}\n{log}"
            );
            // --color always paints with ESC itself: only the file's are checked.
            let controls: Vec<char> = terminal_controls(log)
                .into_iter()
                .filter(|&c| !(c == '\u{1b}' && args.contains(&"always")))
                .collect();
            assert!(
                controls.is_empty(),
                "{args:?} {stream}: {controls:?}\n{log}"
            );
        }
    }
    // Colour: only SGR sequences, none from the file (its ESC is `\e`).
    let out = gpulint(repo.path(), &["check", "--color", "always", "."]);
    let text = stdout(&out);
    assert!(text.contains("\\e]0;retitled"), "{text}");
    assert!(!text.contains("\u{1b}]"), "{text:?}");
}

#[test]
fn the_github_format_prints_only_its_own_annotations() {
    let repo = hostile_repository();
    let out = gpulint(repo.path(), &["check", "--output-format", "github", "."]);
    let (stdout, stderr) = (stdout(&out), common::stderr(&out));
    let commands = workflow_commands(&stdout);
    // One per finding and one for the broken file, each a whole line that
    // starts with an annotation command; no other command anywhere.
    assert_eq!(commands.len(), stdout.lines().count(), "{stdout}");
    for command in &commands {
        assert!(
            ["::error ", "::warning ", "::notice "]
                .iter()
                .any(|p| command.starts_with(p)),
            "{command}"
        );
        assert!(terminal_controls(command).is_empty(), "{command:?}");
        assert!(!command.contains("##["), "{command}");
    }
    assert!(
        stdout.contains("x\\n::error::injected\\e]0;retitled"),
        "{stdout}"
    );
    assert!(workflow_commands(&stderr).is_empty(), "{stderr}");
    assert!(terminal_controls(&stderr).is_empty(), "{stderr:?}");
}

/// The checkout's auth header, as actions/checkout writes it into
/// `.git/config`, and a `.env` that is a symlink to that file.
const AUTH_HEADER: &str = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldF90b2tlbg==";

#[cfg(unix)]
#[test]
fn values_from_the_env_file_and_credentials_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".git/config",
        format!(
            "[core]\n\tbare = false\n[http \"https://github.com/\"]\n\textraheader = {AUTH_HEADER}\n"
        ),
    );
    std::os::unix::fs::symlink(".git/config", dir.path().join(".env")).unwrap();
    write(
        dir.path(),
        "compose.yaml",
        "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: ${extraheader}\n",
    );
    // The same header in a `.env` Compose can read: the value reaches
    // `shm_size`, and messages name the variable instead of quoting it.
    write(
        dir.path(),
        "readable/.env",
        format!("extraheader={AUTH_HEADER}\n"),
    );
    write(
        dir.path(),
        "readable/compose.yaml",
        "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: ${extraheader}\n",
    );
    // A token written in a file is not repeated either.
    write(
        dir.path(),
        "run.sh",
        "docker run --gpus all -e HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123 --shm-size=${X:-1g}x nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=8 train.py\n",
    );
    let secrets = ["eC1hY2Nlc3M", "hf_AbCdEfGh"];
    let mut said = String::new();
    for format in [
        "text", "concise", "json", "github", "sarif", "gitlab", "junit",
    ] {
        let out = gpulint(dir.path(), &["check", "--output-format", format, "."]);
        let printed = stdout(&out) + &common::stderr(&out);
        for secret in secrets {
            assert!(!printed.contains(secret), "{format}: {printed}");
        }
        said.push_str(&printed);
    }
    for format in ["text", "json"] {
        let out = gpulint(dir.path(), &["inspect", "--format", format, "."]);
        let printed = stdout(&out) + &common::stderr(&out);
        for secret in secrets {
            assert!(!printed.contains(secret), "inspect {format}: {printed}");
        }
    }
    // Compose cannot parse a git config as a `.env`: the project is
    // refused, at the line, without the line's value.
    assert!(
        said.contains("Compose cannot read ./.env: line 3"),
        "{said}"
    );
    // The finding is still there, naming the variable instead.
    assert!(
        said.contains("is not a valid size: `${extraheader}`"),
        "{said}"
    );
    assert!(
        said.contains("`extraheader=…` in the project's .env"),
        "{said}"
    );
}

/// The whole-run formats are written file by file, spooled and framed at
/// the end (`output::document`): over several chunks of files, with
/// findings and an unreadable file, each document is what a pretty printer
/// writes of its value, on the terminal and in report files alike, and it
/// counts everything it holds.
#[test]
fn whole_run_documents_streamed_over_many_files_are_whole() {
    let dir = tempfile::tempdir().unwrap();
    // More files than one chunk holds on any machine's pool.
    for n in 0..300 {
        write(dir.path(), &format!("svc-{n:03}/compose.yaml"), GPU_SERVICE);
    }
    write(
        dir.path(),
        "svc-150/broken/compose.yaml",
        "services: [1, 2\n",
    );
    let reports = dir.path().join("reports");
    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "json",
            "--output-file",
            &format!("sarif:{}", reports.join("a.sarif").display()),
            "--output-file",
            &format!("gitlab:{}", reports.join("a.gitlab.json").display()),
            "--output-file",
            &format!("junit:{}", reports.join("a.xml").display()),
            "--output-file",
            &format!("json:{}", reports.join("a.json").display()),
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    // With a report file of no format of its own the terminal shows text;
    // every file here names one, so the terminal shows JSON too.
    let terminal = stdout(&out);
    let json_file = std::fs::read_to_string(reports.join("a.json")).unwrap();
    assert_eq!(terminal, json_file);
    let as_printed = |text: &str| {
        let value: Value = serde_json::from_str(text).unwrap();
        let mut again = serde_json::to_string_pretty(&value).unwrap();
        again.push('\n');
        assert_eq!(again, text, "not what the pretty printer writes");
        value
    };
    let json = as_printed(&terminal);
    let findings = json["diagnostics"].as_array().unwrap().len();
    assert_eq!(findings, 300);
    assert_eq!(json["summary"]["findings"], 300);
    assert_eq!(json["errors"].as_array().unwrap().len(), 1);
    assert_eq!(json["summary"]["failed_files"], 1);
    let sarif = as_printed(&std::fs::read_to_string(reports.join("a.sarif")).unwrap());
    let run = &sarif["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 300);
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    let notifications = &run["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(notifications.as_array().unwrap().len(), 1);
    let gitlab = as_printed(&std::fs::read_to_string(reports.join("a.gitlab.json")).unwrap());
    assert_eq!(gitlab.as_array().unwrap().len(), 301);
    let junit = std::fs::read_to_string(reports.join("a.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).unwrap();
    let suites = xml.root_element();
    assert_eq!(suites.attribute("tests"), Some("301"));
    assert_eq!(suites.attribute("failures"), Some("300"));
    assert_eq!(suites.attribute("errors"), Some("1"));
    let suite_count = suites
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .count();
    assert_eq!(suite_count, 301);
}

/// `--output-file` naming one of the run's inputs (walked, named, through
/// a link, the `--config` file) is refused before anything is written:
/// the input is left as it was, and the run exits 2 saying why.
#[test]
fn an_output_file_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/compose.yaml", GPU_SERVICE);
    write(dir.path(), "gpulint.toml", "");
    #[cfg(unix)]
    std::os::unix::fs::symlink("a/compose.yaml", dir.path().join("link.json")).unwrap();
    let runs: &[&[&str]] = &[
        &["check", "--output-file", "json:a/compose.yaml"],
        &["check", "--output-file", "json:a/compose.yaml", "a"],
        &[
            "check",
            "--output-file",
            "sarif:./a/../a/compose.yaml",
            "a/compose.yaml",
        ],
        &["check", "--output-file", "link.json", "."],
        &[
            "check",
            "--config",
            "gpulint.toml",
            "--output-file",
            "json:gpulint.toml",
            "a",
        ],
        &["check", "--fix", "--output-file", "junit:a/compose.yaml"],
    ];
    for args in runs {
        let out = gpulint(dir.path(), args);
        let stderr = common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("which this run reads"),
            "{args:?}: {stderr}"
        );
        assert!(stdout(&out).is_empty(), "{args:?}: nothing is checked");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/compose.yaml")).unwrap(),
            GPU_SERVICE,
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gpulint.toml")).unwrap(),
        ""
    );
    // A report file from an earlier run, in the walked directory, is fine.
    write(dir.path(), "report.json", "{}");
    let out = gpulint(
        dir.path(),
        &["check", "--output-file", "json:report.json", "a"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
}

/// Files a compose project reads while it loads (its `.env`, an
/// `env_file`, an `extends` base) are inputs too: a report written over one
/// would change what the project sets, and the user's file would be lost.
#[test]
fn an_output_file_that_a_project_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let compose = "services:\n  t:\n    extends: {file: base.yaml, service: b}\n    env_file: [train.env]\n    shm_size: ${S:-1g}\n    gpus: all\n";
    write(dir.path(), "compose.yaml", compose);
    write(dir.path(), "base.yaml", "services:\n  b:\n    image: x\n");
    write(dir.path(), ".env", "S=8g\n");
    write(dir.path(), "train.env", "A=1\n");
    for (report, kept) in [
        ("json:.env", "S=8g\n"),
        ("sarif:train.env", "A=1\n"),
        ("json:base.yaml", "services:\n  b:\n    image: x\n"),
    ] {
        let file = report.split_once(':').unwrap().1;
        for args in [
            &["check", "--output-file", report, "."][..],
            &["check", "--output-file", report, "compose.yaml"][..],
        ] {
            let out = gpulint(dir.path(), args);
            let stderr = common::stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains("which this run reads"),
                "{args:?}: {stderr}"
            );
            assert_eq!(
                std::fs::read_to_string(dir.path().join(file)).unwrap(),
                kept,
                "{args:?}"
            );
        }
    }
}

/// A `.env` or `env_file` line Compose cannot parse is refused, and its
/// value is no more shown than a parsed one's: not in the message, not in
/// the frame of the line, in no format.
#[test]
fn an_env_line_compose_cannot_parse_is_not_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let line = "DB_PASSWORD=\"Tr0ub4dor&3 horse\n";
    write(dir.path(), "dotenv/.env", format!("A=1\n{line}"));
    write(dir.path(), "dotenv/compose.yaml", GPU_SERVICE);
    write(dir.path(), "envfile/app.env", format!("A=1\n{line}"));
    write(
        dir.path(),
        "envfile/compose.yaml",
        format!("{GPU_SERVICE}    env_file: app.env\n"),
    );
    // A key Compose refuses, its value after it.
    write(dir.path(), "badkey/.env", "DB@PASSWORD=Tr0ub4dor&3 horse\n");
    write(dir.path(), "badkey/compose.yaml", GPU_SERVICE);
    for format in [
        "text", "concise", "json", "github", "sarif", "gitlab", "junit",
    ] {
        let out = gpulint(dir.path(), &["check", "--output-format", format, "."]);
        let printed = stdout(&out) + &common::stderr(&out);
        assert_eq!(
            printed.matches("PROJ001").count().min(1),
            1,
            "{format}: {printed}"
        );
        for secret in ["Tr0ub4dor", "horse"] {
            assert!(!printed.contains(secret), "{format}: {printed}");
        }
    }
    let out = gpulint(dir.path(), &["check", "."]);
    let text = stdout(&out);
    assert!(
        text.contains("unterminated quoted value ${DB_PASSWORD}"),
        "the message names the variable: {text}"
    );
    assert!(
        text.contains("DB_PASSWORD=******"),
        "the frame masks it: {text}"
    );
    for format in ["text", "json"] {
        let out = gpulint(dir.path(), &["inspect", "--format", format, "."]);
        let printed = stdout(&out) + &common::stderr(&out);
        assert!(
            !printed.contains("Tr0ub4dor"),
            "inspect {format}: {printed}"
        );
    }
}

/// Pieces of hostile names and values: workflow commands, every line break
/// a runner or a terminal splits on, white space it trims before looking
/// for `::`, and the runner's own escapes.
const HOSTILE_PIECES: &[&str] = &[
    "::",
    "::error::x",
    "::add-mask::y",
    "::warning file=a,line=1::w",
    "\n",
    "\r",
    "\r\n",
    " ",
    "\t",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{b}",
    "\u{c}",
    "\u{a0}",
    "\u{3000}",
    "%0A::",
    "##[add-mask]z",
    "\\n::",
    "a",
    "error",
    ":",
    ",",
    "%",
];

fn hostile_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(HOSTILE_PIECES), 1..7)
        .prop_map(|pieces| pieces.concat())
}

/// `text` as a YAML double-quoted scalar.
fn yaml_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{a0}') => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::property_cases() / 4))]

    /// Whatever a service, a directory, an env file or a value is named, no
    /// line of any report starts (after white space, which the runner trims)
    /// with `::`, a GitHub workflow command; the `github` format's lines are
    /// its own annotations, one a line.
    #[test]
    fn no_report_line_is_a_workflow_command(
        service in hostile_text(),
        dir_name in hostile_text(),
        env_file in hostile_text(),
        value in hostile_text(),
    ) {
        let repo = tempfile::tempdir().unwrap();
        let dir_name = if dir_name.starts_with('.') { format!("x{dir_name}") } else { dir_name };
        let dir = repo.path().join(&dir_name);
        let env_file = env_file.replace(['\n', '\r'], "_");
        let env_file = if env_file.starts_with('.') { format!("x{env_file}") } else { env_file };
        write(&dir, &env_file, format!("NCCL_P2P_DISABLE=1\nHOSTILE={value}\n"));
        write(&dir, ".env", format!("SHM={}\n", yaml_quoted(&value).replace('$', "")));
        write(
            &dir,
            "compose.yaml",
            format!(
                "services:\n  {}:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: ${{SHM}}\n    env_file: [{}]\n    environment:\n      {}: {}\n    command: torchrun --nproc_per_node 8 train.py\n",
                yaml_quoted(&service),
                yaml_quoted(&env_file),
                yaml_quoted(&format!("NCCL_{service}")),
                yaml_quoted(&value),
            ),
        );
        write(&dir, "broken/compose.yaml", format!("services:\n  {}: [1, 2\n", yaml_quoted(&service)));
        let mut runs: Vec<Vec<&str>> = ["text", "concise", "github", "json", "sarif", "gitlab", "junit"]
            .iter()
            .map(|f| vec!["check", "--output-format", f, "."])
            .collect();
        runs.push(vec!["check", "--quiet", "."]);
        runs.push(vec!["inspect", "."]);
        runs.push(vec!["inspect", "--format", "json", "."]);
        for args in &runs {
            let out = gpulint(repo.path(), args);
            let (stdout, stderr) = (stdout(&out), common::stderr(&out));
            prop_assert!(!stdout.is_empty(), "{args:?}: nothing reported\n{stderr}");
            let github = args.contains(&"github");
            // A runner splits lines at LF, CR and CRLF.
            for line in stdout.split(['\n', '\r']) {
                let trimmed = line.trim_start();
                if github && !line.is_empty() {
                    prop_assert!(
                        ["::error file=", "::warning file=", "::notice file="]
                            .iter()
                            .any(|p| line.starts_with(p)),
                        "{args:?}: not an annotation: {line:?}\n{stdout}"
                    );
                } else {
                    prop_assert!(
                        !trimmed.starts_with("::"),
                        "{args:?}: a workflow command: {line:?}\n{stdout}"
                    );
                }
            }
            if github {
                let commands = workflow_commands(&stdout);
                prop_assert_eq!(commands.len(), stdout.lines().count(), "{}", stdout);
            }
            prop_assert!(workflow_commands(&stderr).is_empty(), "{args:?}: {stderr}");
        }
    }
}

/// A file gpulint passes over (a Helm template) is a skipped test case in
/// JUnit, saying how to lint what it renders to, not a passing one.
#[test]
fn junit_reports_a_skipped_template_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "chart/templates/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: t\n          image: {{ .Values.image }}\n",
    );
    write(
        dir.path(),
        "compose.yaml",
        "services:\n  web:\n    image: nginx\n",
    );
    let out = gpulint(dir.path(), &["check", "--output-format", "junit", "."]);
    let xml = stdout(&out);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let suite = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("testsuite")
                && n.attribute("name")
                    .is_some_and(|name| name.ends_with("chart/templates/job.yaml"))
        })
        .unwrap_or_else(|| panic!("no suite for the template in\n{xml}"));
    assert_eq!(suite.attribute("skipped"), Some("1"), "{xml}");
    assert_eq!(suite.attribute("failures"), Some("0"), "{xml}");
    assert_eq!(suite.attribute("errors"), Some("0"), "{xml}");
    let case = suite
        .children()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    let skipped = case
        .children()
        .find(|n| n.has_tag_name("skipped"))
        .unwrap_or_else(|| panic!("the template's case is not skipped:\n{xml}"));
    assert!(
        skipped
            .attribute("message")
            .is_some_and(|m| m.contains("Helm") && m.contains("helm template")),
        "{xml}"
    );
    assert_eq!(case.attribute("line"), Some("4"), "{xml}");
    let clean = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite") && n.attribute("name") == Some("compose.yaml"))
        .unwrap_or_else(|| panic!("{xml}"));
    assert_eq!(clean.attribute("skipped"), Some("0"), "{xml}");
}
