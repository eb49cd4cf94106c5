//! End-to-end tests of the `gpulint` binary.

use crate::common;

use common::{gpulint, stderr, stdout, write};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const GPU_SERVICE: &str =
    "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n";
const CLEAN: &str = "services:\n  web:\n    image: nginx\n";

fn gpulint_with_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn exit_codes_clean_findings_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "clean/compose.yaml", CLEAN.as_bytes());
    write(dir.path(), "gpu/docker-compose.yml", GPU_SERVICE.as_bytes());

    let clean = gpulint(dir.path(), &["check", "clean"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(stdout(&clean).contains("All checks passed (1 file checked)."));

    let found = gpulint(dir.path(), &["check", "gpu"]);
    assert_eq!(found.status.code(), Some(1));
    let out = stdout(&found);
    assert!(
        out.contains(
            "warning[SHM001]: GPU service `trainer` runs with Docker's default 64 MiB /dev/shm"
        ),
        "{out}"
    );
    assert!(out.contains("--> gpu/docker-compose.yml:2:3"), "{out}");
    assert!(out.contains("2 |   trainer:\n  |   ^^^^^^^"), "{out}");
    assert!(out.contains("= help: set `shm_size: \"8gb\"`"), "{out}");

    let usage = gpulint(dir.path(), &["check", "--select", "NOPE"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(stderr(&usage).contains("`NOPE` matches no rule"));
}

#[test]
fn bad_files_get_one_located_error_each_and_the_rest_is_still_linted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/docker-compose.yml", GPU_SERVICE.as_bytes());
    write(
        dir.path(),
        "b/docker-compose.yml",
        b"services:\n  web:\n    image: [unclosed\n",
    );
    write(
        dir.path(),
        "c/docker-compose.yml",
        b"services:\n  {{ .Values.name }}:\n    image: {{ .Values.image }}\n",
    );
    write(
        dir.path(),
        "d/docker-compose.yml",
        b"\x7fELF\x02\x01\x01\x00\x00\x00binary",
    );
    write(
        dir.path(),
        "e/docker-compose.yml",
        b"services:\n  web:\n    image: \xff\xfe\n",
    );
    let out = gpulint(dir.path(), &["check", ".", "missing/compose.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    let find = |prefix: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no error line for {prefix}:\n{err}"))
            .to_string()
    };
    assert!(
        find("./b/docker-compose.yml:").contains(": error: invalid YAML"),
        "{err}"
    );
    assert!(
        find("./b/docker-compose.yml:").starts_with("./b/docker-compose.yml:4:1:")
            || find("./b/docker-compose.yml:").contains(":3:"),
        "{err}"
    );
    // A template is not an error: it is skipped with a note on how to
    // lint it. Outside a chart, `helm template` is no advice.
    let note = find("gpulint: note: skipped the Go template ./c/docker-compose.yml");
    assert!(
        note.contains("no Chart.yaml is above it") && note.contains("`RENDER | gpulint check -`"),
        "{err}"
    );
    assert!(!note.contains("helm template"), "{err}");
    assert!(!err.contains("./c/docker-compose.yml:2"), "{err}");
    assert!(
        find("./d/docker-compose.yml:1:").contains("binary file"),
        "{err}"
    );
    assert!(
        find("./e/docker-compose.yml:3:12: error: not valid UTF-8").len() > 10,
        "{err}"
    );
    assert!(
        find("missing/compose.yaml: error: cannot read: no such file or directory").len() > 10,
        "{err}"
    );
    assert_eq!(lines.len(), 5, "one line per bad or skipped file:\n{err}");
    // The good file was still linted.
    assert!(stdout(&out).contains("SHM001"), "{}", stdout(&out));
}

#[test]
fn discovery_honours_names_gitignore_and_explicit_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", b"ignored/\n");
    write(
        dir.path(),
        "ignored/docker-compose.yml",
        GPU_SERVICE.as_bytes(),
    );
    write(
        dir.path(),
        "deploy/docker-compose.gpu.yml",
        GPU_SERVICE.as_bytes(),
    );
    write(
        dir.path(),
        "deploy/compose.cuda.yaml",
        GPU_SERVICE.as_bytes(),
    );
    write(dir.path(), "deploy/values.yaml", GPU_SERVICE.as_bytes());
    let out = gpulint(dir.path(), &["check", "--output-format", "concise"]);
    let text = stdout(&out);
    assert!(text.contains("deploy/docker-compose.gpu.yml:2:3"), "{text}");
    assert!(text.contains("deploy/compose.cuda.yaml:2:3"), "{text}");
    assert!(!text.contains("ignored/"), "{text}");
    assert!(!text.contains("values.yaml"), "{text}");
    // A file named explicitly is linted whatever its name.
    let out = gpulint(dir.path(), &["check", "deploy/values.yaml", "-q"]);
    assert!(
        stdout(&out).contains("deploy/values.yaml:2:3: warning[SHM001]"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn stdin_with_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpulint_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "deploy/compose.yaml",
            "-q",
        ],
        GPU_SERVICE,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "deploy/compose.yaml:2:3: warning[SHM001] GPU service `trainer` runs with Docker's default 64 MiB /dev/shm\n"
    );
}

#[test]
fn json_output_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "docker-compose.yml",
        "# é\nservices:\n  trainer:\n    gpus: all\n    shm_size: 2\n".as_bytes(),
    );
    write(dir.path(), "broken/compose.yaml", b"a: [\n");
    let out = gpulint(dir.path(), &["check", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["summary"]["findings"], 1);
    assert_eq!(json["summary"]["failed_files"], 1);
    let d = &json["diagnostics"][0];
    assert_eq!(d["code"], "SHM003");
    assert_eq!(d["name"], "malformed-shm-size");
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["path"], "./docker-compose.yml");
    assert_eq!(d["start"]["line"], 5);
    assert_eq!(d["start"]["column"], 15);
    // Byte offsets count the two-byte é.
    assert_eq!(
        d["start"]["offset"],
        "# é\nservices:\n  trainer:\n    gpus: all\n    shm_size: ".len()
    );
    assert_eq!(d["end"]["column"], 16);
    assert_eq!(d["fixable"], false);
    assert!(
        d["note"]
            .as_str()
            .unwrap()
            .contains("No space left on device")
    );
    let e = &json["errors"][0];
    assert_eq!(e["path"], "./broken/compose.yaml");
    assert!(e["message"].as_str().unwrap().starts_with("invalid YAML"));
    assert!(e["line"].is_number());
}

