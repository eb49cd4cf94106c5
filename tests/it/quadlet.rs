//! Podman Quadlet `.container` units: read as the `podman run` the Quadlet
//! generator writes, checked by the `docker run` rules, fixed with lines.

use crate::common;

use common::{gpulint, stdout, write};
use gpulint::engine::check_text;
use gpulint::engine::config::Config;
use gpulint::rules::RuleCode;
use serde_json::Value;
use std::path::PathBuf;

fn codes(text: &str) -> Vec<RuleCode> {
    let report = check_text(
        PathBuf::from("vllm.container"),
        text.to_string(),
        &Config::default(),
    );
    assert!(report.error.is_none(), "{:?}", report.error);
    report.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn gpu_units_without_shm_fire_and_healthy_ones_stay_quiet() {
    let unit =
        |extra: &str| format!("[Container]\nImage=docker.io/vllm/vllm-openai:latest\n{extra}");
    for gpu in [
        "AddDevice=nvidia.com/gpu=all\n",
        "AddDevice=nvidia.com/gpu=0 nvidia.com/gpu=1\n",
        "PodmanArgs=--gpus all\n",
        "AddDevice=/dev/nvidia0\n",
    ] {
        assert_eq!(codes(&unit(gpu)), [RuleCode::SHM001], "{gpu}");
    }
    for healthy in [
        "AddDevice=nvidia.com/gpu=all\nShmSize=16g\n",
        "AddDevice=nvidia.com/gpu=all\nPodmanArgs=--ipc=host\n",
        "AddDevice=nvidia.com/gpu=all\nTmpfs=/dev/shm:size=8g\n",
        "AddDevice=nvidia.com/gpu=all\nMount=type=tmpfs,destination=/dev/shm,tmpfs-size=8g\n",
        // A systemd specifier is only known when the unit runs.
        "AddDevice=nvidia.com/gpu=all\nShmSize=%i\n",
        // No GPU.
        "AddDevice=/dev/dri\n",
        // Settings of another section are not the container's.
        "[Service]\nAddDevice=nvidia.com/gpu=all\n",
    ] {
        assert_eq!(codes(&unit(healthy)), [], "{healthy}");
    }
    // No `Image=`: no container (the generator refuses the unit).
    assert_eq!(codes("[Container]\nAddDevice=nvidia.com/gpu=all\n"), []);
}

#[test]
fn hash_comments_suppress_findings() {
    let text = "[Container]\n# gpulint: ignore[SHM001] single-process server\nImage=x\nAddDevice=nvidia.com/gpu=all\n";
    assert_eq!(codes(text), []);
}

#[test]
fn inspect_prints_the_units_container() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "vllm.container",
        "[Container]\nImage=docker.io/vllm/vllm-openai:latest\nAddDevice=nvidia.com/gpu=0\nAddDevice=nvidia.com/gpu=1\nUlimit=memlock=-1\nShmSize=2g\nEnvironment=NCCL_DEBUG=INFO\n",
    );
    let output = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let unit = &doc["containers"][0];
    assert_eq!(unit["platform"], "quadlet", "{doc:#}");
    assert_eq!(unit["gpus"], 2);
    assert_eq!(unit["shm"]["bytes"], 2_u64 << 30);
    assert_eq!(unit["ulimits"]["memlock"]["soft"], -1);
    assert_eq!(unit["env"]["NCCL_DEBUG"], "INFO");
}

/// The flags gpulint's Quadlet reader writes for the keys it models, by
/// their long names (the generator writes `-v` for `Volume=`).
const MODELED_FLAGS: &[&str] = &[
    "--cap-add",
    "--shm-size",
    "--memory",
    "--ulimit",
    "--tmpfs",
    "--device",
    "--volume",
    "--env",
    "--mount",
];

fn long_flag(word: &str) -> &str {
    match word {
        "-v" => "--volume",
        "-e" => "--env",
        other => other,
    }
}

