//! Podman Quadlet `.container` units read as the `podman run` the Quadlet
//! generator writes into the service's `ExecStart=`: each `[Container]` key
//! becomes the arguments its row of `KEYS` says, in the order the
//! generator adds them, then `PodmanArgs=`, the image and `Exec=`. The
//! table follows podman-container.unit(5) (podman-systemd.unit(5) before
//! Podman 5.5) and podman `pkg/systemd/quadlet/quadlet.go`
//! `ConvertContainer` (commit c6580b4a). A key the table does not list
//! decides nothing gpulint reads.

mod unit_words;

use crate::syntax::shell::{Command, Word};
use crate::text::TextRange;
use unit_words::{Logical, Split};

/// How a key's values become arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The last value, one argument after the flag (`lookupAndAddString`).
    Last,
    /// Every value, one argument each (`lookupAndAddAllStrings`).
    All,
    /// Every word of every value, quotes removed, backslashes kept
    /// (`LookupAllStrv`).
    Words,
    /// Every word, split, unquoted and unescaped as systemd does
    /// (`LookupAllArgs`).
    Args,
    /// `NAME=value` words as [`Form::Args`] splits them, the last value of
    /// each name, in the order of the names (`LookupAllKeyVal`, then
    /// `addKeys` sorts them).
    KeyVals,
}

/// `[Container]` keys that decide what gpulint reads, with the `podman
/// run` flag each gives and how, in the generator's order. Each row cites
/// podman-container.unit(5):
const KEYS: &[(&str, &str, Form)] = &[
    // "AddCapability=CAP | --cap-add CAP": a space-separated list, the key
    // listed any number of times.
    ("AddCapability", "--cap-add", Form::Words),
    // "ShmSize=100m | --shm-size=100m" (Podman 4.7 and later).
    ("ShmSize", "--shm-size", Form::Last),
    // "Memory=20g | --memory 20g".
    ("Memory", "--memory", Form::Last),
    // "Ulimit=nofile=1000:10000 | --ulimit nofile=1000:10000" (4.7).
    ("Ulimit", "--ulimit", Form::All),
    // "Tmpfs=/work | --tmpfs /work".
    ("Tmpfs", "--tmpfs", Form::All),
    // "AddDevice=/dev/foo | --device /dev/foo"; a leading `-` adds it only
    // when it exists.
    ("AddDevice", "--device", Form::Words),
    // "Volume=/source:/dest | --volume /source:/dest".
    ("Volume", "--volume", Form::All),
    // "Environment=foo=bar | --env foo=bar".
    ("Environment", "--env", Form::KeyVals),
    // "Mount=type=... | --mount type=...".
    ("Mount", "--mount", Form::Args),
];

/// A `.container` unit: its `[Container]` settings, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Quadlet {
    /// Each `Key=value` of `[Container]`: the key's range, the value and
    /// its range (a value continued with `\` is not read).
    pub settings: Vec<Setting>,
    /// The end of the `[Container]` header line: where a fix adds a line.
    pub header_end: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub key: String,
    pub key_range: TextRange,
    pub value: String,
    pub value_range: TextRange,
    /// The whole line, with its line break.
    pub line: TextRange,
}

/// The drop-in directories Quadlet reads for the unit named `file_name`
/// (`a-b.container`), most specific first: `a-b.container.d`, a template's
/// `t@.container.d`, the truncations `a-.container.d`, then the type's
/// `container.d` (Podman's `GetUnitDropinPaths`). A `.conf` name found in a
/// more specific directory hides the same name further down.
pub fn dropin_dirs(file_name: &str) -> Vec<String> {
    let Some((stem, ext)) = file_name.rsplit_once('.') else {
        return Vec::new();
    };
    let dropin_ext = format!(".{ext}.d");
    let (unit, instance, template) = match stem.split_once('@') {
        Some((unit, instance)) => (unit, instance, true),
        None => (stem, "", false),
    };
    let mut dirs = vec![dropin_ext[1..].to_string()];
    let parts: Vec<&str> = unit.split('-').collect();
    for i in 1..parts.len() {
        let truncated = parts[..i].join("-") + "-";
        dirs.push(format!("{truncated}{dropin_ext}"));
        if template {
            dirs.push(format!("{truncated}@{dropin_ext}"));
        }
    }
    if !instance.is_empty() {
        dirs.push(format!("{unit}@{dropin_ext}"));
    }
    dirs.push(format!("{file_name}.d"));
    dirs.reverse();
    dirs
}