#[test]
fn the_summary_says_when_files_could_not_be_checked() {
    // Exit code 2 must not come with "All checks passed".
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok/compose.yaml", CLEAN.as_bytes());
    write(dir.path(), "broken/compose.yaml", b"a: [\n");
    let out = gpulint(dir.path(), &["check", ".", "missing.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(!text.contains("All checks passed"), "{text}");
    assert!(
        text.contains(
            "No problems found in 1 file. 2 files could not be checked (see errors above)."
        ),
        "{text}"
    );
    write(dir.path(), "gpu/compose.yaml", GPU_SERVICE.as_bytes());
    let out = gpulint(dir.path(), &["check", "."]);
    let text = stdout(&out);
    assert!(
        text.contains("1 file could not be checked (see errors above)."),
        "{text}"
    );
}

#[test]
fn exclude_names_match_at_any_depth_like_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gpulint.toml", "exclude = [\"vendor\"]\n");
    write(dir.path(), "vendor/compose.yaml", GPU_SERVICE.as_bytes());
    write(
        dir.path(),
        "third/party/vendor/lib/compose.yaml",
        GPU_SERVICE.as_bytes(),
    );
    write(dir.path(), "app/compose.yaml", CLEAN.as_bytes());
    let out = gpulint(dir.path(), &["check", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("All checks passed (1 file checked)."),
        "{}",
        stdout(&out)
    );
}

/// runtipi/runtipi-appstore (apps/*/docker-compose.yml): each app names
/// the store's network, which the store's own base declares. Compose
/// refuses an app alone; gpulint says so as information (the app declares
/// no network, so a merged base may) and reports the named volume no file
/// declares as an error, until the files are declared fragments; then only
/// what the base cannot supply is reported.
#[test]
fn declared_compose_fragments_leave_undefined_references_to_their_base() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "apps/bitmagnet/docker-compose.yml",
        b"services:\n  bitmagnet:\n    image: x\n    networks: [tipi_main_network]\n  db:\n    image: postgres\n    volumes: [\"data:/var/lib/postgresql\", \"/x:/dev/shm\"]\n    tmpfs: /dev/shm\n",
    );
    let before = stdout(&gpulint(
        dir.path(),
        &["check", "--output-format", "json", "."],
    ));
    let findings: serde_json::Value = serde_json::from_str(&before).unwrap();
    let severity_of = |words: &str| {
        findings["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["message"].as_str().unwrap().contains(words))
            .map(|d| d["severity"].as_str().unwrap().to_string())
    };
    assert_eq!(
        severity_of(
            "undefined network `tipi_main_network`, and no file of the project declares any network"
        )
        .as_deref(),
        Some("info"),
        "{before}"
    );
    assert_eq!(
        severity_of("undefined volume `data`").as_deref(),
        Some("error"),
        "{before}"
    );
    assert!(
        before.contains("[compose] fragments"),
        "the help names the key: {before}"
    );
    write(
        dir.path(),
        "gpulint.toml",
        b"[compose]\nfragments = [\"apps/*/docker-compose.yml\"]\n",
    );
    let after = stdout(&gpulint(
        dir.path(),
        &["check", "--output-format", "json", "."],
    ));
    assert!(!after.contains("undefined network"), "{after}");
    assert!(!after.contains("undefined volume"), "{after}");
    // What no base can supply is still refused: two mounts at /dev/shm.
    assert!(after.contains("\"code\": \"PROJ001\""), "{after}");
    assert!(after.contains("/dev/shm"), "{after}");
    let bad = gpulint(dir.path(), &["check", "."]);
    assert_eq!(bad.status.code(), Some(1), "{}", stdout(&bad));
    write(
        dir.path(),
        "gpulint.toml",
        b"[compose]\nfragments = [\"apps/[\"]\n",
    );
    let broken = gpulint(dir.path(), &["check", "."]);
    assert_eq!(broken.status.code(), Some(2), "{}", stderr(&broken));
    assert!(
        stderr(&broken).contains("[compose] fragments: bad glob"),
        "{}",
        stderr(&broken)
    );
}

#[test]
fn config_is_found_upward_and_applied() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "gpulint.toml",
        b"ignore = [\"GPU005\"]\n[severity]\nSHM002 = \"error\"\n[per-file-ignores]\n\"legacy/**\" = [\"SHM\"]\n[shm]\nmin-size = \"1gb\"\nfix-size = \"16gb\"\n",
    );
    let compose = "services:\n  a:\n    runtime: nvidia\n    gpus: [{count: 1}]\n    shm_size: 768m\n  b:\n    command: python train.py --num_workers 4\n    gpus: [{count: 1}]\n";
    write(
        dir.path(),
        "app/deep/docker-compose.yml",
        compose.as_bytes(),
    );
    write(dir.path(), "legacy/docker-compose.yml", compose.as_bytes());
    let out = gpulint(dir.path(), &["check", "-q"]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "app/deep/docker-compose.yml:5:15: error[SHM002] /dev/shm of 768 MiB is below the 1 GiB"
        ),
        "{text}"
    );
    assert!(
        text.contains("app/deep/docker-compose.yml:6:3: warning[SHM001]"),
        "{text}"
    );
    assert!(!text.contains("GPU005"), "{text}");
    assert!(!text.contains("legacy/"), "{text}");
    let full = stdout(&gpulint(dir.path(), &["check", "app"]));
    assert!(full.contains("set `shm_size: \"16gb\"`"), "{full}");

    // --select on the command line replaces the config's selection.
    let only = stdout(&gpulint(
        dir.path(),
        &["check", "-q", "--select", "GPU005", "app"],
    ));
    assert!(only.contains("GPU005") && !only.contains("SHM"), "{only}");

    write(dir.path(), "bad/gpulint.toml", b"select = [\"SHM\"\n");
    write(dir.path(), "bad/compose.yaml", CLEAN.as_bytes());
    let out = gpulint(dir.path(), &["check", "bad"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("gpulint.toml:"), "{}", stderr(&out));

    let out = gpulint(dir.path(), &["check", "--config", "nope.toml", "app"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nope.toml: cannot read"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn rule_command_prints_docs() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpulint(dir.path(), &["rule", "shm001"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.starts_with("default-shm-on-gpu-service (SHM001)"),
        "{text}"
    );
    assert!(text.contains("## Why is this bad?"));
    let all = stdout(&gpulint(dir.path(), &["rule", "--all"]));
    assert_eq!(all.lines().count(), gpulint::rules::RULES.len());
    // Columns line up: each starts at the same character on every line.
    let starts = |cell: &dyn Fn(&gpulint::rules::RuleMeta) -> String| {
        let mut starts: Vec<usize> = all
            .lines()
            .zip(gpulint::rules::all_meta())
            .map(|(line, meta)| {
                let byte = line.find(&format!(" {}", cell(meta))).unwrap() + 1;
                line[..byte].chars().count()
            })
            .collect();
        starts.dedup();
        starts
    };
    assert_eq!(starts(&|m| m.severity.to_string()).len(), 1, "{all}");
    assert_eq!(starts(&|m| m.name.to_string()).len(), 1, "{all}");
    assert_eq!(starts(&|m| m.summary.to_string()).len(), 1, "{all}");
    assert_eq!(
        gpulint(dir.path(), &["rule", "XYZ999"]).status.code(),
        Some(2)
    );
}

#[test]
fn example_in_readme_reports_its_findings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = gpulint(root, &["check", "fixtures/_examples", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    for code in [
        "SHM001", "GPU002", "NCCL002", "SHM005", "K8S001", "K8S004", "NCCL001", "DF003", "DF005",
    ] {
        assert!(text.contains(code), "{code} missing:\n{text}");
    }
    assert!(!text.contains("`db`"), "{text}");
}

#[test]
fn diff_prints_a_patch_git_applies_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let original = "# keep me\r\nservices:\r\n  trainer:\r\n    image: nvcr.io/nvidia/pytorch:24.01-py3\r\n    gpus: all\r\n";
    write(dir.path(), "app/compose.yaml", original.as_bytes());
    write(dir.path(), "ok/compose.yaml", CLEAN.as_bytes());
    let out = gpulint(dir.path(), &["check", "--diff", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let patch = stdout(&out);
    assert!(
        patch.starts_with("--- a/app/compose.yaml\n+++ b/app/compose.yaml\n"),
        "{patch}"
    );
    assert!(patch.contains("+    shm_size: \"8gb\"\r\n"), "{patch}");
    assert!(
        stderr(&out).contains("Would fix 1 finding in 1 file."),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app/compose.yaml")).unwrap(),
        original
    );

    // The printed patch is a real one.
    std::fs::write(dir.path().join("fix.patch"), &patch).unwrap();
    let apply = Command::new("git")
        .args(["apply", "fix.patch"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        apply.status.success(),
        "{}",
        String::from_utf8_lossy(&apply.stderr)
    );
    let patched = std::fs::read_to_string(dir.path().join("app/compose.yaml")).unwrap();
    assert!(
        patched.ends_with("    gpus: all\r\n    shm_size: \"8gb\"\r\n"),
        "{patched:?}"
    );

    let again = gpulint(dir.path(), &["check", "--diff", "."]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), "");
}

#[cfg(unix)]
#[test]
fn fix_writes_atomically_keeping_permissions_and_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "real/compose.yaml", GPU_SERVICE.as_bytes());
    let real = dir.path().join("real/compose.yaml");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::create_dir_all(dir.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("linked/docker-compose.yml")).unwrap();

    let out = gpulint(dir.path(), &["check", "--fix", "linked/docker-compose.yml"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("Fixed 1 finding in 1 file."),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("All checks passed"),
        "{}",
        stdout(&out)
    );
    let link = dir.path().join("linked/docker-compose.yml");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink was replaced"
    );
    let fixed = std::fs::read_to_string(&real).unwrap();
    assert_eq!(fixed, format!("{GPU_SERVICE}    shm_size: \"8gb\"\n"));
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("real"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "temporary files left behind");
}

/// Sets an extended attribute; `false` when the file system has none.
#[cfg(target_os = "linux")]
fn set_xattr(path: &Path, name: &str, value: &[u8]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let name = std::ffi::CString::new(name).unwrap();
    // SAFETY: NUL-terminated strings and a buffer of the length given.
    let done = unsafe {
        libc::setxattr(
            path.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if done != 0 {
        let error = std::io::Error::last_os_error();
        assert_eq!(error.raw_os_error(), Some(libc::ENOTSUP), "{error}");
    }
    done == 0
}

#[cfg(target_os = "linux")]
fn get_xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let name = std::ffi::CString::new(name).unwrap();
    let mut buffer = vec![0u8; 4096];
    // SAFETY: NUL-terminated strings and a buffer of the length given.
    let got = unsafe {
        libc::getxattr(
            path.as_ptr(),
            name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    (got >= 0).then(|| buffer[..got as usize].to_vec())
}

/// `--fix` keeps what the file was beyond its text: its owner, group, mode,
/// extended attributes and ACL, and its other hard-linked names.
#[cfg(target_os = "linux")]
#[test]
fn fix_keeps_owner_xattrs_acls_and_hard_links() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "owned/compose.yaml", GPU_SERVICE.as_bytes());
    let owned = dir.path().join("owned/compose.yaml");
    // Someone else's file (the test runs as root where it can chown).
    let chowned = std::os::unix::fs::chown(&owned, Some(4321), Some(4322)).is_ok();
    std::fs::set_permissions(&owned, std::fs::Permissions::from_mode(0o640)).unwrap();
    let user_xattr = set_xattr(&owned, "user.origin", b"kept");
    // A POSIX ACL as the kernel stores it: version 2, then (tag, permissions,
    // id) entries: owner rw-, user 1234 r--, group r--, mask r--, other ---.
    let mut acl = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (0x01u16, 6u16, u32::MAX),
        (0x02, 4, 1234),
        (0x04, 4, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 0, u32::MAX),
    ] {
        acl.extend(tag.to_le_bytes());
        acl.extend(perm.to_le_bytes());
        acl.extend(id.to_le_bytes());
    }
    let has_acl = set_xattr(&owned, "system.posix_acl_access", &acl);
    let before = std::fs::metadata(&owned).unwrap();

    // Two names for one file, with CRLF line endings.
    let crlf = GPU_SERVICE.replace('\n', "\r\n");
    write(dir.path(), "linked/compose.yaml", crlf.as_bytes());
    let linked = dir.path().join("linked/compose.yaml");
    let other_name = dir.path().join("elsewhere.yaml");
    std::fs::hard_link(&linked, &other_name).unwrap();
    let inode = std::fs::metadata(&linked).unwrap().ino();

    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--fix",
            "owned/compose.yaml",
            "linked/compose.yaml",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("Fixed 2 findings in 2 files."),
        "{}",
        stdout(&out)
    );

    let fixed = std::fs::read_to_string(&owned).unwrap();
    assert_eq!(fixed, format!("{GPU_SERVICE}    shm_size: \"8gb\"\n"));
    let after = std::fs::metadata(&owned).unwrap();
    if chowned {
        assert_eq!((after.uid(), after.gid()), (4321, 4322));
    }
    assert_eq!(after.mode(), before.mode());
    if user_xattr {
        assert_eq!(
            get_xattr(&owned, "user.origin").as_deref(),
            Some(&b"kept"[..])
        );
    }
    if has_acl {
        assert_eq!(get_xattr(&owned, "system.posix_acl_access"), Some(acl));
    }

    let fixed = std::fs::read_to_string(&linked).unwrap();
    assert_eq!(fixed, format!("{crlf}    shm_size: \"8gb\"\r\n"));
    assert_eq!(std::fs::read_to_string(&other_name).unwrap(), fixed);
    let after = std::fs::metadata(&linked).unwrap();
    assert_eq!((after.ino(), after.nlink()), (inode, 2));
    for sub in ["owned", "linked"] {
        let left = std::fs::read_dir(dir.path().join(sub)).unwrap().count();
        assert_eq!(left, 1, "temporary files left behind in {sub}");
    }
}

/// A user who may write someone else's file, but not give a new file that
/// owner, gets the fix written into the file itself: the owner stays.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "needs root, to run gpulint as another user: run by .ci/run"]
fn fix_by_another_user_keeps_the_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    // SAFETY: no arguments, no memory.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "needs root, to run gpulint as another user"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE.as_bytes());
    let path = dir.path().join("compose.yaml");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["check", "--fix", "compose.yaml"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{GPU_SERVICE}    shm_size: \"8gb\"\n")
    );
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (after.uid(), after.gid(), after.mode() & 0o777),
        (0, 0, 0o666)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// gpulint with `args` in `dir`, run as an unprivileged user: `nobody` when
/// the tests run as root (whom no file mode stops, in the shell too), with
/// `dir` and its files made nobody's own as a user's are; else the user
/// running the tests.
#[cfg(target_os = "linux")]
fn gpulint_unprivileged(dir: &Path, args: &[&str]) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpulint"));
    command.args(args).current_dir(dir).env("NO_COLOR", "1");
    // SAFETY: no arguments, no memory.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
        for entry in std::fs::read_dir(dir).unwrap() {
            std::os::unix::fs::chown(entry.unwrap().path(), Some(65534), Some(65534)).unwrap();
        }
        command.uid(65534).gid(65534);
    }
    command
}