/// An assertion line's words as Podman's test reads them
/// (`github.com/mattn/go-shellwords`): quotes group, a backslash escapes
/// the next character except inside single quotes.
fn shellwords(line: &str) -> Vec<String> {
    let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in line.chars() {
        if escaped {
            word.push(c);
            escaped = false;
            in_word = true;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => {
                single = !single;
                in_word = true;
            }
            '"' if !single => {
                double = !double;
                in_word = true;
            }
            c if c.is_whitespace() && !single && !double => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// A `--mount` value as the test compares it: its `key=value` fields as
/// a map, split on `,` as Go's CSV reader splits them (quotes group).
/// Podman's aliases of a key are one key (`src` is `source`, `dst` and
/// `target` are `destination`).
fn mount_fields(value: &str) -> std::collections::BTreeMap<String, String> {
    let mut fields = std::collections::BTreeMap::new();
    let (mut field, mut quoted) = (String::new(), false);
    let mut add = |field: &str| {
        let (key, value) = field.split_once('=').unwrap_or((field, ""));
        let key = match key {
            "src" => "source",
            "dst" | "target" => "destination",
            key => key,
        };
        fields.insert(key.to_string(), value.to_string());
    };
    for c in value.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => add(&std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    add(&field);
    fields
}

fn find_sublist(haystack: &[String], needle: &[String]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// The unit's text with the drop-ins Quadlet merges into it, found as
/// Quadlet finds them beside it.
fn with_its_dropins(unit: &std::path::Path, text: &str) -> String {
    use gpulint::model::quadlet::{dropin_dirs, dropin_order, with_dropins};
    let dir = unit.parent().unwrap();
    let name = unit.file_name().unwrap().to_string_lossy();
    let found: Vec<(String, Vec<String>)> = dropin_dirs(&name)
        .into_iter()
        .filter_map(|d| {
            let names = std::fs::read_dir(dir.join(&d)).ok()?;
            let names = names
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect();
            Some((d, names))
        })
        .collect();
    let texts: Vec<String> = dropin_order(&found)
        .iter()
        .map(|(d, n)| std::fs::read_to_string(dir.join(d).join(n)).unwrap())
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    with_dropins(text, &texts).0
}

/// containers/podman's own Quadlet tests (tests/judges/quadlet, copied
/// from `test/e2e/quadlet/`), whose `##` lines assert the arguments its
/// generator writes for a unit: every assertion about a flag gpulint
/// models must hold for the `podman run` gpulint reads the unit as, and
/// every negative one must not be contradicted.
#[test]
fn podmans_quadlet_tests_agree_with_gpulints_generator() {
    use gpulint::model::quadlet::Quadlet;
    let dir = common::root().join("tests/judges/quadlet");
    let mut units: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "container"))
        .collect();
    units.sort();
    assert!(units.len() >= 24, "{units:?}");
    let (mut agreed, mut disagreed) = (Vec::new(), Vec::new());
    let mut not_judged: std::collections::BTreeMap<&str, usize> = Default::default();
    for unit in &units {
        let name = unit.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(unit).unwrap();
        // The unit without the assertions, which quote what it becomes.
        let body = text
            .lines()
            .filter(|l| !l.starts_with("##"))
            .collect::<Vec<_>>()
            .join("\n");
        // Read with its drop-ins, as the generator reads it.
        let merged = with_its_dropins(unit, &text);
        let quadlet = Quadlet::parse(&merged);
        let args: Option<Vec<String>> = quadlet.command(&merged).map(|command| {
            command.words[2..]
                .iter()
                .map(|w| long_flag(&w.text).to_string())
                .collect()
        });
        let podman_args: Vec<&str> = quadlet
            .settings
            .iter()
            .filter(|s| s.key == "PodmanArgs")
            .map(|s| s.value.as_str())
            .collect();
        for line in text.lines().filter(|l| l.starts_with("##")) {
            let words = shellwords(&line[2..]);
            let Some((kind, asserted)) = words.split_first() else {
                continue;
            };
            let asserted: Vec<String> = asserted.iter().map(|w| long_flag(w).to_string()).collect();
            let flag = asserted.first().map(String::as_str).unwrap_or("");
            let modeled = MODELED_FLAGS.contains(&flag)
                || podman_args
                    .iter()
                    .any(|written| written.contains(flag.trim_start_matches('-')));
            let verdict: Result<bool, &str> = match (kind.as_str(), &args) {
                ("assert-failed", None) => Ok(true),
                ("assert-failed", Some(_)) => Err("refused for what gpulint does not model"),
                ("assert-stderr-contains", _) => Err("the generator's message"),
                (k, _) if k.starts_with("assert-key") || k.starts_with("assert-has-key") => {
                    Err("a systemd unit key, not an argument")
                }
                (k, _) if k.ends_with("-regex") => Err("a path the test machine decides"),
                // go-shellwords reads `\\n` in an assertion as a backslash
                // and an `n`, where systemd's reader of the generated
                // `ExecStart=` decodes the escape: the two readings cannot
                // be compared without running the generator.
                (_, _) if asserted.iter().any(|a| a.contains(['\\', '\n', '\t'])) => {
                    Err("a C escape read two ways")
                }
                (_, None) => Ok(false),
                ("assert-podman-final-args", Some(args)) => Ok(args.ends_with(&asserted)),
                (_, Some(_)) if !modeled => Err("a flag gpulint does not model"),
                (_, Some(_))
                    if text.lines().any(|l| {
                        l.starts_with("AddDevice=-")
                            && asserted.iter().any(|a| l.contains(a.as_str()))
                    }) =>
                {
                    Err("an optional device the host's /dev decides")
                }
                // `Volume=basic.volume:/data` names the volume its unit
                // makes (`systemd-basic`, or its `VolumeName=`).
                (_, Some(_))
                    if flag == "--volume"
                        && text.lines().any(|l| {
                            l.starts_with("Volume=")
                                && l.split(':').next().is_some_and(|s| s.ends_with(".volume"))
                        })
                        && asserted.get(1).is_some_and(|v| !body.contains(v.as_str())) =>
                {
                    Err("a source Quadlet resolves to a unit's name")
                }
                ("assert-podman-args", Some(args)) => Ok(find_sublist(args, &asserted)),
                ("!assert-podman-args", Some(args)) => Ok(!find_sublist(args, &asserted)),
                ("assert-podman-args-key-val", Some(args)) => {
                    let [flag, _, expected] = asserted.as_slice() else {
                        panic!("{name}: {line}")
                    };
                    let mut expected = mount_fields(expected);
                    // A source Quadlet resolves (`basic.volume` is the
                    // volume its unit makes, `systemd-basic`) is the
                    // generator's name for it, not the unit's words.
                    let resolved = text.lines().any(|l| {
                        l.starts_with("Mount=")
                            && [".volume", ".image", ".artifact"]
                                .iter()
                                .any(|s| l.contains(s))
                    });
                    let found = args.windows(2).any(|pair| {
                        let mut actual = mount_fields(&pair[1]);
                        if resolved && actual.get("source").is_some_and(|s| s.contains('.')) {
                            actual.remove("source");
                            expected.remove("source");
                        }
                        pair[0] == *flag && actual == expected
                    });
                    if resolved && !found {
                        Err("a source Quadlet resolves to a unit's name")
                    } else {
                        Ok(found)
                    }
                }
                _ => Err("an assertion kind the judge does not read"),
            };
            match verdict {
                Ok(true) => agreed.push(format!("{name}: {line}")),
                Ok(false) => disagreed.push(format!("{name}: {line}\n    gpulint: {args:?}")),
                Err(why) => *not_judged.entry(why).or_default() += 1,
            }
        }
    }
    eprintln!(
        "Quadlet upstream tests: {} units, {} assertions agree, {} disagree; not judged: {not_judged:?}",
        units.len(),
        agreed.len(),
        disagreed.len()
    );
    assert!(disagreed.is_empty(), "{}", disagreed.join("\n"));
    assert!(agreed.len() >= 40, "{agreed:#?}");
}

/// Quadlet merges a unit's drop-ins before it writes the `podman run`:
/// a `container.d/` drop-in that gives every unit 16 GiB keeps this GPU
/// unit quiet, and a more specific one that lowers it is reported in the
/// unit, with the drop-in's line beside it and no fix (the drop-in may
/// apply to other units).
#[test]
fn drop_ins_are_merged_as_quadlet_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let unit =
        "[Container]\nImage=docker.io/vllm/vllm-openai:latest\nAddDevice=nvidia.com/gpu=all\n";
    write(dir.path(), "vllm.container", unit);
    write(
        dir.path(),
        "container.d/10-shm.conf",
        "[Container]\nShmSize=16g\n",
    );
    let quiet = gpulint(dir.path(), &["check", "--output-format", "concise"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", stdout(&quiet));
    write(
        dir.path(),
        "vllm.container.d/20-small.conf",
        "[Container]\nShmSize=64m\n",
    );
    let out = gpulint(dir.path(), &["check"]);
    let text = stdout(&out);
    assert!(text.contains("warning[SHM002]"), "{text}");
    assert!(text.contains("--> ./vllm.container:1:1"), "{text}");
    assert!(
        text.contains("set in the drop-in ./vllm.container.d/20-small.conf"),
        "{text}"
    );
    let fixed = gpulint(dir.path(), &["check", "--fix"]);
    assert_eq!(fixed.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("vllm.container")).unwrap(),
        unit
    );
    let inspected = gpulint(dir.path(), &["inspect", "--format", "json", "."]);
    let doc: Value = serde_json::from_str(&stdout(&inspected)).unwrap();
    assert_eq!(doc["containers"][0]["shm"]["bytes"], 64_u64 << 20);
}
