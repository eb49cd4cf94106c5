//! Podman judges the `podman run` model, as the Docker Engine judges the
//! compose and `docker run` ones (`tests/it/engine.rs`): each generated set of
//! options is given to a real `podman create` (Debian 12's Podman 4.3,
//! rootful, vfs storage and cgroupfs in a storage root of the test's own,
//! an empty image imported with `podman import`: nothing is pulled), and
//! what the container gets at /dev/shm is read from what Podman records:
//! the OCI spec it writes (`podman init`, whose start of the container the
//! sandbox refuses after the spec is written: the IPC namespace and the
//! mount at /dev/shm) and `podman inspect`'s `HostConfig.ShmSize` (the
//! size of the tmpfs Podman mounts there). `gpulint inspect` must say the
//! same of the `podman run` line, and of the Quadlet unit that writes the
//! same options as keys (`ShmSize=`, `Tmpfs=`, `Mount=`, `Volume=`,
//! `PodmanArgs=`), whose generator hands them to `podman run` as flags.
//! Podman refusing the options must be gpulint's `refused`.

use crate::common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

const SHM_SIZES: &[&str] = &[
    "1g", "1G", "1gb", "1GB", "2GiB", "512m", "512M", "64k", "100b", "1024", "0", "1.5g", "8g",
    "-1", "abc", "1 g",
];
const IPC: &[&str] = &[
    "--ipc=host",
    "--ipc host",
    "--ipc=private",
    "--ipc=shareable",
    "--ipc=none",
];
const SHM_MOUNTS: &[&str] = &[
    "--tmpfs /dev/shm:size=1g",
    "--tmpfs /dev/shm:size=512m,mode=1777",
    "--mount type=tmpfs,destination=/dev/shm,tmpfs-size=2g",
    "-v /tmp:/dev/shm",
];

/// Modes Podman refuses, and options after a word the shell drops (an
/// unset variable: Podman reads the options after it).
const OTHERS: &[&str] = &[
    "--ipc=bogus",
    "--ipc=HOST",
    "--ipc=service:x",
    "$UNSET_EXTRA --shm-size=1g",
    "$UNSET_EXTRA --ipc=host",
    "${UNSET_EXTRA} --tmpfs /dev/shm:size=1g",
    "$UNSET_EXTRA -it --shm-size 2g",
    "-e=NCCL_DEBUG=INFO --shm-size=1g",
    "--ipc=shareable --tmpfs /dev/shm",
    "--shm-size=2g --mount type=volume,src=gpulint-judge,dst=/dev/shm",
];

/// The generated cases: every size alone and with every IPC mode and
/// mount, every IPC mode and mount alone and together, the others, and
/// none at all.
fn cases() -> Vec<String> {
    let mut cases = vec![String::new()];
    cases.extend(IPC.iter().chain(SHM_MOUNTS).map(|o| o.to_string()));
    for ipc in IPC {
        for mount in SHM_MOUNTS {
            cases.push(format!("{ipc} {mount}"));
        }
    }
    cases.extend(OTHERS.iter().map(|o| o.to_string()));
    for size in SHM_SIZES {
        let size_option = format!("--shm-size={size}");
        let size_option = if size.contains(' ') {
            format!("--shm-size='{size}'")
        } else {
            size_option
        };
        cases.push(size_option.clone());
        for other in IPC.iter().chain(SHM_MOUNTS) {
            cases.push(format!("{size_option} {other}"));
        }
    }
    cases
}

/// What a container gets at /dev/shm, as both sides are compared.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shm {
    Bytes(u64),
    Host,
    Unbounded,
    Disk,
    Missing,
    Refused,
    Other(String),
}

struct Podman {
    bin: PathBuf,
    dir: tempfile::TempDir,
    image: String,
}

impl Podman {
    fn start() -> Podman {
        let bin = common::required_tool("GPULINT_PODMAN", "podman", "apt-get install podman");
        let dir = tempfile::tempdir().unwrap();
        let podman = Podman {
            bin,
            dir,
            image: "localhost/gpulint-podman-judge:1".into(),
        };
        let tar = podman.dir.path().join("empty.tar");
        let status = Command::new("tar")
            .args(["-cf"])
            .arg(&tar)
            .args(["-T", "/dev/null"])
            .status()
            .unwrap();
        assert!(status.success());
        let imported = podman.run(&["import", tar.to_str().unwrap(), &podman.image]);
        assert!(imported.status.success(), "{}", text(&imported));
        podman
    }

