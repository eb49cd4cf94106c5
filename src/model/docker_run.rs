//! `docker run` / `docker create` / `nvidia-docker run` / `podman run` command
//! lines read as the container they start: its GPUs, its `/dev/shm`, its
//! environment and what it launches, in the terms the compose rules use.

use crate::model::container::{Gpus, Shm, ShmKind, ShmSetting};
use crate::model::size::{parse_compose_size, parse_tmpfs_size_option, tmpfs_size_option};
use crate::model::workload::detect_launcher;
use crate::syntax::shell::{Command, Word};
use crate::text::TextRange;

/// Words that may come before `docker` in the same simple command.
const PREFIXES: &[&str] = &[
    "sudo", "exec", "time", "nohup", "command", "env", "then", "do", "else", "!", "srun",
    "timeout", "xargs", "stdbuf", "nice",
];

/// Boolean flags of `docker run` (and podman's common ones): they take no value.
const BOOLEAN_LONG: &[&str] = &[
    "--detach",
    "--interactive",
    "--tty",
    "--rm",
    "--privileged",
    "--init",
    "--publish-all",
    "--read-only",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--quiet",
    "--disable-content-trust",
    "--help",
    "--sig-proxy",
    "--replace",
    "--http-proxy",
    "--tls-verify",
    "--use-all-gpus",
];
const BOOLEAN_SHORT: &[u8] = b"dit PqR";
/// Short flags that take a value, and the long flag each stands for.
const VALUE_SHORT: &[(u8, &str)] = &[
    (b'a', "--attach"),
    (b'c', "--cpu-shares"),
    (b'e', "--env"),
    (b'h', "--hostname"),
    (b'l', "--label"),
    (b'm', "--memory"),
    (b'p', "--publish"),
    (b'u', "--user"),
    (b'v', "--volume"),
    (b'w', "--workdir"),
];

/// One option as written: `--shm-size=8g`, `--shm-size 8g`, `-e A=1`, `-eA=1`.
#[derive(Debug, Clone)]
pub struct RunOption {
    /// The long name (`--env` for `-e`).
    pub name: String,
    pub value: Option<String>,
    /// The value's range; the whole option's for a value attached to a short flag.
    pub value_range: Option<TextRange>,
    /// The value holds an expansion: it is only known at run time.
    pub dynamic: bool,
    /// From the flag to the end of its value.
    pub range: TextRange,
}

#[derive(Debug, Clone)]
pub struct DockerRun {
    /// `docker`, `podman` or `nvidia-docker`, as written (a path's last part).
    pub program: String,
    /// The `run` / `create` word: where a new option goes.
    pub subcommand: Word,
    pub options: Vec<RunOption>,
    /// The image, when it is a literal.
    pub image: Option<Word>,
    /// The command after the image, words joined by spaces.
    pub command: String,
    /// The whole invocation, from the program to the last word.
    pub range: TextRange,
    /// `docker run`, `podman container create`: where findings about the
    /// whole container point.
    pub program_range: TextRange,
    /// An option the model cannot read past (an unknown flag form or a
    /// dynamic word where an option was expected).
    pub uncertain: bool,
}