/// `--fix` honours the file's write permission as the user meets it: their
/// own mode-444 file is not replaced (renaming over it needs only the
/// directory's permission), the run says so at the file and exits 2. Run
/// as an unprivileged user: `nobody` when the tests run as root (root may
/// write any file, in the shell too), else the user running them.
#[cfg(target_os = "linux")]
#[test]
fn fix_leaves_a_read_only_file_alone() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE.as_bytes());
    let path = dir.path().join("compose.yaml");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut command = gpulint_unprivileged(dir.path(), &["check", "--fix", "compose.yaml"]);
    let before = std::fs::metadata(&path).unwrap();
    let out = command.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{}{err}", stdout(&out));
    assert!(
        err.contains("compose.yaml: error: cannot write the fixes: the file is not writable"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), GPU_SERVICE);
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!((after.ino(), after.mode()), (before.ino(), before.mode()));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A project file that is there but cannot be read (mode 000: the `.env`,
/// an `include`d file, an `extends.file`, an `env_file`) makes Compose
/// refuse the project ("open ...: permission denied"); gpulint filed it
/// as a file missing from the checkout, said nothing, and judged
/// `${S:-1g}` as 1 GiB though the `.env` sets 8g. Each is PROJ001 at what
/// names the file (the `.env` at the compose file's first line). Run as
/// `nobody` when the tests run as root, whom mode 000 does not stop.
#[cfg(target_os = "linux")]
#[test]
fn unreadable_project_files_refuse_the_project() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "compose.yaml",
        "include:\n  - inc.yaml\nservices:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    command: torchrun --nproc_per_node=8 train.py\n    shm_size: ${S:-1g}\n    extends:\n      file: base.yaml\n      service: b\n    env_file: vars.env\n",
    );
    write(dir.path(), ".env", "S=8g\n");
    write(dir.path(), "inc.yaml", "services:\n  i:\n    image: x\n");
    write(
        dir.path(),
        "base.yaml",
        "services:\n  b:\n    ipc: private\n",
    );
    write(dir.path(), "vars.env", "NCCL_DEBUG=INFO\n");
    for name in [".env", "inc.yaml", "base.yaml", "vars.env"] {
        let path = dir.path().join(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let out = gpulint_unprivileged(
        dir.path(),
        &[
            "check",
            "--output-format",
            "concise",
            "--select",
            "PROJ001",
            ".",
        ],
    )
    .output()
    .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    for (at, file) in [
        ("1:1", ".env"),
        ("2:5", "inc.yaml"),
        ("9:5", "base.yaml"),
        ("12:15", "vars.env"),
    ] {
        let expected = format!(
            "compose.yaml:{at}: error[PROJ001] Compose cannot load this project: open ./{file}: permission denied"
        );
        assert!(
            text.lines().any(|l| l.ends_with(&expected)),
            "{expected}\n{text}"
        );
    }
}

/// A GPU service whose file is `len` bytes long, padded with a comment: its
/// SHM001 fix adds a `shm_size` line.
#[cfg(target_os = "linux")]
fn gpu_service_of_length(len: usize) -> String {
    let mut text = format!("# {}\n", "x".repeat(len - GPU_SERVICE.len() - 3));
    text.push_str(GPU_SERVICE);
    assert_eq!(text.len(), len);
    text
}

/// A file with a second hard link is fixed in place. When the disk is full
/// the fix is refused before a byte is written (the old in-place write cut
/// the file short: its tail was overwritten and the rest never written),
/// and once there is room it is written, both names seeing it.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "needs root (or user namespaces) and mount, to fill a small tmpfs: run by .ci/run"]
fn an_in_place_fix_on_a_full_disk_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // One page, and the fix needs a second one.
    let original = gpu_service_of_length(4090);
    write(dir.path(), "compose.yaml", original.as_bytes());
    std::fs::create_dir(dir.path().join("mnt")).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let script = r#"
        set -e
        mount -t tmpfs -o size=64k tmpfs "$MNT"
        cp "$SRC" "$MNT/compose.yaml"
        ln "$MNT/compose.yaml" "$MNT/link.yaml"
        dd if=/dev/zero of="$MNT/fill" bs=4096 2>/dev/null || true
        set +e
        "$GPULINT" check --fix "$MNT/compose.yaml" >"$OUT/full.stdout" 2>"$OUT/full.stderr"
        echo $? >"$OUT/full.status"
        cp "$MNT/compose.yaml" "$OUT/full.after"
        ls -A "$MNT" >"$OUT/full.listing"
        rm "$MNT/fill"
        "$GPULINT" check --fix "$MNT/compose.yaml" >"$OUT/room.stdout" 2>"$OUT/room.stderr"
        echo $? >"$OUT/room.status"
        cp "$MNT/link.yaml" "$OUT/room.after"
    "#;
    // SAFETY: no arguments, no memory.
    let root = unsafe { libc::geteuid() } == 0;
    let namespace: &[&str] = if root {
        &["--mount", "--propagation", "private"]
    } else {
        &["--user", "--map-root-user", "--mount"]
    };
    let run = Command::new("unshare")
        .args(namespace)
        .args(["sh", "-c", script])
        .env("MNT", dir.path().join("mnt"))
        .env("SRC", dir.path().join("compose.yaml"))
        .env("OUT", dir.path().join("out"))
        .env("GPULINT", env!("CARGO_BIN_EXE_gpulint"))
        .env("NO_COLOR", "1")
        .output()
        .expect("unshare (util-linux) runs");
    assert!(
        run.status.success(),
        "cannot mount a tmpfs in a mount namespace (needs root or unprivileged user namespaces): {}",
        stderr(&run)
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join("out").join(name)).unwrap();
    assert_eq!(read("full.after"), original, "the file was changed");
    assert_eq!(read("full.status").trim(), "2", "{}", read("full.stderr"));
    assert!(
        read("full.stderr")
            .contains("cannot write the fixes: not enough space to write the fixes in place"),
        "{}",
        read("full.stderr")
    );
    assert_eq!(read("full.listing"), "compose.yaml\nfill\nlink.yaml\n");
    assert_eq!(read("room.status").trim(), "0", "{}", read("room.stderr"));
    assert_eq!(
        read("room.after"),
        format!("{original}    shm_size: \"8gb\"\n")
    );
}

/// Past the file size limit a write raises SIGXFSZ, which ended gpulint in
/// the middle of writing the temporary file (and left it behind): the fix
/// is refused up front with the reason, and nothing is left behind.
#[cfg(target_os = "linux")]
#[test]
fn a_fix_past_the_file_size_limit_is_refused_and_the_file_kept() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let original = gpu_service_of_length(4090);
    write(dir.path(), "compose.yaml", original.as_bytes());
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpulint"));
    command
        .args(["check", "--fix", "compose.yaml"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1");
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 4096,
                rlim_max: libc::RLIM_INFINITY,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = command.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{:?} {}",
        out.status,
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(
            "above the file size limit of 4096 bytes (`ulimit -f`); the file is unchanged"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap(),
        original
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // Summarised as a write that failed, not as a file never checked, and
    // nothing claims the fix was applied.
    let text = stdout(&out);
    assert!(text.contains("Fixed 0 findings in 0 files.\n"), "{text}");
    assert!(
        text.contains(
            "1 file could not be written, so its fix was not applied (see errors above)."
        ),
        "{text}"
    );
    assert!(!text.contains("could not be checked"), "{text}");
}

#[test]
fn unsafe_fixes_need_the_flag_and_what_is_left_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let text = "services:\n  t:\n    gpus: all\n    shm_size: 64m\n    environment:\n      NCCL_P2P_DISABLE: \"1\"\n      OTHER: x\n";
    write(dir.path(), "compose.yaml", text.as_bytes());
    let safe_only = gpulint(dir.path(), &["check", "--fix", "compose.yaml"]);
    assert_eq!(safe_only.status.code(), Some(1));
    assert!(
        stdout(&safe_only).contains("Fixed 0 findings in 0 files."),
        "{}",
        stdout(&safe_only)
    );
    assert!(
        stdout(&safe_only).contains("fixable with `--fix --unsafe-fixes`"),
        "{}",
        stdout(&safe_only)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap(),
        text
    );

    let all = gpulint(
        dir.path(),
        &["check", "--fix", "--unsafe-fixes", "compose.yaml"],
    );
    assert_eq!(all.status.code(), Some(0), "{}", stdout(&all));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap(),
        "services:\n  t:\n    gpus: all\n    shm_size: 512mb\n    environment:\n      OTHER: x\n"
    );
}

#[test]
fn fix_on_stdin_prints_the_fixed_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpulint_with_stdin(
        dir.path(),
        &["check", "--fix", "-", "--stdin-filename", "compose.yaml"],
        GPU_SERVICE,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("{GPU_SERVICE}    shm_size: \"8gb\"\n")
    );
}

#[test]
fn a_file_changed_since_it_was_read_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compose.yaml");
    std::fs::write(&path, "services: {}\n# edited meanwhile\n").unwrap();
    let err = gpulint::engine::write::write_fixed(&path, "services: {}\n", "services: {x: 1}\n")
        .unwrap_err();
    assert!(err.contains("changed on disk"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "services: {}\n# edited meanwhile\n"
    );
}

const GPU_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: train\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n";

#[test]
fn walking_finds_manifests_by_content_and_skips_templates_and_overlays() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "k8s/train.yaml", GPU_POD.as_bytes());
    // YAML that is not a manifest is not gpulint's, whatever its name.
    write(
        dir.path(),
        "k8s/values.yaml",
        b"replicaCount: 1\nimage: {repository: x}\n",
    );
    write(
        dir.path(),
        ".github/workflows/ci.yml",
        b"on: push\njobs: {}\n",
    );
    write(dir.path(), "notes.yml", b"kind: of a list\n- not yaml: [\n");
    // A manifest that does not parse is reported.
    write(
        dir.path(),
        "broken.yaml",
        b"apiVersion: v1\nkind: Pod\nspec: [\n",
    );
    // A Helm chart: the template is skipped with a note naming the chart.
    write(
        dir.path(),
        "chart/Chart.yaml",
        b"apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    );
    write(
        dir.path(),
        "chart/templates/deployment.yaml",
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        resources: {{- toYaml .Values.resources | nindent 10 }}\n",
    );
    // A kustomize overlay: its patch is partial (no volumes) and is skipped.
    write(
        dir.path(),
        "overlay/kustomization.yaml",
        b"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../k8s]\npatches:\n- path: gpu.yaml\n",
    );
    write(
        dir.path(),
        "overlay/gpu.yaml",
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: train\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n",
    );
    let out = gpulint(dir.path(), &["check", "--output-format", "concise"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let (out_text, err) = (stdout(&out), stderr(&out));
    let findings: Vec<&str> = out_text.lines().collect();
    assert_eq!(findings.len(), 1, "{out_text}");
    assert!(
        findings[0].starts_with("./k8s/train.yaml:7:11: warning[K8S004]"),
        "{out_text}"
    );
    assert!(err.contains("./broken.yaml:"), "{err}");
    assert!(
        err.contains("note: skipped the Helm template ./chart/templates/deployment.yaml")
            && err.contains("`helm template ./chart | gpulint check -`"),
        "{err}"
    );
    assert!(
        err.contains("note: skipped the kustomize overlay in ./overlay (2 files)")
            && err.contains("`kubectl kustomize ./overlay | gpulint check -`"),
        "{err}"
    );
    assert!(
        !err.contains("values.yaml") && !err.contains("ci.yml") && !err.contains("notes.yml"),
        "{err}"
    );
    // The same manifest through standard input, as `helm template | gpulint check -` sends it.
    let piped = gpulint_with_stdin(
        dir.path(),
        &["check", "-", "--output-format", "concise"],
        GPU_POD,
    );
    assert_eq!(piped.status.code(), Some(1));
    assert!(
        stdout(&piped).contains("warning[K8S004]"),
        "{}",
        stdout(&piped)
    );
}

#[test]
fn fix_writes_manifests_and_diff_applies() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "k8s/train.yaml", GPU_POD.as_bytes());
    let diff = gpulint(dir.path(), &["check", "--diff", "k8s"]);
    assert_eq!(diff.status.code(), Some(1));
    assert!(
        stdout(&diff).contains("+  - name: dshm\n"),
        "{}",
        stdout(&diff)
    );
    let fixed = gpulint(dir.path(), &["check", "--fix", "k8s"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    let text = std::fs::read_to_string(dir.path().join("k8s/train.yaml")).unwrap();
    assert!(text.ends_with("    volumeMounts:\n    - name: dshm\n      mountPath: /dev/shm\n  volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory\n      sizeLimit: 8Gi\n"), "{text}");
    let again = gpulint(dir.path(), &["check", "--fix", "k8s"]);
    assert!(
        stdout(&again).contains("Fixed 0 findings"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn compose_file_sets_from_config_are_merged_and_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let base = "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node=2 train.py\n";
    let gpu = "services:\n  trainer:\n    gpus: all\n";
    write(dir.path(), "docker-compose.yml", base.as_bytes());
    write(dir.path(), "docker-compose.gpu.yml", gpu.as_bytes());
    write(
        dir.path(),
        "gpulint.toml",
        b"[compose]\nprojects = [[\"docker-compose.yml\", \"docker-compose.gpu.yml\"]]\n",
    );
    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "concise",
            "--select",
            "SHM001,GPU006",
        ],
    );
    let text = stdout(&out);
    // GPU006 (no reservation) is not reported on the base file: the set reserves GPUs.
    assert_eq!(
        text.trim(),
        "./docker-compose.gpu.yml:2:3: error[SHM001] GPU service `trainer` runs with Docker's default 64 MiB /dev/shm",
        "{text}"
    );
    // The fix goes into the file that asks for the GPUs; the set is then clean.
    let fixed = gpulint(dir.path(), &["check", "--fix", "--select", "SHM001,GPU006"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    assert!(
        std::fs::read_to_string(dir.path().join("docker-compose.gpu.yml"))
            .unwrap()
            .contains("shm_size")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docker-compose.yml")).unwrap(),
        base
    );

    // Without the set, the base file alone is a launcher without GPUs.
    std::fs::remove_file(dir.path().join("gpulint.toml")).unwrap();
    let alone = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "concise",
            "--select",
            "GPU006",
            "docker-compose.yml",
        ],
    );
    assert!(stdout(&alone).contains("GPU006"), "{}", stdout(&alone));
}

#[test]
fn json_points_into_the_dockerfile_a_service_builds() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", b"services:\n  trainer:\n    build:\n      context: trainer\n      dockerfile: Dockerfile.gpu\n");
    write(
        dir.path(),
        "trainer/Dockerfile.gpu",
        b"ARG BASE=nvcr.io/nvidia/pytorch:24.01-py3\nFROM $BASE\n",
    );
    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "json",
            "--select",
            "SHM001",
            "compose.yaml",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let finding = &json["diagnostics"][0];
    assert_eq!(finding["code"], "SHM001", "{json}");
    let related = &finding["related"][0];
    assert_eq!(related["path"], "trainer/Dockerfile.gpu");
    assert_eq!(related["start"]["line"], 2);
    assert_eq!(related["start"]["column"], 6);
}

#[test]
fn walking_lints_dockerfiles_by_name_and_a_syntax_error_stops_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "docker/Dockerfile.gpu",
        b"FROM nvidia/cuda\nRUNN make\nENV CUDA_VISIBLE_DEVICES=0\n",
    );
    write(dir.path(), "Containerfile", b"FROM python:3.12-slim\n");
    write(
        dir.path(),
        "docs/Dockerfile.md",
        b"# How to build\n\nRUNN is not an instruction\n",
    );
    write(dir.path(), "Dockerfile.dockerignore", b"*.pt\n");
    write(dir.path(), "compose.yaml", GPU_SERVICE.as_bytes());
    let out = gpulint(dir.path(), &["check", "--output-format", "concise"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "./compose.yaml:2:3: warning[SHM001] GPU service `trainer` runs with Docker's default 64 MiB /dev/shm",
            "./docker/Dockerfile.gpu:1:6: error[DF001] base image `nvidia/cuda` does not exist: nvidia/cuda has no `latest` tag",
            "./docker/Dockerfile.gpu:2:1: error[DF000] unknown instruction `RUNN`",
            "./docker/Dockerfile.gpu:3:5: warning[DF005] the image's final stage fixes which GPUs CUDA may use",
        ],
        "{text}"
    );
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