    fn run(&self, args: &[&str]) -> Output {
        let root = self.dir.path();
        Command::new(&self.bin)
            .arg("--root")
            .arg(root.join("root"))
            .arg("--runroot")
            .arg(root.join("run"))
            .args([
                "--storage-driver",
                "vfs",
                "--cgroup-manager",
                "cgroupfs",
                "--events-backend",
                "file",
            ])
            .args(args)
            .output()
            .unwrap()
    }

    /// What Podman gives a container created with `options` (written as
    /// a shell line: `sh -c` splits them as a script would).
    fn judge(&self, options: &str) -> Shm {
        let root = self.dir.path();
        let line = format!(
            "exec \"$0\" --root {r}/root --runroot {r}/run --storage-driver vfs --cgroup-manager cgroupfs --events-backend file create {options} {image} true",
            r = root.display(),
            image = self.image
        );
        let created = Command::new("sh")
            .args(["-c", &line])
            .arg(&self.bin)
            .output()
            .unwrap();
        if !created.status.success() {
            return Shm::Refused;
        }
        let id = String::from_utf8_lossy(&created.stdout).trim().to_string();
        // The spec is written before the sandbox refuses to start it.
        let _ = self.run(&["init", &id]);
        let spec_path = root
            .join("root/vfs-containers")
            .join(&id)
            .join("userdata/config.json");
        let spec: Value = std::fs::read(&spec_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| panic!("{options}: no OCI spec at {}", spec_path.display()));
        let inspected = self.run(&["inspect", "--format", "{{.HostConfig.ShmSize}}", &id]);
        let shm_size: u64 = text(&inspected)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{options}: podman inspect said {}", text(&inspected)));
        let _ = self.run(&["rm", "-f", &id]);
        observed(&spec, shm_size)
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// /dev/shm from the OCI spec: no mount there and no IPC namespace is the
/// host's, no mount with one is none at all; a tmpfs
/// there its `size=` (the kernel's `k`, `m`, `g` are binary; 0 or none is
/// no limit); Podman's own bind of `userdata/shm` the tmpfs of
/// `HostConfig.ShmSize` it mounts (0: no limit); a bind of the host's
/// /dev/shm the host's; any other bind a disk.
fn observed(spec: &Value, shm_size: u64) -> Shm {
    let namespaces = spec["linux"]["namespaces"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mounts = spec["mounts"].as_array().cloned().unwrap_or_default();
    // A mount at /dev/shm is what the container's processes open there,
    // whatever IPC namespace they share (`--ipc=host --tmpfs /dev/shm`).
    let Some(mount) = mounts.iter().rfind(|m| m["destination"] == "/dev/shm") else {
        return if namespaces.iter().any(|n| n["type"] == "ipc") {
            Shm::Missing
        } else {
            Shm::Host
        };
    };
    let source = mount["source"].as_str().unwrap_or("");
    match mount["type"].as_str() {
        Some("tmpfs") => {
            let size = mount["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find_map(|o| o.strip_prefix("size="));
            match size.map(kernel_size) {
                None | Some(Some(0)) => Shm::Unbounded,
                Some(Some(bytes)) => Shm::Bytes(bytes),
                Some(None) => Shm::Other(format!("tmpfs {mount}")),
            }
        }
        Some("bind") if source.ends_with("/userdata/shm") => match shm_size {
            0 => Shm::Unbounded,
            bytes => Shm::Bytes(bytes),
        },
        Some("bind") if source == "/dev/shm" => Shm::Host,
        Some("bind") => Shm::Disk,
        _ => Shm::Other(mount.to_string()),
    }
}

/// A tmpfs `size=` as the kernel reads it (`memparse`).
fn kernel_size(size: &str) -> Option<u64> {
    let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit())?.min(size.len()));
    let n: u64 = digits.parse().ok()?;
    let shift = match unit {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        _ => return None,
    };
    Some(n << shift)
}

/// What `gpulint inspect` says of each container in `targets`, in order.
fn claims(targets: &[PathBuf], platform: &str) -> Vec<Shm> {
    let output = Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["inspect", "--format", "json"])
        .args(targets)
        .output()
        .unwrap();
    let json: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output)));
    json["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["platform"] == platform)
        .map(|c| {
            let shm = &c["shm"];
            match shm["kind"].as_str().unwrap_or("") {
                _ if c["refused"].is_string() => Shm::Refused,
                "default" | "sized" => Shm::Bytes(shm["bytes"].as_u64().unwrap_or(0)),
                "host" => Shm::Host,
                "unbounded" => Shm::Unbounded,
                "disk" => Shm::Disk,
                "missing" => Shm::Missing,
                "refused" => Shm::Refused,
                other => Shm::Other(format!("{other}: {}", shm["from"])),
            }
        })
        .collect()
}