/// Which drop-in files apply, in the order Quadlet merges them: `found`
/// is each directory of [`dropin_dirs`] with its `.conf` names, most
/// specific first; the result is (directory, name) sorted by name.
pub fn dropin_order(found: &[(String, Vec<String>)]) -> Vec<(String, String)> {
    let mut chosen: std::collections::BTreeMap<&str, &str> = Default::default();
    for (dir, names) in found {
        for name in names.iter().filter(|n| n.ends_with(".conf")) {
            chosen.entry(name.as_str()).or_insert(dir.as_str());
        }
    }
    chosen
        .into_iter()
        .map(|(name, dir)| (dir.to_string(), name.to_string()))
        .collect()
}

/// A unit with its drop-ins, as one text Quadlet's merge reads alike (each
/// drop-in's keys after the unit's, in its sections), and where each
/// drop-in starts in it. A line that closes every section keeps a drop-in
/// from continuing the one before it.
pub fn with_dropins(unit: &str, dropins: &[&str]) -> (String, Vec<usize>) {
    let mut text = unit.to_string();
    let mut starts = Vec::with_capacity(dropins.len());
    for dropin in dropins {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(DROPIN_SEPARATOR);
        starts.push(text.len());
        text.push_str(dropin);
    }
    (text, starts)
}

/// Between a unit and its drop-ins: a section no key is read from.
const DROPIN_SEPARATOR: &str = "[gpulint: drop-in]\n";

/// A list key's values as the generator reads them: an empty assignment
/// (`Environment=`) drops the values before it, as in systemd
/// (Podman's `LookupAll`).
fn after_reset(values: Vec<&Setting>) -> Vec<&Setting> {
    match values.iter().rposition(|s| s.value.is_empty()) {
        Some(reset) => values[reset + 1..].to_vec(),
        None => values,
    }
}