/// Whether an expansion where the image would be may hold options instead:
/// an array (`"${ARGS[@]}"`) or a variable named as an option list
/// (`$EXTRA_FLAGS`, `${DOCKER_OPTS}`, `$RUN_ARGS`), which by convention is
/// put in front of the image. A plain `$IMAGE` is taken as the image.
fn holds_options(word: &str) -> bool {
    let Some(name) = word.strip_prefix('$') else {
        return false;
    };
    let name = name.trim_start_matches('{');
    let name = &name[..name
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(name.len())];
    let upper = name.to_ascii_uppercase();
    word.contains("[@]")
        || word.contains("[*]")
        || ["ARGS", "FLAGS", "OPTS", "OPTIONS"]
            .iter()
            .any(|suffix| upper.ends_with(suffix))
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

impl DockerRun {
    /// The `docker run` in a simple command, if it is one.
    pub fn find(command: &Command) -> Option<DockerRun> {
        let words = &command.words;
        // Skip assignments and wrappers with their options (`sudo -E`,
        // `srun -N 2`, `timeout 10m`, `env A=1`), nothing else: `echo docker
        // run` is not a run.
        let mut wrapped = false;
        let mut program = None;
        for (i, word) in words.iter().enumerate() {
            let name = base(&word.text);
            if !word.dynamic && matches!(name, "docker" | "podman" | "nvidia-docker") {
                program = Some(i);
                break;
            }
            let assignment = word.assigned_name().is_some();
            let wrapper_argument = wrapped
                && (word.text.starts_with('-')
                    || words[i - 1].text.starts_with('-')
                    || word.text.starts_with(|c: char| c.is_ascii_digit()));
            if PREFIXES.contains(&name) {
                wrapped = true;
            } else if !(assignment || wrapper_argument) {
                return None;
            }
        }
        let program = program?;
        // Global options of the CLI (`docker --context x run`) come first.
        let mut j = program + 1;
        while let Some(word) = words.get(j) {
            if !word.text.starts_with('-') {
                break;
            }
            let takes_value = !word.text.contains('=')
                && matches!(
                    word.text.as_str(),
                    "-H" | "--host"
                        | "--context"
                        | "-c"
                        | "--config"
                        | "-l"
                        | "--log-level"
                        | "--url"
                        | "--connection"
                );
            j += if takes_value { 2 } else { 1 };
        }
        let mut sub = j;
        if words.get(sub).is_some_and(|w| w.text == "container") {
            sub += 1;
        }
        let subcommand = words
            .get(sub)
            .filter(|w| matches!(w.text.as_str(), "run" | "create"))?;
        let mut run = DockerRun {
            program: base(&words[program].text).to_string(),
            subcommand: subcommand.clone(),
            options: Vec::new(),
            image: None,
            command: String::new(),
            range: words[program].range.cover(words.last()?.range),
            program_range: words[program].range.cover(subcommand.range),
            uncertain: false,
        };
        let mut k = sub + 1;
        while let Some(word) = words.get(k) {
            let text = word.text.as_str();
            if text == "--" {
                k += 1;
                break;
            }
            if !text.starts_with('-') || text == "-" {
                break;
            }
            if word.dynamic && !text.starts_with("--") {
                run.uncertain = true;
            }
            k += run.read_option(words, k);
        }
        if let Some(image) = words.get(k) {
            if image.dynamic {
                run.uncertain |= holds_options(&image.text);
            }
            run.image = (!image.dynamic).then(|| image.clone());
            run.command = words[k + 1..]
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
        }
        Some(run)
    }

    /// Reads the option at `words[k]`; returns how many words it took.
    fn read_option(&mut self, words: &[Word], k: usize) -> usize {
        let word = &words[k];
        let text = word.text.as_str();
        let option = |name: &str, value: Option<&Word>, inline: Option<(String, TextRange)>| {
            let (value, value_range, dynamic, end) = match (inline, value) {
                (Some((v, r)), _) => (Some(v), Some(r), word.dynamic, word.range),
                (None, Some(v)) => (Some(v.text.clone()), Some(v.range), v.dynamic, v.range),
                (None, None) => (None, None, false, word.range),
            };
            RunOption {
                name: name.to_string(),
                value,
                value_range,
                dynamic,
                range: word.range.cover(end),
            }
        };
        if let Some(long) = text.strip_prefix("--") {
            if let Some((name, value)) = long.split_once('=') {
                // The value's range, when the word is written without quotes
                // before it; otherwise the word's.
                let range = if word.range.len() == text.len() {
                    TextRange::new(
                        word.range.start as usize + name.len() + 3,
                        word.range.end as usize,
                    )
                } else {
                    word.range
                };
                self.options.push(option(
                    &format!("--{name}"),
                    None,
                    Some((value.to_string(), range)),
                ));
                return 1;
            }
            if BOOLEAN_LONG.contains(&text) {
                self.options.push(option(text, None, None));
                return 1;
            }
            self.options.push(option(text, words.get(k + 1), None));
            return 2;
        }
        // Short flags, possibly grouped (`-it`, `-itd`) and with a value
        // attached to the last one (`-eA=1`, `-v/a:/b`).
        let bytes = &text.as_bytes()[1..];
        for (n, &flag) in bytes.iter().enumerate() {
            if let Some((_, long)) = VALUE_SHORT.iter().find(|(s, _)| *s == flag) {
                let rest = &text[n + 2..];
                if rest.is_empty() {
                    self.options.push(option(long, words.get(k + 1), None));
                    return 2;
                }
                self.options
                    .push(option(long, None, Some((rest.to_string(), word.range))));
                return 1;
            }
            if !BOOLEAN_SHORT.contains(&flag) {
                self.uncertain = true;
            }
        }
        self.options.push(option(text, None, None));
        1
    }

    /// Options named `name` (long form).
    pub fn options_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (usize, &'a RunOption)> + 'a {
        self.options
            .iter()
            .enumerate()
            .filter(move |(_, o)| o.name == name)
    }

    /// The last option named `name`: Docker takes the last of repeated ones.
    pub fn option(&self, name: &str) -> Option<(usize, &RunOption)> {
        self.options
            .iter()
            .enumerate()
            .rfind(|(_, o)| o.name == name)
    }

    /// `docker run`, `podman create`, …: the invocation, for messages and ids.
    pub fn invocation(&self) -> String {
        format!("{} {}", self.program, self.subcommand.text)
    }

    /// The `--env` settings: `NAME=value` (value `None` when it comes from
    /// the caller's environment or is only known at run time).
    pub fn env(&self) -> impl Iterator<Item = (&str, Option<&str>, &RunOption)> {
        self.options_named("--env").filter_map(|(_, o)| {
            let value = o.value.as_deref()?;
            Some(match value.split_once('=') {
                Some((name, v)) => (name, (!o.dynamic).then_some(v), o),
                None => (value, None, o),
            })
        })
    }

    /// How the container gets GPUs, if it does, for messages.
    pub fn gpu_request(&self) -> Option<String> {
        if self.program == "nvidia-docker" {
            return Some("runs under `nvidia-docker`".into());
        }
        if let Some((_, gpus)) = self.option("--gpus") {
            return Some(format!(
                "asks for GPUs with `--gpus {}`",
                gpus.value.as_deref().unwrap_or("")
            ));
        }
        if let Some((_, runtime)) = self.option("--runtime")
            && runtime.value.as_deref() == Some("nvidia")
        {
            return Some("runs under `--runtime=nvidia`".into());
        }
        self.options_named("--device").find_map(|(_, d)| {
            let v = d.value.as_deref()?;
            (v.starts_with("nvidia.com/gpu") || v.starts_with("/dev/nvidia"))
                .then(|| format!("is given `--device {v}`"))
        })
    }

    /// The GPUs it asks for.
    pub fn gpus(&self) -> Gpus {
        let all = self
            .option("--gpus")
            .and_then(|(_, g)| g.value.as_deref())
            .is_some_and(|v| v.trim_matches(['"', '\'']) == "all");
        match self.gpu_count() {
            _ if all => Gpus::All,
            Some(n) => Gpus::Count(n),
            None => Gpus::Unknown,
        }
    }

    /// How many GPUs it asks for: `None` when all or unknown.
    fn gpu_count(&self) -> Option<u64> {
        let (_, gpus) = self.option("--gpus")?;
        let value = gpus.value.as_deref()?.trim_matches(['"', '\'']);
        if let Some(devices) = value.strip_prefix("device=") {
            return Some(devices.split(',').count() as u64);
        }
        value.strip_prefix("count=").unwrap_or(value).parse().ok()
    }

    /// The launcher it starts (`torchrun`, `deepspeed`, …), if any.
    pub fn launcher(&self) -> Option<&'static str> {
        detect_launcher(&self.command).0
    }

    /// All GPUs (`--gpus all`) or at least two.
    pub fn multi_gpu(&self) -> bool {
        match self.gpus() {
            Gpus::All => true,
            Gpus::Count(n) => n >= 2,
            Gpus::Unknown => false,
        }
    }

    /// Uses InfiniBand/RDMA: NCCL or UCX pointed at RDMA devices, or an
    /// `/dev/infiniband` device passed in.
    pub fn uses_rdma(&self) -> bool {
        self.env()
            .any(|(name, value, _)| crate::model::workload::selects_rdma(name, value))
            || self.options_named("--device").any(|(_, d)| {
                d.value
                    .as_deref()
                    .is_some_and(|v| v.starts_with("/dev/infiniband"))
            })
    }

    /// The `-v`, `--tmpfs` or `--mount` option that mounts something at
    /// `/dev/shm`, if one does.
    pub fn dev_shm_mount(&self) -> Option<&RunOption> {
        let at_dev_shm = |target: &str| target.trim_end_matches('/') == "/dev/shm";
        self.options.iter().find(|o| {
            let Some(value) = o.value.as_deref() else {
                return false;
            };
            match o.name.as_str() {
                // `-v /dev/shm` alone is an anonymous volume mounted there.
                "--volume" => match value.split_once(':') {
                    Some((_, rest)) => rest.split(':').next().is_some_and(at_dev_shm),
                    None => at_dev_shm(value),
                },
                "--tmpfs" => at_dev_shm(value.split(':').next().unwrap_or("")),
                "--mount" => value.split(',').any(|part| {
                    part.split_once('=').is_some_and(|(k, v)| {
                        matches!(k, "target" | "destination" | "dst") && at_dev_shm(v)
                    })
                }),
                _ => false,
            }
        })
    }

    /// The container's `/dev/shm`, and the option that decided it.
    pub fn shm(&self) -> Shm {
        let ipc = self.option("--ipc").map(|(_, o)| o);
        if let Some(o) = ipc {
            let decided = |shm: Shm, setting| shm.decided_by(setting, Some(o.range));
            match o.value.as_deref() {
                Some("host") => {
                    return decided(Shm::new(ShmKind::Host, None, "--ipc host"), ShmSetting::Ipc);
                }
                Some("none") => {
                    return decided(
                        Shm::new(ShmKind::Missing, None, "--ipc none"),
                        ShmSetting::Ipc,
                    );
                }
                Some(other) if other.starts_with("container:") => {
                    return decided(
                        Shm::new(
                            ShmKind::Unknown,
                            None,
                            format!("the IPC namespace of {other}"),
                        ),
                        ShmSetting::Donor,
                    );
                }
                _ => {}
            }
        }
        if let Some(mount) = self.dev_shm_mount() {
            return mount_shm(mount).decided_by(ShmSetting::Mount, Some(mount.range));
        }
        // Decided by an option (or, at `None`, words) only known at run time.
        let run_time = |at: Option<&RunOption>| {
            Shm::new(ShmKind::Unknown, None, "options only known at run time")
                .decided_by(ShmSetting::Unresolved, at.map(|o| o.range))
        };
        if let Some(o) = ipc {
            match o.value.as_deref() {
                Some("private" | "shareable" | "") | None if !o.dynamic => {}
                _ => return run_time(Some(o)),
            }
        }
        match self.option("--shm-size") {
            Some((_, o)) if o.dynamic || o.value.is_none() => run_time(Some(o)),
            // `--shm-size=0` is written, so a fix must not add another.
            Some((_, o)) => Shm::of_size(
                &parse_compose_size(o.value.as_deref().unwrap_or("")),
                "--shm-size",
            )
            .decided_by(ShmSetting::Size, Some(o.range)),
            None if self.uncertain => run_time(None),
            None => Shm::default_of("Docker"),
        }
    }
}

/// The `/dev/shm` a `--volume`, `--tmpfs` or `--mount` at `/dev/shm` gives.
fn mount_shm(mount: &RunOption) -> Shm {
    let value = mount.value.as_deref().unwrap_or("");
    match mount.name.as_str() {
        "--volume" if value.starts_with("/dev/shm:") => {
            Shm::new(ShmKind::Host, None, "a bind of the host's /dev/shm")
        }
        "--volume" => Shm::new(ShmKind::Disk, None, "a volume mounted at /dev/shm"),
        "--tmpfs" => match value
            .split_once(':')
            .and_then(|(_, options)| tmpfs_size_option(options))
        {
            Some(size) => Shm::of_tmpfs_size(&parse_tmpfs_size_option(size), "--tmpfs size"),
            None => Shm::new(ShmKind::Unbounded, None, "a tmpfs at /dev/shm with no size"),
        },
        _ => match value.split(',').find_map(|p| p.strip_prefix("tmpfs-size=")) {
            Some(size) => Shm::of_size(&parse_compose_size(size), "--mount tmpfs-size"),
            None if value.contains("type=tmpfs") => {
                Shm::new(ShmKind::Unbounded, None, "a tmpfs at /dev/shm with no size")
            }
            None => Shm::new(ShmKind::Unknown, None, "a mount at /dev/shm"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::shell::{Snippet, commands};

    fn run(text: &str) -> Option<DockerRun> {
        commands(&Snippet::verbatim(text, 0))
            .iter()
            .find_map(DockerRun::find)
    }

    #[test]
    fn finds_runs_behind_wrappers_and_reads_options() {
        let r = run("sudo -E docker run --gpus all -it --rm -e NCCL_DEBUG=INFO -v /d:/d --shm-size 8g nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=8 t.py").unwrap();
        assert_eq!(
            r.image.as_ref().unwrap().text,
            "nvcr.io/nvidia/pytorch:24.01-py3"
        );
        assert_eq!(r.gpu_request().unwrap(), "asks for GPUs with `--gpus all`");
        assert_eq!(r.launcher(), Some("torchrun"));
        let shm = r.shm();
        assert_eq!(
            (shm.kind, shm.bytes, shm.decided_by),
            (ShmKind::Sized, Some(8 << 30), ShmSetting::Size)
        );
        assert_eq!(r.env().map(|e| e.0).collect::<Vec<_>>(), ["NCCL_DEBUG"]);
    }

    #[test]
    fn not_every_mention_of_docker_is_a_run() {
        assert!(run("echo docker run --gpus all x").is_none());
        assert!(run("docker build -t x .").is_none());
        assert!(run("docker ps").is_none());
        assert!(run("podman container create --gpus all x").is_some());
        assert!(run("FOO=1 srun -N 2 docker run --gpus all x").is_some());
    }

    #[test]
    fn shm_from_ipc_mounts_and_unknowns() {
        use ShmKind::*;
        use ShmSetting::{Default as Nothing, Ipc, Mount, Unresolved};
        let shm = |t: &str| {
            let shm = run(t).unwrap().shm();
            (shm.kind, shm.decided_by)
        };
        assert_eq!(shm("docker run --gpus all x"), (Default, Nothing));
        assert_eq!(shm("docker run --ipc=host --gpus all x"), (Host, Ipc));
        assert_eq!(
            shm("docker run --ipc private --gpus all x"),
            (Default, Nothing)
        );
        assert_eq!(shm("docker run -v /dev/shm:/dev/shm x"), (Host, Mount));
        // An anonymous volume at /dev/shm.
        assert_eq!(shm("docker run -v /dev/shm --gpus all x"), (Disk, Mount));
        assert_eq!(
            shm("docker run --tmpfs /dev/shm:rw,size=8g x"),
            (Sized, Mount)
        );
        assert_eq!(
            shm("docker run --mount type=tmpfs,target=/dev/shm x"),
            (Unbounded, Mount)
        );
        assert_eq!(shm("docker run --shm-size=$SHM x"), (Unknown, Unresolved));
        assert_eq!(shm("docker run \"${ARGS[@]}\" x"), (Unknown, Unresolved));
        // A variable named as an option list, where the image would be.
        for options in [
            "$EXTRA_FLAGS",
            "${DOCKER_OPTS}",
            "$run_args",
            "\"$OPTIONS\"",
        ] {
            let line = format!("docker run --gpus all {options} x");
            assert_eq!(shm(&line), (Unknown, Unresolved), "{line}");
        }
        // The image from a variable: the run is still checked.
        for image in ["$IMAGE", "${IMAGE}:latest", "\"$IMG\""] {
            let line = format!("docker run --gpus all {image} python train.py");
            assert_eq!(shm(&line), (Default, Nothing), "{line}");
        }
    }
}