/// The Quadlet unit that gives `options` with its keys, when the table
/// has a key for each (`None` when a value would need quoting).
fn quadlet_unit(options: &str, image: &str) -> Option<String> {
    let mut lines = vec!["[Container]".to_string(), format!("Image={image}")];
    let words = shell_words(options)?;
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
            _ => (word.as_str(), None),
        };
        let takes = |i: &mut usize| -> Option<String> {
            match &inline {
                Some(v) => Some(v.clone()),
                None => {
                    *i += 1;
                    words.get(*i).cloned()
                }
            }
        };
        let line = match flag {
            "--shm-size" => format!("ShmSize={}", takes(&mut i)?),
            "--tmpfs" => format!("Tmpfs={}", takes(&mut i)?),
            "--mount" => format!("Mount={}", takes(&mut i)?),
            "-v" => format!("Volume={}", takes(&mut i)?),
            "--ipc" => format!("PodmanArgs=--ipc={}", takes(&mut i)?),
            _ => return None,
        };
        if line.contains(' ') || line.contains('%') {
            return None;
        }
        lines.push(line);
        i += 1;
    }
    Some(lines.join("\n") + "\n")
}

/// `options` split as `sh` splits them (only the quoting the cases use).
fn shell_words(options: &str) -> Option<Vec<String>> {
    let line = format!("set -- {options}; for w in \"$@\"; do printf '%s\\0' \"$w\"; done");
    let output = Command::new("sh").args(["-c", &line]).output().ok()?;
    Some(
        String::from_utf8_lossy(&output.stdout)
            .split('\0')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

#[test]
#[ignore = "needs podman (Podman 4.3, Debian 12's): installed by .ci/run"]
fn podman_agrees_with_inspect_on_podman_run_lines_and_quadlet_units() {
    let podman = Podman::start();
    let cases = cases();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("run.sh");
    let mut text = String::from("#!/bin/sh\n");
    for case in &cases {
        text.push_str(&format!("podman run {case} img true\n"));
    }
    std::fs::write(&script, text).unwrap();
    let on_lines = claims(std::slice::from_ref(&script), "docker-run");
    assert_eq!(on_lines.len(), cases.len(), "one container per line");
    // The unit of each case that the key table can write, one file each.
    let units: Vec<(usize, PathBuf)> = cases
        .iter()
        .enumerate()
        .filter_map(|(n, case)| {
            let unit = quadlet_unit(case, "img")?;
            let path = work.path().join(format!("case{n:03}.container"));
            std::fs::write(&path, unit).unwrap();
            Some((n, path))
        })
        .collect();
    let paths: Vec<PathBuf> = units.iter().map(|(_, p)| p.clone()).collect();
    let on_units = claims(&paths, "quadlet");
    assert_eq!(on_units.len(), units.len(), "one container per unit");

    let mut disagreements = Vec::new();
    let mut judged = 0;
    for (n, case) in cases.iter().enumerate() {
        let truth = podman.judge(case);
        judged += 1;
        if on_lines[n] != truth {
            disagreements.push(format!(
                "`podman run {case}`: podman gives {truth:?}, gpulint says {:?}",
                on_lines[n]
            ));
        }
        if let Some(at) = units.iter().position(|(m, _)| *m == n)
            && on_units[at] != truth
        {
            let unit = std::fs::read_to_string(&units[at].1).unwrap();
            disagreements.push(format!(
                "Quadlet unit of `{case}`:\n{unit}podman gives {truth:?}, gpulint says {:?}",
                on_units[at]
            ));
        }
    }
    eprintln!(
        "podman judged {judged} `podman run` cases and {} Quadlet units",
        units.len()
    );
    assert!(units.len() >= 100, "{} units", units.len());
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

/// A Quadlet unit's `PodmanArgs=` go before the image the generator adds
/// (GPU013): a word there that is neither an option nor an option's value
/// becomes the image, and Podman refuses the container (here, the image
/// it names is not one it has). Words that are options' values, and
/// options that take none, are no such word.
#[test]
#[ignore = "needs podman (Podman 4.3, Debian 12's): installed by .ci/run"]
fn podman_refuses_the_units_whose_podman_args_leave_a_stray_word() {
    let podman = Podman::start();
    let cases = [
        "--shm-size=1g stray",
        "stray --shm-size=1g",
        "--shm-size 1g --ipc=host-x",
        "--name gpulint-judge-a --shm-size=1g",
        "-it --shm-size=1g",
        "--read-only --shm-size 2g",
        "--env NCCL_DEBUG=INFO --shm-size=1g",
        "--shm-size=1g --label a=b extra",
    ];
    let work = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(n, case)| {
            let path = work.path().join(format!("stray{n}.container"));
            let unit = format!("[Container]\nImage=img\nPodmanArgs={case}\n");
            std::fs::write(&path, unit).unwrap();
            path
        })
        .collect();
    let on_units = claims(&paths, "quadlet");
    assert_eq!(on_units.len(), cases.len(), "one container per unit");
    let mut refused = 0;
    let mut disagreements = Vec::new();
    for (case, claim) in cases.iter().zip(&on_units) {
        let truth = podman.judge(case);
        refused += usize::from(truth == Shm::Refused);
        if *claim != truth {
            disagreements.push(format!(
                "PodmanArgs={case}: podman gives {truth:?}, gpulint says {claim:?}"
            ));
        }
    }
    eprintln!(
        "podman judged {} units with PodmanArgs=, {refused} refused",
        cases.len()
    );
    assert!(refused >= 3 && refused < cases.len(), "{refused} refused");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn the_quadlet_unit_of_a_case_writes_its_options_as_keys() {
    assert_eq!(
        quadlet_unit("--shm-size=1g --tmpfs /dev/shm:size=1g --ipc host", "img").unwrap(),
        "[Container]\nImage=img\nShmSize=1g\nTmpfs=/dev/shm:size=1g\nPodmanArgs=--ipc=host\n"
    );
    assert_eq!(quadlet_unit("--shm-size='1 g'", "img"), None);
    assert!(cases().len() >= 100);
}

/// Podman's default IPC namespace is containers.conf's `ipcns =
/// "shareable"`, which Podman 4.3's `inspect` does not show (it prints
/// `shareable` whatever the mode): the judge is a second container joining
/// it (`--ipc=container:X`), refused only for a `private` one ("non-shareable
/// IPC"). gpulint's IPC mode of the `podman run` line and of the Quadlet
/// unit must be `private` exactly when the join is refused.
#[test]
#[ignore = "needs podman (Podman 4.3, Debian 12's): installed by .ci/run"]
fn podman_ipc_modes_are_judged_by_a_joining_container() {
    let podman = Podman::start();
    let modes = [
        "",
        "--ipc=private",
        "--ipc=shareable",
        "--ipc=host",
        "--ipc=none",
    ];
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("run.sh");
    let mut lines = String::from("#!/bin/sh\n");
    let mut units = Vec::new();
    for (n, mode) in modes.iter().enumerate() {
        lines.push_str(&format!("podman run {mode} img true\n"));
        let unit = work.path().join(format!("ipc{n}.container"));
        let args = if mode.is_empty() {
            String::new()
        } else {
            format!("PodmanArgs={mode}\n")
        };
        std::fs::write(&unit, format!("[Container]\nImage=img\n{args}")).unwrap();
        units.push(unit);
    }
    std::fs::write(&script, lines).unwrap();
    let ipc_of = |targets: &[PathBuf], platform: &str| -> Vec<String> {
        let output = Command::new(env!("CARGO_BIN_EXE_gpulint"))
            .args(["inspect", "--format", "json"])
            .args(targets)
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        json["containers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["platform"] == platform)
            .map(|c| c["ipc"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let on_lines = ipc_of(std::slice::from_ref(&script), "docker-run");
    let on_units = ipc_of(&units, "quadlet");
    assert_eq!((on_lines.len(), on_units.len()), (modes.len(), modes.len()));
    let mut disagreements = Vec::new();
    for (n, mode) in modes.iter().enumerate() {
        let mut create = vec!["create"];
        create.extend(mode.split_whitespace());
        create.extend([podman.image.as_str(), "true"]);
        let donor = podman.run(&create);
        assert!(donor.status.success(), "{mode}: {}", text(&donor));
        let donor = String::from_utf8_lossy(&donor.stdout).trim().to_string();
        let join = format!("--ipc=container:{donor}");
        let joined = podman.run(&["create", &join, &podman.image, "true"]);
        let refused = !joined.status.success();
        let _ = podman.run(&["rm", "-af"]);
        for (surface, ipc) in [("podman run", &on_lines[n]), ("Quadlet", &on_units[n])] {
            if (ipc == "private") != refused {
                disagreements.push(format!(
                    "{surface} `{mode}`: a join is {}, gpulint says ipc {ipc}",
                    if refused { "refused" } else { "accepted" }
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