impl Quadlet {
    /// The `[Container]` section of a unit file: systemd's syntax, `#` and
    /// `;` comment lines, sections in brackets, a value continued on the
    /// next line by a final `\`.
    pub fn parse(text: &str) -> Quadlet {
        let mut settings: Vec<Setting> = Vec::new();
        let mut header_end = None;
        let mut in_container = false;
        let mut offset = 0;
        let mut continuing = false;
        for raw in text.split_inclusive('\n') {
            let start = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            let trimmed = line.trim();
            if continuing {
                if trimmed.starts_with(['#', ';']) {
                    continue;
                }
                continuing = line.trim_end().ends_with('\\');
                // Comment lines inside a continued value are skipped, as
                // systemd skips them.
                if let Some(last) = settings.last_mut().filter(|_| in_container) {
                    last.value_range = TextRange::new(
                        last.value_range.start as usize,
                        start + line.trim_end().len(),
                    );
                    last.line = TextRange::new(last.line.start as usize, offset);
                }
                continue;
            }
            if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
                continue;
            }
            if trimmed.starts_with('[') {
                in_container = trimmed == "[Container]";
                if in_container && header_end.is_none() {
                    header_end = Some(start + line.len());
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            continuing = line.trim_end().ends_with('\\');
            if !in_container {
                continue;
            }
            let key_start = start + (key.len() - key.trim_start().len());
            let value_start = start + key.len() + 1 + (value.len() - value.trim_start().len());
            settings.push(Setting {
                key: key.trim().to_string(),
                key_range: TextRange::new(key_start, key_start + key.trim().len()),
                value: String::new(),
                value_range: TextRange::new(value_start, value_start + value.trim().len()),
                line: TextRange::new(start, offset),
            });
        }
        for setting in &mut settings {
            setting.value = Logical::read(text, setting.value_range).text;
        }
        Quadlet {
            settings,
            header_end,
        }
    }

    /// Where the last `Image=` writes the image the generator passes after
    /// the options.
    pub(crate) fn image_range(&self) -> Option<TextRange> {
        let image = self.settings.iter().rfind(|s| s.key == "Image")?;
        Some(value_word(image).range)
    }

    /// The `podman run` the generator writes, as words in the file: flags
    /// on their key, values on their text; `None` without an `Image=`.
    pub fn command(&self, text: &str) -> Option<Command> {
        let image = self.settings.iter().rfind(|s| s.key == "Image")?;
        let mut words = vec![
            word("podman", image.key_range, false),
            word("run", image.key_range, false),
        ];
        for (key, flag, form) in KEYS {
            let values: Vec<&Setting> = self.settings.iter().filter(|s| s.key == *key).collect();
            let values = match form {
                Form::Last => values.last().copied().into_iter().collect(),
                _ => after_reset(values),
            };
            let flagged = |part: Word, words: &mut Vec<Word>| {
                words.push(Word {
                    text: flag.to_string(),
                    ..part.clone()
                });
                words.push(part);
            };
            if *form == Form::KeyVals {
                for part in key_vals(text, &values) {
                    flagged(part, &mut words);
                }
                continue;
            }
            for setting in values {
                if setting.value.is_empty() {
                    continue;
                }
                match form {
                    Form::Last | Form::All => {
                        words.push(word(flag, setting.key_range, false));
                        words.push(value_word(setting));
                    }
                    Form::Words | Form::Args => {
                        let how = if *form == Form::Words {
                            Split::Strv
                        } else {
                            Split::Args
                        };
                        for mut part in split(text, setting, how) {
                            if *key == "AddDevice" && part.text.starts_with('-') {
                                part.text.remove(0);
                            }
                            // The generator lowers capabilities' names.
                            if *key == "AddCapability" {
                                part.text.make_ascii_lowercase();
                            }
                            flagged(part, &mut words);
                        }
                    }
                    Form::KeyVals => unreachable!("read above"),
                }
            }
        }
        let podman_args = self
            .settings
            .iter()
            .filter(|s| s.key == "PodmanArgs")
            .collect();
        for setting in after_reset(podman_args) {
            words.extend(split(text, setting, Split::Args));
        }
        words.push(value_word(image));
        if let Some(exec) = self.settings.iter().rfind(|s| s.key == "Exec") {
            words.extend(split(text, exec, Split::Args));
        }
        Some(Command { words })
    }

    /// The setting whose value holds `range`.
    pub fn setting_at(&self, range: TextRange) -> Option<&Setting> {
        self.settings
            .iter()
            .find(|s| s.value_range.start <= range.start && range.end <= s.value_range.end)
    }
}

fn word(text: &str, range: TextRange, dynamic: bool) -> Word {
    Word {
        text: text.to_string(),
        range,
        dynamic,
    }
}

/// `%h`, `%n`, ... are systemd specifiers, only known when the unit runs.
fn value_word(setting: &Setting) -> Word {
    let dynamic = setting.value.contains('%') || setting.value.contains('\\');
    word(&setting.value, setting.value_range, dynamic)
}

/// A value's words as the generator splits them; none for a value it
/// refuses (an escape systemd does not know), which it drops with a
/// warning.
fn split(text: &str, setting: &Setting, how: Split) -> Vec<Word> {
    Logical::read(text, setting.value_range)
        .words(how)
        .unwrap_or_default()
}

/// `Environment=` values: the last word of each name, in the order of the
/// names, as `addKeys` writes them.
fn key_vals(text: &str, values: &[&Setting]) -> Vec<Word> {
    let mut by_name: std::collections::BTreeMap<String, Word> = Default::default();
    for setting in values {
        for part in split(text, setting, Split::Args) {
            let name = part
                .text
                .split_once('=')
                .map_or(part.text.as_str(), |(n, _)| n);
            by_name.insert(name.to_string(), part);
        }
    }
    by_name.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::{Gpus, ShmKind};
    use crate::docker_run::DockerRun;

    fn run(text: &str) -> DockerRun {
        DockerRun::find(&Quadlet::parse(text).command(text).unwrap()).unwrap()
    }

    #[test]
    fn keys_become_podman_run_options() {
        let text = "[Unit]\nDescription=vLLM\n\n[Container]\nImage=docker.io/vllm/vllm-openai:latest\nAddDevice=nvidia.com/gpu=all\nEnvironment=NCCL_DEBUG=INFO \"HF_HOME=/data hub\"\nShmSize=2g\nShmSize=16g\n# PodmanArgs=--ipc=host\nExec=--model m --tensor-parallel-size 2\n\n[Service]\nRestart=always\n";
        let run = run(text);
        assert_eq!(run.program, "podman");
        assert_eq!(run.gpus(), Gpus::All);
        let shm = run.shm();
        assert_eq!((shm.kind, shm.bytes), (ShmKind::Sized, Some(16 << 30)));
        let env: Vec<_> = run.env().map(|(n, v, _)| (n, v)).collect();
        assert_eq!(
            env,
            // In the order of their names, as `addKeys` writes them.
            [("HF_HOME", Some("/data hub")), ("NCCL_DEBUG", Some("INFO"))]
        );
        assert_eq!(run.image.unwrap().text, "docker.io/vllm/vllm-openai:latest");
        assert_eq!(run.command, "--model m --tensor-parallel-size 2");
    }

    #[test]
    fn dropins_are_found_and_merged_as_quadlet_does() {
        assert_eq!(
            dropin_dirs("a-b-c.container"),
            [
                "a-b-c.container.d",
                "a-b-.container.d",
                "a-.container.d",
                "container.d"
            ]
        );
        assert_eq!(
            dropin_dirs("t-x@i.container"),
            [
                "t-x@i.container.d",
                "t-x@.container.d",
                "t-@.container.d",
                "t-.container.d",
                "container.d"
            ]
        );
        let order = dropin_order(&[
            (
                "a.container.d".into(),
                vec!["20-b.conf".into(), "10-a.conf".into(), "x.txt".into()],
            ),
            (
                "container.d".into(),
                vec!["10-a.conf".into(), "05-all.conf".into()],
            ),
        ]);
        let names: Vec<String> = order.iter().map(|(d, n)| format!("{d}/{n}")).collect();
        assert_eq!(
            names,
            [
                "container.d/05-all.conf",
                "a.container.d/10-a.conf",
                "a.container.d/20-b.conf"
            ]
        );
        // Upstream's merged-override.container and its two drop-ins.
        let (text, starts) = with_dropins(
            "[Container]\nImage=localhost/imagename\nEnvironment=MAIN=mainvalue",
            &[
                "[Container]\nEnvironment=FIRST=value\n",
                "[Container]\n# Empty previous\nEnvironment=\nEnvironment=SECOND=othervalue\n",
            ],
        );
        assert_eq!(&text[starts[1]..starts[1] + 11], "[Container]");
        let merged = run(&text);
        let env: Vec<_> = merged.env().map(|(n, _, _)| n).collect();
        assert_eq!(env, ["SECOND"]);
        // A drop-in with keys before any section adds nothing to the container.
        let (text, _) = with_dropins("[Container]\nImage=x\n", &["ShmSize=8g\n"]);
        assert_eq!(run(&text).shm().kind, ShmKind::Default);
    }

    /// An empty assignment of a list key drops what came before it, as
    /// upstream's `merged-override.container` asserts (there across
    /// drop-ins); a single key keeps its last value.
    #[test]
    fn an_empty_assignment_resets_a_list_key() {
        let run = run(
            "[Container]\nImage=x\nEnvironment=FIRST=value\nAddCapability=IPC_LOCK\nEnvironment=\nEnvironment=SECOND=othervalue\nAddCapability=\nPodmanArgs=--ipc=host\nPodmanArgs=\nShmSize=1g\n",
        );
        let env: Vec<_> = run.env().map(|(n, _, _)| n).collect();
        assert_eq!(env, ["SECOND"]);
        assert_eq!(run.options_named("--cap-add").count(), 0);
        assert_eq!(run.options_named("--ipc").count(), 0);
        assert_eq!(run.shm().kind, ShmKind::Sized);
    }

    /// podman-container.unit(5): "AddCapability=CAP | --cap-add CAP".
    #[test]
    fn add_capability_is_cap_add() {
        let run = run(
            "[Container]\nImage=x\nAddCapability=IPC_LOCK SYS_NICE\nAddCapability=SYS_PTRACE\n",
        );
        let caps: Vec<_> = run
            .options_named("--cap-add")
            .filter_map(|(_, o)| o.value.as_deref())
            .collect();
        // The generator lowers them (`strings.ToLower(caps)`).
        assert_eq!(caps, ["ipc_lock", "sys_nice", "sys_ptrace"]);
    }

    #[test]
    fn podman_args_come_after_the_keys_and_win() {
        let sized = run("[Container]\nImage=x\nPodmanArgs=--ipc=private --gpus all\nShmSize=1g\n");
        assert_eq!(sized.shm().kind, ShmKind::Sized);
        assert_eq!(sized.gpus(), Gpus::All);
        let host = run("[Container]\nImage=x\nPodmanArgs=--ipc=host\n");
        assert_eq!(host.shm().kind, ShmKind::Host);
        // Podman refuses a size with the host's IPC namespace.
        let both = run("[Container]\nImage=x\nPodmanArgs=--ipc=host\nShmSize=1g\n");
        assert_eq!(both.shm().kind, ShmKind::Refused);
    }

    #[test]
    fn other_sections_are_not_read_and_continued_values_are_joined() {
        let text = "[Service]\nShmSize=1g\n[Container]\nImage=x\nPodmanArgs=--pids-limit=1 \\\n  # a comment\n  --ipc=host\nExec=/usr/sbin/llama-server \\\n    --port 8082\n";
        let quadlet = Quadlet::parse(text);
        let keys: Vec<_> = quadlet.settings.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["Image", "PodmanArgs", "Exec"]);
        assert_eq!(quadlet.settings[1].value, "--pids-limit=1 --ipc=host");
        let run = DockerRun::find(&quadlet.command(text).unwrap()).unwrap();
        assert_eq!(run.shm().kind, ShmKind::Host);
        assert_eq!(run.command, "/usr/sbin/llama-server --port 8082");
        assert!(
            Quadlet::parse("[Container]\nExec=x\n")
                .command("")
                .is_none()
        );
    }
}