/// Runs gpulint, killing it if it has not finished within a minute, so a
/// regression that blocks fails the test instead of hanging the suite.
#[cfg(unix)]
fn gpulint_or_kill(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    let _ = child.wait();
    panic!("`gpulint {}` blocked (on a FIFO?)", args.join(" "));
}

#[cfg(unix)]
#[test]
fn fifos_are_never_opened_for_reading() {
    let dir = tempfile::tempdir().unwrap();
    let mkfifo = |path: &str| {
        std::fs::create_dir_all(dir.path().join(path).parent().unwrap()).unwrap();
        let status = Command::new("mkfifo")
            .arg(dir.path().join(path))
            .status()
            .unwrap();
        assert!(status.success());
    };
    mkfifo("named/docker-compose.yml");
    // Found by the walk, and the Dockerfile a compose `build:` reads.
    mkfifo("walked/docker-compose.yml");
    mkfifo("walked/app/Dockerfile");
    write(
        dir.path(),
        "walked/app/compose.yaml",
        b"services:\n  t:\n    build: .\n    gpus: all\n",
    );

    let out = gpulint_or_kill(dir.path(), &["check", "named/docker-compose.yml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("named/docker-compose.yml: error: not a regular file"),
        "{}",
        stderr(&out)
    );
    let out = gpulint_or_kill(dir.path(), &["inspect", "named/docker-compose.yml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // `inspect` prints a file's error in its table, on stdout.
    assert!(
        stdout(&out).contains("named/docker-compose.yml: not a regular file"),
        "{}",
        stdout(&out)
    );

    let out = gpulint_or_kill(dir.path(), &["check", "walked"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("SHM001"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("in 1 file of 1 checked"),
        "{}",
        stdout(&out)
    );
    let out = gpulint_or_kill(dir.path(), &["inspect", "walked"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("compose.yaml:2:3"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn explicit_files_with_other_names_are_sniffed_as_dockerfile_or_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let cpu_wheel =
        "RUN pip install torch --index-url https://download.pytorch.org/whl/cpu && echo a: b\n";
    write(
        dir.path(),
        "gpu.build",
        format!(
            "# syntax=docker/dockerfile:1\nFROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n{cpu_wheel}"
        ),
    );
    write(
        dir.path(),
        "mydockerfile",
        format!(
            "# the trainer\nARG BASE=nvidia/cuda:12.4.1-runtime-ubuntu22.04\nFROM ${{BASE}}\n{cpu_wheel}"
        ),
    );
    // And the other way: a compose file under a name of neither kind.
    write(dir.path(), "stack.conf", GPU_SERVICE);

    let out = gpulint(
        dir.path(),
        &["check", "gpu.build", "mydockerfile", "stack.conf"],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(!stderr(&out).contains("invalid YAML"), "{}", stderr(&out));
    for located in [
        "--> gpu.build:3:",
        "--> mydockerfile:4:",
        "--> stack.conf:2:3",
    ] {
        assert!(text.contains(located), "{located}:\n{text}");
    }
    assert_eq!(text.matches("warning[DF003]").count(), 2, "{text}");
    assert!(text.contains("warning[SHM001]"), "{text}");
}

#[test]
fn a_fix_into_an_anchor_another_key_aliases_is_display_only() {
    // SHM002 would raise `shm_size`, but `c.mem_limit` reads the same anchored
    // scalar: the edit would change it too, so it must not be offered as a fix.
    let dir = tempfile::tempdir().unwrap();
    let text = "services:\n  b:\n    image: x\n    command: torchrun train.py\n    gpus: all\n    shm_size: &sz 1gb\n  c:\n    image: x\n    mem_limit: *sz\n";
    write(dir.path(), "compose.yaml", text);
    let out = gpulint(dir.path(), &["check", "--output-format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "SHM002")
        .expect("SHM002 for the training service");
    assert_eq!(d["fixable"], false, "{d}");
    assert_eq!(d["fix"]["applicability"], "display-only");
    assert!(
        d["fix"]["title"]
            .as_str()
            .unwrap()
            .contains("`services.c.mem_limit`"),
        "{d}"
    );
    let fixed = gpulint(
        dir.path(),
        &["check", "--fix", "--unsafe-fixes", "--select", "SHM002"],
    );
    assert_eq!(fixed.status.code(), Some(1), "{}", stderr(&fixed));
    assert!(
        !stderr(&fixed).contains("internal error"),
        "{}",
        stderr(&fixed)
    );
    assert!(!stdout(&fixed).contains("fixable"), "{}", stdout(&fixed));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap(),
        text
    );
}

#[test]
fn fixes_insert_after_the_blank_lines_of_a_keep_chomped_scalar() {
    // `|+` keeps its trailing blank lines: `shm_size` goes after them, and
    // `command` keeps its value.
    let dir = tempfile::tempdir().unwrap();
    let text = "services:\n  t:\n    image: x\n    gpus: all\n    command: |+\n      python train.py\n\n\nvolumes:\n  d: {}\n";
    write(dir.path(), "compose.yaml", text);
    let fixed = gpulint(dir.path(), &["check", "--fix"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert!(stderr(&fixed).is_empty(), "{}", stderr(&fixed));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap(),
        "services:\n  t:\n    image: x\n    gpus: all\n    command: |+\n      python train.py\n\n\n    shm_size: \"8gb\"\nvolumes:\n  d: {}\n"
    );
}

#[test]
fn a_fix_that_fails_verification_is_not_counted_as_fixable() {
    // An alias bomb is too large to verify a fix in: the finding stays,
    // with a plain warning instead of an "internal error", and the summary
    // does not offer `--fix` for it.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("x-a: &a [1,1,1,1,1,1,1,1,1,1]\n");
    for (name, prev) in [("b", "a"), ("c", "b"), ("d", "c"), ("e", "d"), ("f", "e")] {
        let items = vec![format!("*{prev}"); 10].join(",");
        text.push_str(&format!("x-{name}: &{name} [{items}]\n"));
    }
    text.push_str("services:\n  t:\n    image: x\n    gpus: all\n");
    write(dir.path(), "compose.yaml", &text);
    let out = gpulint(dir.path(), &["check", "--fix"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("warning: the SHM001 fix \"Add `shm_size: \"8gb\"`\" was not applied: the file is too large to verify the fix"),
        "{err}"
    );
    assert!(!err.contains("internal error"), "{err}");
    assert!(!stdout(&out).contains("fixable"), "{}", stdout(&out));
}

/// Runs `git apply --check` on `patch` in `dir`, which is made a git repository.
fn git_apply_check(dir: &Path, patch: &str) -> Result<(), String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    git(&["init", "-q"]);
    std::fs::write(dir.join(".check.patch"), patch).unwrap();
    let out = git(&["apply", "--check", ".check.patch"]);
    std::fs::remove_file(dir.join(".check.patch")).unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}\n{patch}", String::from_utf8_lossy(&out.stderr)))
    }
}

/// `--diff` is a patch `git apply` and `patch -p1` take, and that makes what
/// `--fix` writes, whatever the file's line endings: LF, CRLF, CR only (one
/// line to both tools), a lone CR among LFs, mixed, no final line break.
#[cfg(unix)]
#[test]
fn diff_applies_for_every_line_ending_style() {
    let lines = [
        "services:",
        "  trainer:",
        "    image: nvcr.io/nvidia/pytorch:24.01-py3",
        "    gpus: all",
    ];
    let styles: &[(&str, &[&str])] = &[
        ("lf", &["\n"]),
        ("crlf", &["\r\n"]),
        ("cr", &["\r"]),
        ("lone-cr", &["\n", "\r", "\n", "\n"]),
        ("mixed", &["\r", "\r\n", "\n", "\r"]),
        ("cr-no-final", &["\r", "\r", "\r", ""]),
        ("lf-no-final", &["\n", "\n", "\n", ""]),
    ];
    for (name, ends) in styles {
        let text: String = lines
            .iter()
            .enumerate()
            .map(|(i, line)| format!("{line}{}", ends[i % ends.len()]))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "compose.yaml", &text);
        let out = gpulint(
            dir.path(),
            &["check", "--diff", "--select", "SHM001", "compose.yaml"],
        );
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let patch = stdout(&out);
        assert!(patch.contains("shm_size"), "{name}: {patch:?}");
        git_apply_check(dir.path(), &patch).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        std::fs::write(dir.path().join("fix.patch"), &patch).unwrap();
        let patched = Command::new("patch")
            .args(["-p1", "--dry-run", "-i", "fix.patch"])
            .current_dir(dir.path())
            .output()
            .expect("patch runs");
        assert!(
            patched.status.success() && !stdout(&patched).contains("fuzz"),
            "{name}: {}{}\n{patch:?}",
            stdout(&patched),
            stderr(&patched)
        );
        let applied = Command::new("git")
            .args(["apply", "fix.patch"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(applied.status.success(), "{name}: {}", stderr(&applied));
        let by_patch = std::fs::read(dir.path().join("compose.yaml")).unwrap();
        write(dir.path(), "compose.yaml", &text);
        let out = gpulint(
            dir.path(),
            &["check", "--fix", "--select", "SHM001", "compose.yaml"],
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let by_fix = std::fs::read(dir.path().join("compose.yaml")).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&by_patch),
            String::from_utf8_lossy(&by_fix),
            "{name}"
        );
    }
}

/// One file named twice is one input: by two spellings of its path, named
/// and walked, and through a link. It was reported twice, `--diff` printed
/// its hunk twice (which `git apply` refuses) and `--fix` exited 2.
#[cfg(unix)]
#[test]
fn one_file_named_twice_is_one_input() {
    let spellings: &[&[&str]] = &[
        &["a/compose.yaml", "./a/compose.yaml"],
        &["a/compose.yaml", "a/../a/compose.yaml"],
        &[".", "a/compose.yaml"],
        &["link.yaml", "a/compose.yaml"],
    ];
    for names in spellings {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a/compose.yaml", GPU_SERVICE);
        std::os::unix::fs::symlink("a/compose.yaml", dir.path().join("link.yaml")).unwrap();
        let args = |first: &[&'static str]| -> Vec<&'static str> { [first, names].concat() };
        let out = gpulint(dir.path(), &args(&["check", "--output-format", "concise"]));
        let report = stdout(&out);
        assert_eq!(report.matches("SHM001").count(), 1, "{names:?}: {report}");
        let out = gpulint(dir.path(), &args(&["check", "--diff"]));
        let patch = stdout(&out);
        assert_eq!(patch.matches("@@ ").count(), 1, "{names:?}: {patch}");
        git_apply_check(dir.path(), &patch).unwrap();
        let out = gpulint(dir.path(), &args(&["check", "--fix"]));
        assert_eq!(out.status.code(), Some(0), "{names:?}: {}", stderr(&out));
        let fixed = std::fs::read_to_string(dir.path().join("a/compose.yaml")).unwrap();
        assert_eq!(
            fixed,
            format!("{GPU_SERVICE}    shm_size: \"8gb\"\n"),
            "{names:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn odd_and_absolute_paths_make_diff_headers_git_applies() {
    // A backslash is part of a Unix name, not a separator; a newline must
    // not split the header (git quotes both); an absolute path under the
    // working directory is shown relative to it.
    for (dir_name, header) in [
        ("back\\slash", "--- \"a/back\\\\slash/compose.yaml\"\n"),
        ("new\nline", "--- \"a/new\\nline/compose.yaml\"\n"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &format!("{dir_name}/compose.yaml"), GPU_SERVICE);
        let out = gpulint(dir.path(), &["check", "--diff", "."]);
        let patch = stdout(&out);
        assert!(patch.starts_with(header), "{patch}");
        git_apply_check(dir.path(), &patch).unwrap();
        if dir_name.contains('\\') {
            let github = gpulint(dir.path(), &["check", "--output-format", "github"]);
            assert!(
                stdout(&github).contains("file=back\\slash/compose.yaml"),
                "{}",
                stdout(&github)
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sub/compose.yaml", GPU_SERVICE);
    let absolute = dir.path().join("sub/compose.yaml");
    let out = gpulint(dir.path(), &["check", "--diff", absolute.to_str().unwrap()]);
    let patch = stdout(&out);
    assert!(patch.starts_with("--- a/sub/compose.yaml\n"), "{patch}");
    git_apply_check(dir.path(), &patch).unwrap();

    // Outside the working directory: the path without its leading `/`, as
    // `git diff --no-index` writes it, applies from `/`.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = gpulint(
        elsewhere.path(),
        &["check", "--diff", absolute.to_str().unwrap()],
    );
    let patch = stdout(&out);
    let expected = format!("--- a{}\n", absolute.display());
    assert!(patch.starts_with(&expected), "{patch}");
    let check = Command::new("git")
        .args(["apply", "--check", "-"])
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(patch.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(
        check.status.success(),
        "{}\n{patch}",
        String::from_utf8_lossy(&check.stderr)
    );
}

/// `--add-noqa` suppresses every finding with a verified comment that has a
/// reason to fill in; the files still lint clean and a second run is a no-op.
#[test]
fn add_noqa_suppresses_every_finding_and_a_second_run_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::root().join("fixtures/_examples"), dir.path());
    // A continued shell line cannot take a comment above it: the finding on
    // it is suppressed for the whole file, after the `#!` line.
    write(
        dir.path(),
        "run.sh",
        "#!/bin/bash\ndocker run --gpus all \\\n  -e NCCL_SHM_DISABLE=1 img torchrun --nproc_per_node=8 train.py\n",
    );
    // Parser directives stay first in a Dockerfile.
    write(
        dir.path(),
        "train/Dockerfile",
        "# syntax=docker/dockerfile:1\nFROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=0\n",
    );
    let before = gpulint(dir.path(), &["check", "--output-format", "concise"]);
    assert_eq!(before.status.code(), Some(1), "{}", stdout(&before));
    let findings = stdout(&before).lines().count();
    assert!(findings >= 5, "{}", stdout(&before));

    let added = gpulint(dir.path(), &["check", "--add-noqa"]);
    assert_eq!(
        added.status.code(),
        Some(0),
        "{}{}",
        stdout(&added),
        stderr(&added)
    );
    assert!(
        stderr(&added).contains(&format!("for {findings} findings in 5 files.")),
        "{}",
        stderr(&added)
    );
    assert!(
        stdout(&added).contains("All checks passed"),
        "{}",
        stdout(&added)
    );

    let compose = std::fs::read_to_string(dir.path().join("docker-compose.yml")).unwrap();
    assert!(
        compose.contains(
            "services:\n  # gpulint: ignore[SHM001, ULIM001] TODO: say why this is safe, or fix it\n  trainer:\n"
        ),
        "{compose}"
    );
    let script = std::fs::read_to_string(dir.path().join("run.sh")).unwrap();
    assert!(
        script.starts_with("#!/bin/bash\n# gpulint: ignore-file[NCCL001] TODO: say why this is safe, or fix it\n# gpulint: ignore[SHM001, ULIM001] "),
        "{script}"
    );
    let dockerfile = std::fs::read_to_string(dir.path().join("train/Dockerfile")).unwrap();
    assert!(
        dockerfile.starts_with("# syntax=docker/dockerfile:1\nFROM"),
        "{dockerfile}"
    );
    assert!(dockerfile.contains("\n# gpulint: ignore["), "{dockerfile}");

    // Every comment is needed (no SUP001) and well formed (no SUP002).
    let again = gpulint(dir.path(), &["check"]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    let texts = |dir: &Path| {
        let mut all = Vec::new();
        for name in [
            "docker-compose.yml",
            "k8s/pytorchjob.yaml",
            "run.sh",
            "train/Dockerfile",
        ] {
            all.push(std::fs::read_to_string(dir.join(name)).unwrap());
        }
        all
    };
    let first = texts(dir.path());
    let second = gpulint(dir.path(), &["check", "--add-noqa"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("Added 0 suppression comments for 0 findings in 0 files."),
        "{}",
        stderr(&second)
    );
    assert_eq!(texts(dir.path()), first);

    let conflict = gpulint(dir.path(), &["check", "--add-noqa", "--fix"]);
    assert_eq!(conflict.status.code(), Some(2));
}

#[test]
fn statistics_count_findings_per_rule() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/compose.yaml", GPU_SERVICE);
    write(dir.path(), "b/compose.yaml", GPU_SERVICE);
    write(dir.path(), "c/compose.yaml", CLEAN);
    let out = gpulint(dir.path(), &["check", "--statistics"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    let fields: Vec<&str> = first.split('\t').collect();
    assert_eq!(fields[0].trim(), "2", "{text}");
    assert_eq!(fields[1].trim(), "SHM001", "{text}");
    assert!(fields[2].starts_with("[*] "), "{text}");
    // Not the findings themselves.
    assert!(!text.contains("-->"), "{text}");
    assert!(text.contains("Found "), "{text}");

    let clean = gpulint(dir.path(), &["check", "--statistics", "c"]);
    assert_eq!(clean.status.code(), Some(0));
    assert_eq!(stdout(&clean), "All checks passed (1 file checked).\n");
}

/// One safe fix (SHM001), one unsafe (NCCL002's), one display-only
/// (GPU001's: which of `count` and `device_ids` to keep) and one finding
/// with no fix (NCCL001 from an env file), in one compose file.
const EVERY_KIND_OF_FIX: &str = "services:\n  safe:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n  risky:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: 8gb\n    environment:\n      NCCL_P2P_DISABLE: \"1\"\n  choice:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    shm_size: 8gb\n    gpus:\n      - count: 1\n        device_ids: [\"3\"]\n  unfixable:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: 8gb\n    env_file: nccl.env\n";

fn every_kind_of_fix() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", EVERY_KIND_OF_FIX);
    write(dir.path(), "nccl.env", "NCCL_SHM_DISABLE=1\n");
    dir
}

#[test]
fn statistics_mark_only_the_fixes_fix_would_apply() {
    let dir = every_kind_of_fix();
    let rows = |args: &[&str]| {
        let out = gpulint(dir.path(), args);
        let text = stdout(&out);
        let marked: Vec<(String, bool)> = text
            .lines()
            .filter(|l| l.contains('\t'))
            .map(|l| {
                let fields: Vec<&str> = l.split('\t').collect();
                (fields[1].trim().to_string(), fields[2].starts_with("[*]"))
            })
            .collect();
        (marked, text.lines().last().unwrap_or_default().to_string())
    };
    let (marked, summary) = rows(&["check", "--statistics"]);
    let starred: Vec<&str> = marked
        .iter()
        .filter(|(_, star)| *star)
        .map(|(c, _)| c.as_str())
        .collect();
    // The display-only GPU001 and the unsafe NCCL002 are not `[*]`, and
    // the count of `[*]` rows' findings is the summary's fixable count.
    assert_eq!(starred, ["SHM001"], "{marked:?}");
    assert_eq!(marked.len(), 4, "{marked:?}");
    assert!(
        summary.ends_with(
            "1 fixable with `--fix` (1 more with `--unsafe-fixes`). 1 has a suggested fix to apply by hand."
        ),
        "{summary}"
    );
    let (marked, summary) = rows(&["check", "--statistics", "--unsafe-fixes"]);
    let starred: Vec<&str> = marked
        .iter()
        .filter(|(_, star)| *star)
        .map(|(c, _)| c.as_str())
        .collect();
    assert_eq!(starred, ["NCCL002", "SHM001"], "{marked:?}");
    assert!(
        summary.contains("2 fixable with `--fix --unsafe-fixes`."),
        "{summary}"
    );
}

#[test]
fn diff_says_what_it_fixes_and_what_it_leaves() {
    let dir = every_kind_of_fix();
    let out = gpulint(dir.path(), &["check", "--diff", "compose.yaml"]);
    assert_eq!(out.status.code(), Some(1), "the patch is not empty");
    assert_eq!(
        stderr(&out),
        "Would fix 1 finding in 1 file (1 more finding fixable with `--unsafe-fixes`, 1 with a suggested fix to apply by hand, 1 without a fix).\n"
    );
    let all = gpulint(
        dir.path(),
        &["check", "--diff", "--unsafe-fixes", "compose.yaml"],
    );
    assert_eq!(
        stderr(&all),
        "Would fix 2 findings in 1 file (1 more finding with a suggested fix to apply by hand, 1 without a fix).\n"
    );
}

/// When the only fixes are unsafe, `--diff` prints nothing and exits 0 (its
/// status is about the patch), and says there are fixes behind
/// `--unsafe-fixes` instead of "Nothing to fix: 0 findings in 0 files".
#[test]
fn diff_with_only_unsafe_fixes_names_the_hidden_ones() {
    let dir = tempfile::tempdir().unwrap();
    let text = "services:\n  t:\n    gpus: all\n    shm_size: 64m\n    environment:\n      NCCL_P2P_DISABLE: \"1\"\n";
    write(dir.path(), "compose.yaml", text);
    let out = gpulint(dir.path(), &["check", "--diff", "compose.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "No fixes to apply (2 findings fixable with `--unsafe-fixes`).\n"
    );
    let check = gpulint(dir.path(), &["check", "compose.yaml"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        stdout(&check).ends_with("2 fixable with `--fix --unsafe-fixes`.\n"),
        "{}",
        stdout(&check)
    );
    let nothing = gpulint_with_stdin(
        dir.path(),
        &["check", "--diff", "-", "--stdin-filename", "compose.yaml"],
        CLEAN,
    );
    assert_eq!(stderr(&nothing), "No fixes to apply.\n");
}

/// 400 services that each need two safe fixes: all 800 are applied (the
/// old loop stopped at 500 and said "Would fix 500 findings").
#[test]
fn diff_fixes_every_finding_of_a_big_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("services:\n");
    for i in 0..400 {
        text.push_str(&format!(
            "  s{i}:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node 8 train.py\n    gpus: all\n"
        ));
    }
    write(dir.path(), "compose.yaml", &text);
    let out = gpulint(dir.path(), &["check", "--diff", "compose.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "Would fix 800 findings in 1 file.\n");
    assert_eq!(
        stdout(&out).matches("\n+    shm_size: \"8gb\"\n").count(),
        400
    );
    assert_eq!(stdout(&out).matches("\n+      memlock: -1\n").count(), 400);
}

/// Old Mac line endings: YAML reads a lone CR as a line break, and so do
/// editors. Findings were put on line 1 (at the column counted from the
/// start of the file) and the fix, written with `\n`, was refused as
/// invalid YAML.
#[test]
fn lone_cr_line_endings_place_findings_and_take_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        "services:\r  trainer:\r    image: nvcr.io/nvidia/pytorch:24.01-py3\r    gpus: all\r";
    write(dir.path(), "compose.yaml", text);
    let out = gpulint(
        dir.path(),
        &[
            "check",
            "--output-format",
            "concise",
            "--select",
            "SHM001",
            "compose.yaml",
        ],
    );
    assert!(
        stdout(&out).starts_with("compose.yaml:2:3: warning[SHM001]"),
        "{}",
        stdout(&out)
    );
    let out = gpulint(
        dir.path(),
        &["check", "--fix", "--select", "SHM001", "compose.yaml"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let fixed = std::fs::read_to_string(dir.path().join("compose.yaml")).unwrap();
    assert_eq!(fixed, format!("{text}    shm_size: \"8gb\"\r"));
}

/// A here-document whose delimiter is quoted (`<<'EOF'`, `<<"EOF"`) or
/// written apart (`<< EOF`) was not skipped: an apostrophe in its body
/// opened a quote that hid the real `docker run` after it, and `--fix`
/// and `--add-noqa` edited the body (text a program reads, not a command).
#[test]
fn here_document_bodies_are_text_whatever_their_delimiter() {
    for operator in ["<<'EOF'", "<<\"EOF\"", "<< EOF", "<<-EOF"] {
        let dir = tempfile::tempdir().unwrap();
        let body = "It's the body: docker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=8 a.py\n";
        let text = format!(
            "#!/bin/bash\ncat {operator} > README.txt\n{body}EOF\ndocker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=8 train.py\n"
        );
        write(dir.path(), "run.sh", &text);
        let out = gpulint(
            dir.path(),
            &[
                "check",
                "--output-format",
                "concise",
                "--select",
                "SHM001",
                "run.sh",
            ],
        );
        let report = stdout(&out);
        // The real `docker run`, on line 5, and nothing in the body (line 3).
        assert_eq!(
            report
                .lines()
                .map(|l| l.split(':').nth(1).unwrap())
                .collect::<Vec<_>>(),
            ["5"],
            "{operator}: {report}"
        );
        let out = gpulint(
            dir.path(),
            &["check", "--add-noqa", "--select", "SHM001", "run.sh"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let out = gpulint(
            dir.path(),
            &["check", "--fix", "--select", "SHM001", "run.sh"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let after = std::fs::read_to_string(dir.path().join("run.sh")).unwrap();
        assert!(
            after.contains(&format!("{operator} > README.txt\n{body}EOF\n")),
            "{operator}: {after}"
        );
        assert_eq!(after.matches("docker run").count(), 2, "{after}");
    }
}

/// A FIFO named like an ignore file in a walked directory made `check DIR`
/// wait forever: the walk opened it with a plain read. Now that directory
/// is reported and the rest is checked. (The time limit only tells a hang
/// from an answer; it measures nothing.)
#[cfg(unix)]
#[test]
fn a_fifo_ignore_file_does_not_block_the_walk() {
    let dir = tempfile::tempdir().unwrap();
    let gpu = "services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n";
    for (sub, fifo) in [
        ("a", ".gitignore"),
        ("b", ".ignore"),
        ("c", ".git/info/exclude"),
    ] {
        write(dir.path(), &format!("{sub}/compose.yaml"), gpu);
        let fifo = dir.path().join(sub).join(fifo);
        std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
        let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
    }
    write(dir.path(), "ok/compose.yaml", gpu);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["check", "--output-format", "concise", "."])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("gpulint check waited on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("ok/compose.yaml:2:3"),
        "{}",
        stdout(&out)
    );
    for fifo in ["a/.gitignore", "b/.ignore", "c/.git/info/exclude"] {
        assert!(
            stderr(&out).contains(&format!("{fifo}: error: not a regular file")),
            "{}",
            stderr(&out)
        );
    }
}

/// Standard input had no size limit (files have 16 MiB): it is now read up
/// to the same limit, and more is a located error, not memory.
#[test]
fn standard_input_has_the_file_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let line = "# a comment line of a big compose file, just under eighty bytes long......\n";
    let limit = gpulint::engine::MAX_FILE_SIZE as usize;
    let input = line.repeat(limit / line.len() + 2);
    assert!(input.len() > limit);
    let out = gpulint_with_stdin(
        dir.path(),
        &["check", "--stdin-filename", "compose.yaml", "-"],
        &input,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("compose.yaml: error: standard input is too large"),
        "{}",
        stderr(&out)
    );
    // At the limit, it is linted.
    let input = line.repeat(limit / line.len());
    let out = gpulint_with_stdin(
        dir.path(),
        &["check", "--stdin-filename", "compose.yaml", "-"],
        &input,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A walked file whose name is not UTF-8 (Latin-1 `compose-\xe9.yaml`,
/// `run-\xe9.sh`, a Dockerfile in a directory `d\xe9`) is linted as it is
/// when named on the command line: the walk matched names as UTF-8 and
/// read such a compose file as "not named", so it was left out ("0 files
/// checked"). The text report writes the bytes as `\xe9`; JSON, which must
/// stay UTF-8, writes them lossily.
#[cfg(unix)]
#[test]
fn walking_finds_files_whose_names_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let name = |bytes: &[u8]| root.join(std::ffi::OsStr::from_bytes(bytes));
    std::fs::write(name(b"compose-\xe9.yaml"), GPU_SERVICE).unwrap();
    std::fs::create_dir(name(b"d\xe9")).unwrap();
    std::fs::write(
        name(b"d\xe9/Dockerfile"),
        "FROM nvcr.io/nvidia/pytorch:24.01-py3\nENV CUDA_VISIBLE_DEVICES=0\n",
    )
    .unwrap();
    std::fs::write(
        name(b"run-\xe9.sh"),
        "#!/bin/sh\ndocker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=4 train.py\n",
    )
    .unwrap();
    let out = gpulint(root, &["check", "--output-format", "concise", "."]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    for (file, code) in [
        ("compose-\\xe9.yaml", "SHM001"),
        ("d\\xe9/Dockerfile", "DF005"),
        ("run-\\xe9.sh", "SHM001"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("./{file}:")) && l.contains(code)),
            "{file} {code}: {text}"
        );
    }
    let out = gpulint(root, &["check", "."]);
    assert!(
        stdout(&out).contains("in 3 files of 3 checked"),
        "{}",
        stdout(&out)
    );
    let out = gpulint(root, &["check", "--output-format", "json", "."]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["summary"]["files"], 3, "{report}");
    let paths: std::collections::BTreeSet<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "./compose-\u{fffd}.yaml",
            "./d\u{fffd}/Dockerfile",
            "./run-\u{fffd}.sh"
        ]
        .into_iter()
        .collect(),
        "{report}"
    );
}

/// A file name that is not UTF-8 was written lossily (U+FFFD) in `--diff`
/// headers, so neither `git apply` nor `patch` found the file. Both are
/// the judges here.
#[cfg(unix)]
#[test]
fn diff_headers_name_non_utf8_paths_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let odd = std::ffi::OsStr::from_bytes(b"dir\xff\xfe x");
    let service_dir = dir.path().join(odd);
    std::fs::create_dir_all(&service_dir).unwrap();
    std::fs::write(
        service_dir.join("compose.yaml"),
        "services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    };
    git(&["init", "-q", "."]);
    git(&["add", "."]);
    let out = gpulint(dir.path(), &["check", "--diff", "--select", "SHM001", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let patch = dir.path().join("fix.patch");
    std::fs::write(&patch, &out.stdout).unwrap();
    assert!(
        stdout(&out).starts_with("--- \"a/dir\\377\\376 x/compose.yaml\"\n"),
        "{}",
        stdout(&out)
    );
    git(&["apply", "--check", "fix.patch"]);
    let out = Command::new("patch")
        .args(["-p1", "--dry-run", "-i", "fix.patch"])
        .current_dir(dir.path())
        .output()
        .expect("patch runs");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    git(&["apply", "fix.patch"]);
    let fixed = std::fs::read_to_string(service_dir.join("compose.yaml")).unwrap();
    assert!(fixed.contains("shm_size: \"8gb\""), "{fixed}");
}

/// `gpulint check DIR` on a five-file project (compose, override, `.env`,
/// an extended base, an included file) opens each file at most once, as
/// `strace` sees the process: the project is loaded once and every file
/// read through one cache, however many of its files are linted.
#[test]
#[ignore = "needs strace: installed and run by .ci/run"]
fn each_file_of_a_project_is_opened_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".env", "SHM=8gb\nGPUS=all\n");
    write(
        root,
        "compose.yaml",
        "include:\n  - tools/compose.yaml\nservices:\n  trainer:\n    extends:\n      file: base.yaml\n      service: gpu\n    command: torchrun --nproc_per_node=8 train.py\n",
    );
    write(
        root,
        "compose.override.yaml",
        "services:\n  trainer:\n    shm_size: ${SHM}\n",
    );
    write(
        root,
        "base.yaml",
        "services:\n  gpu:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: ${GPUS}\n",
    );
    write(
        root,
        "tools/compose.yaml",
        "services:\n  board:\n    image: tensorflow/tensorflow:2.15.0\n",
    );
    let trace = root.join("trace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_gpulint"))
        .args(["check", "."])
        .current_dir(root)
        .output()
        .expect("strace runs (install it: apt-get install strace)");
    assert!(out.status.code().is_some(), "{out:?}");
    let log = std::fs::read_to_string(&trace).unwrap();
    let mut opened: std::collections::BTreeMap<String, usize> = Default::default();
    for line in log.lines() {
        let Some(start) = line.find('"') else {
            continue;
        };
        let Some(len) = line[start + 1..].find('"') else {
            continue;
        };
        let path = Path::new(&line[start + 1..start + 1 + len]);
        // Relative to the project, however the process spelled it.
        let name = path.strip_prefix(root).unwrap_or(path);
        let name = name.strip_prefix(".").unwrap_or(name);
        let name = name.to_string_lossy();
        let project_files = [
            ".env",
            "compose.yaml",
            "compose.override.yaml",
            "base.yaml",
            "tools/compose.yaml",
        ];
        if project_files.contains(&name.as_ref()) {
            *opened.entry(name.to_string()).or_default() += 1;
        }
    }
    assert!(opened.len() >= 5, "{opened:?}\n{log}");
    let twice: Vec<_> = opened.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "opened more than once: {twice:?}\n{log}");
}

/// `check` reports and then forgets each chunk of files (a few hundred, in
/// path order), so its memory does not grow with the tree. Across chunks a
/// run still says what one run over everything says: a file extended from
/// every chunk (outside the paths given) gets its finding once, named by
/// its own path, after the linted files; the streamed text, the whole-run
/// JSON and a check of one file alone agree.
#[test]
fn a_tree_of_many_chunks_reports_each_finding_once_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "shared/base.yaml",
        "services:\n  gpu:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n",
    );
    let service = "services:\n  trainer:\n    extends:\n      file: ../../shared/base.yaml\n      service: gpu\n    command: torchrun --nproc_per_node=8 train.py\n";
    let services = 1_300;
    for i in 0..services {
        write(root, &format!("svc/{i:04}/compose.yaml"), service);
    }
    let concise = gpulint(root, &["check", "svc", "--output-format", "concise"]);
    let lines: Vec<&str> = std::str::from_utf8(&concise.stdout)
        .unwrap()
        .lines()
        .collect();
    assert_eq!(lines.len(), 2 * services + 1, "{}", stderr(&concise));
    let base: Vec<&&str> = lines.iter().filter(|l| l.contains("base.yaml")).collect();
    assert_eq!(
        base,
        [
            &"shared/base.yaml:8:15: error[GPU002] device reservation of service `trainer` has no `capabilities`"
        ]
    );
    assert!(lines.last().unwrap().starts_with("shared/base.yaml:"));
    let paths: Vec<&str> = lines[..lines.len() - 1]
        .iter()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert!(paths.is_sorted(), "findings in path order");
    let alone = gpulint(
        root,
        &[
            "check",
            "svc/0777/compose.yaml",
            "--output-format",
            "concise",
        ],
    );
    let mine: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("svc/0777/"))
        .collect();
    let alone_lines: Vec<&str> = std::str::from_utf8(&alone.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("svc/0777/"))
        .collect();
    assert_eq!(mine, alone_lines);
    let json = gpulint(root, &["check", "svc", "--output-format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let from_json: Vec<String> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{}:{}: {}",
                d["path"].as_str().unwrap(),
                d["start"]["line"],
                d["start"]["column"],
                d["code"].as_str().unwrap()
            )
        })
        .collect();
    let from_text: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut parts = l.splitn(4, ':');
            let (path, line, column) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            let code = l.split('[').nth(1).unwrap().split(']').next().unwrap();
            format!("{path}:{line}:{column}: {code}")
        })
        .collect();
    let differ = from_json.iter().zip(&from_text).position(|(a, b)| a != b);
    assert!(
        from_json.len() == from_text.len() && differ.is_none(),
        "JSON and text differ: {} and {} findings, first at {differ:?}",
        from_json.len(),
        from_text.len()
    );
    assert_eq!(concise.status.code(), Some(1));
}

/// The peak memory of a `check` of `dir` on `threads` threads, in KiB: the
/// high-water mark of the child's own memory (`VmHWM`), read until it
/// exits. Not `wait4`'s `ru_maxrss`: Linux counts into that the memory of
/// the process that spawned the child, recorded when the child calls
/// `exec` (a `/bin/true` spawned by a process of 300 MiB reports 300 MiB),
/// so it measured this test binary, with every test running beside this
/// one, as often as gpulint.
#[cfg(target_os = "linux")]
fn peak_rss_kib(dir: &Path, threads: &str) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .current_dir(dir)
        .args(["check", ".", "--quiet", "--output-format", "concise"])
        .env("RAYON_NUM_THREADS", threads)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let high_water_mark = |status: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let mut peak = 0;
    loop {
        // Read before asking whether it exited: the last reading is then
        // at most a poll's interval before the end. An exited child's
        // status has no `VmHWM` (its memory is gone).
        if let Some(kib) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|status| high_water_mark(&status))
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.code().is_some(), "gpulint did not exit: {status}");
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(
        peak > 0,
        "no VmHWM was read for gpulint in {}",
        dir.display()
    );
    peak
}

/// Each chunk's texts, parses and projects are freed while the next chunk
/// is checked, on one thread as on several: what a run keeps per file (its
/// place in the sorted list, its directory's configuration) is a few
/// hundred bytes, not its text and parse. (A drop handed to the pool once
/// waited for an idle thread, which one thread never is before the end:
/// 11 KiB a file, and 96,000 files held 1 GiB.) The growth between two
/// runs, not a bound on either, so the machine does not matter.
#[cfg(target_os = "linux")]
#[test]
fn check_memory_does_not_grow_with_the_tree_on_one_thread_or_two() {
    let service = |i: usize| {
        (
            format!(
                "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node=8 train_{i}.py\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n"
            ),
            format!(
                "FROM nvcr.io/nvidia/pytorch:24.01-py3\nRUN pip install --no-cache-dir deepspeed==0.14.{i}\nCOPY . /app\nCMD [\"torchrun\", \"--nproc_per_node=8\", \"train.py\"]\n"
            ),
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train-{i}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: trainer\n          image: nvcr.io/nvidia/pytorch:24.01-py3\n          command: [torchrun, --nproc_per_node=8, train.py]\n          resources:\n            limits:\n              nvidia.com/gpu: 8\n"
            ),
        )
    };
    let tree = |services: usize| {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..services {
            let (compose, dockerfile, manifest) = service(i);
            write(dir.path(), &format!("svc/{i:05}/compose.yaml"), compose);
            write(dir.path(), &format!("svc/{i:05}/Dockerfile"), dockerfile);
            write(dir.path(), &format!("svc/{i:05}/job.yaml"), manifest);
        }
        dir
    };
    let small = tree(500);
    let big = tree(4_000);
    for threads in ["1", "2"] {
        let (small_kib, big_kib) = (
            peak_rss_kib(small.path(), threads),
            peak_rss_kib(big.path(), threads),
        );
        let per_file = (big_kib as f64 - small_kib as f64) / (12_000 - 1_500) as f64;
        assert!(
            per_file < 2.0,
            "{threads} thread(s): 1,500 files peaked at {small_kib} KiB, 12,000 at {big_kib} KiB: {per_file:.2} KiB more a file"
        );
    }
}

/// A size of 2^63 bytes or more becomes negative in Compose (go-units reads
/// it into an int64), and the engine refuses it: SHM003, and a config error
/// as `[shm] fix-size`.
#[test]
fn sizes_past_int64_are_malformed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a/compose.yaml",
        format!("{GPU_SERVICE}    shm_size: \"8589934592gb\"\n"),
    );
    let out = gpulint(dir.path(), &["check", "--output-format", "concise", "a"]);
    let report = stdout(&out);
    assert!(
        report.contains("error[SHM003]") && report.contains("2^63 bytes or more"),
        "{report}"
    );
    write(
        dir.path(),
        "b/gpulint.toml",
        "[shm]\nfix-size = \"17179869184gb\"\n",
    );
    write(dir.path(), "b/compose.yaml", GPU_SERVICE);
    let out = gpulint(dir.path(), &["check", "b"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("[shm] fix-size = \"17179869184gb\" is not a size"),
        "{}",
        stderr(&out)
    );
}

/// `image:<TAB>x` is YAML Compose (go-yaml) loads: linted, not refused.
#[test]
fn a_tab_after_a_key_is_a_separator() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "compose.yaml",
        "services:\n  trainer:\n    image:\tnvcr.io/nvidia/pytorch:24.01-py3\n    gpus:\tall\n",
    );
    let out = gpulint(dir.path(), &["check", "--output-format", "concise", "."]);
    let report = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{report}{}", stderr(&out));
    assert!(report.contains("warning[SHM001]"), "{report}");
    let out = gpulint(dir.path(), &["check", "--fix", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `gpulint completions bash` is a script bash parses, and once sourced
/// it completes `gpulint ch` to `check`, as bash's programmable completion
/// would call it.
#[test]
fn completions_bash_parses_and_completes_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpulint(dir.path(), &["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let script = dir.path().join("gpulint.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let parsed = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(parsed.status.success(), "{}", stderr(&parsed));
    let completed = Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1" || exit 9
COMP_WORDS=(gpulint ch); COMP_CWORD=1; COMP_LINE="gpulint ch"; COMP_POINT=${#COMP_LINE}
fn=$(complete -p gpulint | sed -n 's/.*-F \([^ ]*\).*/\1/p')
"$fn" gpulint ch gpulint
printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(&script)
        .output()
        .unwrap();
    assert!(completed.status.success(), "{}", stderr(&completed));
    assert_eq!(stdout(&completed).trim(), "check", "{}", stderr(&completed));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = gpulint(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        assert!(stdout(&out).contains("gpulint"), "{shell}");
    }
    let unknown = gpulint(dir.path(), &["completions", "tcsh"]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// `gpulint man` prints a roff page that man (or groff) renders, naming
/// the commands.
#[test]
fn man_prints_a_page_that_renders() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpulint(dir.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with(".ie") || page.starts_with(".TH"), "{page}");
    assert!(page.contains(".TH gpulint 1"), "{page}");
    let render = |program: &str, args: &[&str]| -> Option<String> {
        let mut child = Command::new(program)
            .args(args)
            .env("MANWIDTH", "80")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let done = child.wait_with_output().unwrap();
        assert!(done.status.success(), "{program}: {}", stderr(&done));
        Some(stdout(&done))
    };
    let rendered = render("man", &["-l", "-"]).or_else(|| render("groff", &["-man", "-Tascii"]));
    if let Some(text) = rendered {
        for word in ["gpulint", "check", "inspect", "completions"] {
            assert!(text.contains(word), "{word} missing from\n{text}");
        }
    }
}

/// `--show-files` lists exactly the files `check` lints (those its JSON
/// report counts and names), and lints nothing: walked YAML that is no
/// manifest, ignored files and other files are left out.
#[test]
fn show_files_lists_what_check_lints() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/compose.yaml", GPU_SERVICE);
    write(
        dir.path(),
        "a/Dockerfile",
        "FROM nvcr.io/nvidia/pytorch:24.01-py3\nRUN pip install torch\n",
    );
    write(
        dir.path(),
        "k8s/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n        - name: t\n          image: nvcr.io/nvidia/pytorch:24.01-py3\n          command: [torchrun, --nproc_per_node=8, train.py]\n          resources:\n            limits:\n              nvidia.com/gpu: 8\n",
    );
    write(dir.path(), "k8s/values.yaml", "replicas: 2\nimage: nginx\n");
    write(
        dir.path(),
        "run.sh",
        "#!/bin/sh\ndocker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=8 train.py\n",
    );
    write(dir.path(), "vendor/compose.yaml", GPU_SERVICE);
    write(dir.path(), ".gitignore", "vendor/\n");
    write(dir.path(), "README.md", "# nothing\n");
    let out = gpulint(dir.path(), &["check", "--show-files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(
        listed,
        [
            "./a/Dockerfile",
            "./a/compose.yaml",
            "./k8s/job.yaml",
            "./run.sh"
        ],
        "{}",
        stdout(&out)
    );
    let json = gpulint(dir.path(), &["check", "--output-format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["summary"]["files"], listed.len(), "{report}");
    let mut named: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    named.dedup();
    assert!(named.len() >= 3, "{report}");
    assert!(
        named.iter().all(|p| listed.contains(p)),
        "{named:?} {listed:?}"
    );
    // Named files are listed as named.
    let named = gpulint(
        dir.path(),
        &["check", "--show-files", "k8s/values.yaml", "a"],
    );
    assert_eq!(
        stdout(&named).lines().collect::<Vec<_>>(),
        ["a/Dockerfile", "a/compose.yaml", "k8s/values.yaml"]
    );
}

/// `--show-settings` prints the configuration that applies to a path:
/// the file it comes from, the rules it enables with their severities,
/// and its `[shm]` and `[compose]` settings.
#[test]
fn show_settings_prints_the_resolved_configuration() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "svc/gpulint.toml",
        "select = [\"SHM\"]\nignore = [\"SHM003\"]\n[severity]\nSHM001 = \"error\"\n[shm]\nfix-size = \"16gb\"\ndataloader-workers = 4\n[compose]\nfragments = [\"parts/*.yaml\"]\nprojects = [[\"compose.yaml\", \"compose.gpu.yaml\"]]\n",
    );
    write(dir.path(), "svc/compose.yaml", CLEAN);
    write(dir.path(), "svc/compose.gpu.yaml", CLEAN);
    let out = gpulint(dir.path(), &["check", "--show-settings", "svc"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = stdout(&out);
    for expected in [
        "config file: svc/gpulint.toml",
        "SHM001    error    default-shm-on-gpu-service  (set by [severity])",
        "  fix-size = \"16gb\"",
        "  dataloader-workers = 4",
        "  project = svc/compose.yaml + svc/compose.gpu.yaml",
        "  fragments = parts/*.yaml (relative to svc)",
    ] {
        assert!(
            shown.contains(expected),
            "{expected:?} missing from\n{shown}"
        );
    }
    assert!(!shown.contains("SHM003    "), "{shown}");
    assert!(!shown.contains("GPU001    "), "{shown}");
    assert!(shown.contains("disabled rules: "), "{shown}");
    let defaults = gpulint(dir.path(), &["check", "--show-settings"]);
    assert!(
        stdout(&defaults).contains("config file: none"),
        "{}",
        stdout(&defaults)
    );
}

/// `gpulint rule` takes a rule's name as well as its code, in any case,
/// and `--all --output-format json` gives every rule's metadata and doc.
#[test]
fn rule_accepts_a_name_and_lists_every_rule_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let by_code = gpulint(dir.path(), &["rule", "SHM001"]);
    assert_eq!(by_code.status.code(), Some(0));
    for name in ["default-shm-on-gpu-service", "Default-SHM-On-GPU-Service"] {
        let by_name = gpulint(dir.path(), &["rule", name]);
        assert_eq!(by_name.status.code(), Some(0), "{}", stderr(&by_name));
        assert_eq!(stdout(&by_name), stdout(&by_code));
    }
    assert!(stdout(&by_code).starts_with("default-shm-on-gpu-service (SHM001)"));
    let unknown = gpulint(dir.path(), &["rule", "no-such-rule"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("`no-such-rule`"),
        "{}",
        stderr(&unknown)
    );

    let out = gpulint(dir.path(), &["rule", "--all", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), gpulint::rules::all_meta().len());
    let shm001 = rules.iter().find(|r| r["code"] == "SHM001").unwrap();
    assert_eq!(shm001["name"], "default-shm-on-gpu-service");
    assert_eq!(shm001["fix"], "safe");
    assert!(!shm001["targets"].as_array().unwrap().is_empty());
    assert!(shm001["doc"].as_str().unwrap().contains("## What it does"));
    let one = gpulint(dir.path(), &["rule", "shm001", "--output-format", "json"]);
    let one: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(&one, shm001);
}

/// `--output-file FORMAT:PATH` with a format gpulint does not write is
/// refused with the list of formats, and writes nothing (it was a text
/// report in a file named `xml:o.xml`); `./xml:o.xml` names that file.
#[test]
fn output_file_with_an_unknown_format_is_refused_with_the_formats() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE);
    let out = gpulint(dir.path(), &["check", "--output-file", "xml:o.xml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("unknown report format `xml`"), "{err}");
    assert!(
        err.contains("text, concise, json, github, sarif, gitlab, junit"),
        "{err}"
    );
    assert!(!dir.path().join("xml:o.xml").exists());
    assert!(!dir.path().join("o.xml").exists());
    let named = gpulint(dir.path(), &["check", "--output-file", "./xml:o.xml"]);
    assert_eq!(named.status.code(), Some(1), "{}", stderr(&named));
    assert!(dir.path().join("xml:o.xml").is_file());
    let known = gpulint(dir.path(), &["check", "--output-file", "sarif:o.sarif"]);
    assert_eq!(known.status.code(), Some(1), "{}", stderr(&known));
    assert!(dir.path().join("o.sarif").is_file());
}

/// A configuration that does not load is one error, said once (not once
/// per file under it and once more for itself), naming the file relative
/// to the working directory.
#[test]
fn a_config_error_is_reported_once_at_a_relative_path() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gpulint.toml", "selectt = [\"SHM\"]\n");
    write(dir.path(), "a/compose.yaml", CLEAN);
    write(dir.path(), "b/compose.yaml", CLEAN);
    write(
        dir.path(),
        "svc/gpulint.toml",
        "[shm]\nmin-size = \"lots\"\n",
    );
    write(dir.path(), "svc/compose.yaml", CLEAN);
    for args in [
        &["check"][..],
        &["check", "a", "b/compose.yaml", "svc"],
        &["check", "--output-format", "json", "."],
    ] {
        let out = gpulint(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().collect();
        let top: Vec<&&str> = lines.iter().filter(|l| l.contains("selectt")).collect();
        assert_eq!(top.len(), 1, "{args:?}: {err}");
        assert!(
            top[0].starts_with("gpulint: error: gpulint.toml:1:1: unknown field `selectt`"),
            "{args:?}: {err}"
        );
        let svc: Vec<&&str> = lines.iter().filter(|l| l.contains("min-size")).collect();
        assert_eq!(svc.len(), 1, "{args:?}: {err}");
        assert!(
            svc[0].starts_with("gpulint: error: svc/gpulint.toml: "),
            "{args:?}: {err}"
        );
        let root = dir.path().canonicalize().unwrap();
        assert!(!err.contains(&*root.to_string_lossy()), "{args:?}: {err}");
        assert!(
            !err.contains(&*dir.path().to_string_lossy()),
            "{args:?}: {err}"
        );
    }
}

/// `--color auto` (the default) follows the conventions: `FORCE_COLOR` and
/// `CLICOLOR_FORCE` colour a piped report, `NO_COLOR` wins over both, and
/// `CLICOLOR=0` or a pipe alone gives plain text; `--color` wins over all.
#[test]
fn color_follows_force_color_no_color_and_clicolor() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE);
    let run = |env: &[(&str, &str)], args: &[&str]| -> bool {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gpulint"));
        command.arg("check").args(args).current_dir(dir.path());
        for name in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stdout(&out).contains("\x1b[")
    };
    assert!(!run(&[], &[]), "a pipe is not coloured");
    assert!(run(&[("FORCE_COLOR", "1")], &[]));
    assert!(run(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!run(&[("FORCE_COLOR", "0")], &[]));
    assert!(!run(&[("NO_COLOR", "1"), ("FORCE_COLOR", "1")], &[]));
    assert!(!run(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")], &[]));
    assert!(!run(&[("CLICOLOR", "0")], &[]));
    assert!(!run(&[("FORCE_COLOR", "1")], &["--color", "never"]));
    assert!(run(&[("NO_COLOR", "1")], &["--color", "always"]));
}

/// `--add-noqa=REASON` writes that reason after every comment it adds, in
/// each file's own comment syntax (`#` in YAML, Dockerfiles and scripts,
/// `//` in a devcontainer.json); a reason that cannot be one comment's
/// text is refused before anything is written.
#[test]
fn add_noqa_with_a_reason_writes_it_in_each_files_comment_syntax() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_SERVICE);
    write(
        dir.path(),
        "Dockerfile",
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=0\n",
    );
    write(
        dir.path(),
        "run.sh",
        "#!/bin/bash\ndocker run --gpus all img torchrun --nproc_per_node=8 train.py\n",
    );
    write(
        dir.path(),
        ".devcontainer/devcontainer.json",
        "{\n  \"image\": \"nvcr.io/nvidia/pytorch:24.01-py3\",\n  \"runArgs\": [\"--gpus\", \"all\"]\n}\n",
    );
    let reason = "adopted 2026-12: see ISSUE-42";
    for bad in [
        "--add-noqa=",
        "--add-noqa=two\nlines",
        "--add-noqa=ends with \\",
    ] {
        let refused = gpulint(dir.path(), &["check", bad]);
        assert_eq!(refused.status.code(), Some(2), "{bad:?}");
        assert!(
            stderr(&refused).contains("--add-noqa: "),
            "{}",
            stderr(&refused)
        );
    }
    let out = gpulint(dir.path(), &["check", &format!("--add-noqa={reason}")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    for (name, marker) in [
        ("compose.yaml", "#"),
        ("Dockerfile", "#"),
        ("run.sh", "#"),
        (".devcontainer/devcontainer.json", "//"),
    ] {
        let text = read(name);
        let comments: Vec<&str> = text
            .lines()
            .map(str::trim_start)
            .filter(|l| l.contains("gpulint: ignore"))
            .collect();
        assert!(!comments.is_empty(), "{name}: no comment in\n{text}");
        for comment in comments {
            assert!(
                comment.starts_with(&format!("{marker} gpulint: ignore"))
                    && comment.ends_with(&format!("] {reason}")),
                "{name}: {comment}"
            );
        }
        assert!(!text.contains("TODO"), "{name}: {text}");
    }
    // Without a reason the comments ask for one, as before; a path after
    // the flag is still a path.
    write(dir.path(), "b/compose.yaml", GPU_SERVICE);
    let default = gpulint(dir.path(), &["check", "--add-noqa", "b"]);
    assert_eq!(default.status.code(), Some(0), "{}", stderr(&default));
    assert!(read("b/compose.yaml").contains("] TODO: say why this is safe, or fix it"));
}

/// A kustomization's patches are skipped wherever they are (`patches/x.yaml`,
/// `../common/x.yaml`), and a manifest a Quadlet `.kube` unit plays is not
/// judged by the API's schema (`podman kube play` reads it leniently).
#[test]
fn patches_anywhere_and_podman_played_manifests_are_not_refusals() {
    let dir = tempfile::tempdir().unwrap();
    // A patch is a fragment: no selector, and an env value Podman would take.
    let fragment = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n      - name: train\n        shm_size: 1g\n";
    write(
        dir.path(),
        "overlay/kustomization.yaml",
        b"resources: [../base]\npatches:\n- path: patches/gpu.yaml\n- path: ../common/shm.yaml\n",
    );
    write(dir.path(), "overlay/patches/gpu.yaml", fragment);
    write(dir.path(), "common/shm.yaml", fragment);
    let pod = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n    env:\n    - name: PORT\n      value: 8001\n";
    write(dir.path(), "quadlet/web.yaml", pod);
    write(dir.path(), "quadlet/web.kube", b"[Kube]\nYaml=web.yaml\n");
    write(dir.path(), "k8s/web.yaml", pod);
    let out = gpulint(dir.path(), &["check", "--output-format", "concise"]);
    let text = stdout(&out);
    let findings: Vec<&str> = text.lines().collect();
    assert_eq!(
        findings,
        [
            "./k8s/web.yaml:11:14: error[K8S014] Kubernetes refuses Pod \"web\": \"spec.containers[0].env[0].value\" must be a string, not a number"
        ],
        "{}",
        stderr(&out)
    );
}
