//! `docker run` / `docker create` / `nvidia-docker run` / `podman run` command
//! lines read as the container they start: its GPUs, its `/dev/shm`, its
//! environment and what it launches, in the terms the compose rules use.

use crate::container::{Gpus, Shm, ShmKind, ShmSetting};
use crate::gpu_request::{DeviceRequest, parse_gpus};
use crate::script_vars::Expanded;
use crate::size::{SizeValue, parse_compose_size, parse_tmpfs_size_option, tmpfs_size_option};

/// Podman's /dev/shm when nothing sets it: containers.conf's `65536k`,
/// which Podman 4.3 records as 65,536,000 bytes (`podman inspect`'s
/// `HostConfig.ShmSize`, checked by `tests/it/podman.rs`).
pub(crate) const PODMAN_DEFAULT_SHM_BYTES: u64 = 65_536_000;
use crate::syntax::shell::{Command, Word};
use crate::text::TextRange;
use crate::workload::detect_launcher;

mod flags;
mod gpus;
mod shm;

pub use flags::takes_next_word;
use flags::{BOOLEAN_LONG, BOOLEAN_SHORT, VALUE_SHORT, is_run_flag};

/// Words that may come before `docker` in the same simple command.
const PREFIXES: &[&str] = &[
    "sudo", "exec", "time", "nohup", "command", "env", "then", "do", "else", "!", "srun",
    "timeout", "xargs", "stdbuf", "nice",
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
    /// The script variable it comes from (`$FLAG` holding `--gpus all`, or
    /// `--gpus $GPUS`), whose value the script's own assignments give: it
    /// is read, but a fix cannot edit it where the run is written.
    pub via: Option<String>,
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
    /// Why the model cannot read every option: an unknown flag form, a
    /// dynamic word where an option was expected, or a variable that may
    /// take the next word as its value.
    pub uncertain: Option<String>,
    /// Options a variable holds on some of its values only (`$RDMA_FLAGS`
    /// empty, or `--device=/dev/infiniband`), by name, with why: what they
    /// decide is unknown, the rest of the run is read.
    pub varying: Vec<(String, String)>,
    /// The base image of what the run builds first, when it builds its
    /// image (a dev container's `build.dockerfile`, its `FROM` resolved with
    /// `build.args`): what its image is made from.
    pub built_from: Option<String>,
    /// Variables the container's processes run with that its own options
    /// do not set: a workflow job container's job and step `env:`, which
    /// the runner gives each step it runs inside (`docker exec -e`).
    pub exec_env: Vec<(String, Option<String>)>,
    /// How many options at the front are the variables of `--env-file`s
    /// read so far ([`DockerRun::read_env_file`]).
    pub env_files_read: usize,
}

/// What the script says a word that is one variable (`$FLAG`,
/// `"${ARGS[@]}"`) becomes at the command being read: the words of every
/// value it can take, or `None` when the script does not say.
pub(crate) type Resolve<'a> = &'a dyn Fn(&Word) -> Option<Expanded>;

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

/// Whether `text` is one expansion and nothing else (`$EXTRA`,
/// `${GPU_ARGS:-}`, `$@`): its words are whatever the variable holds, none
/// at all when it is unset or empty.
fn is_one_expansion(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('$') else {
        return false;
    };
    if let Some(inner) = rest.strip_prefix('{') {
        return inner.find('}') == Some(inner.len() - 1);
    }
    matches!(rest, "@" | "*")
        || (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// How many words from the first of `words` on are expansions that sit
/// among the options (possibly holding none): one or more expansions in a
/// row, the first named as an option list with a word after them (the
/// image), or followed by an option of `docker run` (`docker run $EXTRA
/// --gpus all img`: unset, the shell drops the word and Docker reads the
/// options after it). A variable named as an image (`$IMAGE --help`) is
/// the image. 0 when the first word is not such an expansion.
fn hidden_options(words: &[Word]) -> usize {
    let expansion = |w: &Word| {
        let upper = w.text.to_ascii_uppercase();
        w.dynamic
            && is_one_expansion(&w.text)
            && !["IMAGE", "IMG", "TAG", "REPO"]
                .iter()
                .any(|n| upper.contains(n))
    };
    let count = words.iter().take_while(|w| expansion(w)).count();
    let Some(next) = words.get(count).filter(|_| count > 0) else {
        return 0;
    };
    if holds_options(&words[0].text) || (!next.dynamic && is_run_flag(&next.text)) {
        count
    } else {
        0
    }
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// A value that is one variable with one value in the script
/// (`--gpus $GPUS`) is read as that value: it and the variable's name.
fn single_value(resolve: Resolve, value: &Word) -> Option<(String, String)> {
    let expanded = resolve(value)?;
    match expanded.values.as_slice() {
        [one] => match one.as_slice() {
            [word] => Some((word.clone(), expanded.name.clone())),
            _ => None,
        },
        _ => None,
    }
}

/// Where `docker`, `podman` or `nvidia-docker` is among a command's words,
/// after assignments and wrappers with their options (`sudo -E`, `srun -N
/// 2`, `timeout 10m`, `env A=1`), nothing else: `echo docker run` is not a
/// run.
fn program_word(words: &[Word]) -> Option<usize> {
    let mut wrapped = false;
    for (i, word) in words.iter().enumerate() {
        let name = base(&word.text);
        if !word.dynamic && matches!(name, "docker" | "podman" | "nvidia-docker") {
            return Some(i);
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
    None
}

/// The word after the CLI's global options (`docker --context x run`),
/// which come before the subcommand.
fn after_global_options(words: &[Word], program: usize) -> usize {
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
    j
}

impl DockerRun {
    /// The `docker run` in a simple command, if it is one, reading no
    /// script variable.
    pub fn find(command: &Command) -> Option<DockerRun> {
        DockerRun::find_in(command, &|_: &Word| None)
    }

    /// The `docker run` in a simple command, if it is one; `$NAME` words
    /// among its options are read with the values `resolve` gives.
    pub(crate) fn find_in(command: &Command, resolve: Resolve) -> Option<DockerRun> {
        let words = &command.words;
        let program = program_word(words)?;
        let mut sub = after_global_options(words, program);
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
            uncertain: None,
            varying: Vec::new(),
            built_from: None,
            exec_env: Vec::new(),
            env_files_read: 0,
        };
        let Some(k) = run.read_options(words, sub + 1, resolve) else {
            return Some(run);
        };
        if let Some(image) = words.get(k) {
            if image.dynamic && holds_options(&image.text) {
                run.uncertain = Some(format!(
                    "`{}` may hold options, which are only known at run time",
                    image.text
                ));
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

    /// Reads the options from word `k` on; returns where the image is, or
    /// `None` when a variable's value leaves nothing after it readable.
    fn read_options(&mut self, words: &[Word], mut k: usize, resolve: Resolve) -> Option<usize> {
        while let Some(word) = words.get(k) {
            let text = word.text.as_str();
            if text == "--" {
                k += 1;
                break;
            }
            if let Some(expanded) = resolve(word) {
                match self.read_variable(word, &expanded) {
                    Ok(()) => {
                        k += 1;
                        continue;
                    }
                    // What follows may be a value, the image or an option:
                    // nothing after it is read.
                    Err(why) => {
                        self.uncertain = Some(why);
                        return None;
                    }
                }
            }
            if !text.starts_with('-') || text == "-" {
                let hidden = hidden_options(&words[k..]);
                if hidden > 0 {
                    self.uncertain = Some(format!(
                        "`{text}` may hold options, which are only known at run time"
                    ));
                    k += hidden;
                    continue;
                }
                break;
            }
            if word.dynamic && !text.starts_with("--") {
                self.uncertain = Some(format!("`{text}` is only known at run time"));
            }
            k += self.read_option(words, k, resolve);
        }
        Some(k)
    }

    /// Reads `$name` (the word `at`) where an option may be, with every
    /// value the script gives it. Its options are the run's when every
    /// value holds the same ones (switches such as `-it` aside); values
    /// that differ leave the run uncertain, and the options after it are
    /// still read. `Err` says why nothing after it can be read: a value
    /// that ends with an option taking the next word as its value, or one
    /// that holds the image.
    fn read_variable(&mut self, at: &Word, expanded: &Expanded) -> Result<(), String> {
        let name = &expanded.name;
        let mut read: Vec<Vec<RunOption>> = Vec::new();
        for value in &expanded.values {
            let words: Vec<Word> = value
                .iter()
                .map(|text| Word {
                    text: text.clone(),
                    range: at.range,
                    dynamic: false,
                })
                .collect();
            let value = value.join(" ");
            let mut scratch = DockerRun {
                options: Vec::new(),
                uncertain: None,
                varying: Vec::new(),
                ..self.clone()
            };
            let mut k = 0;
            while let Some(word) = words.get(k) {
                if !word.text.starts_with('-') || word.text == "-" {
                    return Err(format!(
                        "`${name}` may be `{value}`, which holds the image: the options after it are not read"
                    ));
                }
                k += scratch.read_option(&words, k, &|_: &Word| None);
                if k > words.len() {
                    return Err(format!(
                        "`${name}` may be `{value}`, which takes the next word as its value: the options after it are not read"
                    ));
                }
            }
            if let Some(why) = scratch.uncertain {
                return Err(format!("`${name}` may be `{value}`: {why}"));
            }
            for option in &mut scratch.options {
                option.value_range = None;
                option.via = Some(name.to_string());
            }
            read.push(scratch.options);
        }
        // Switches (`-it`) decide nothing gpulint reads; an option with a
        // value that every value holds is the run's, and one that only
        // some hold leaves what it decides unknown.
        let setting = |o: &RunOption| (o.name.clone(), o.value.clone());
        let mut options = read.first().cloned().unwrap_or_default();
        options.retain(|o| {
            o.value.is_some()
                && read
                    .iter()
                    .all(|r| r.iter().any(|x| setting(x) == setting(o)))
        });
        let written: Vec<String> = expanded
            .values
            .iter()
            .map(|v| format!("`{}`", v.join(" ")))
            .collect();
        for option in read.iter().flatten().filter(|o| o.value.is_some()) {
            let common = options.iter().any(|c| setting(c) == setting(option));
            if !common && !self.varying.iter().any(|(n, _)| *n == option.name) {
                self.varying.push((
                    option.name.clone(),
                    format!(
                        "`${name}` may be {}: `{}` is only known at run time",
                        written.join(" or "),
                        option.name
                    ),
                ));
            }
        }
        self.options.extend(options);
        Ok(())
    }

    /// Whether every option before byte `offset` is a flag of `docker run`
    /// the reader knows: one it does not know may take no value where the
    /// reader gave it the next word.
    pub(crate) fn knows_options_before(&self, offset: u32) -> bool {
        self.options
            .iter()
            .filter(|o| o.range.start < offset)
            .all(|o| is_run_flag(&o.name))
    }

    /// Why what `names` decide is only known at run time, when a
    /// variable holds one of them on some of its values only.
    pub fn varies(&self, names: &[&str]) -> Option<&str> {
        self.varying
            .iter()
            .find(|(name, _)| names.contains(&name.as_str()))
            .map(|(_, why)| why.as_str())
    }

    /// Reads the option at `words[k]`; returns how many words it took.
    fn read_option(&mut self, words: &[Word], k: usize, resolve: Resolve) -> usize {
        let word = &words[k];
        let text = word.text.as_str();
        let option = |name: &str, value: Option<&Word>, inline: Option<(String, TextRange)>| {
            let resolved = value.and_then(|v| single_value(resolve, v));
            let (value, value_range, dynamic, end, via) = match (inline, value, resolved) {
                (Some((v, r)), _, _) => (Some(v), Some(r), word.dynamic, word.range, None),
                (None, Some(v), Some((resolved, variable))) => {
                    (Some(resolved), None, false, v.range, Some(variable))
                }
                (None, Some(v), None) => (
                    Some(v.text.clone()),
                    Some(v.range),
                    v.dynamic,
                    v.range,
                    None,
                ),
                (None, None, _) => (None, None, false, word.range, None),
            };
            RunOption {
                name: name.to_string(),
                value,
                value_range,
                dynamic,
                range: word.range.cover(end),
                via,
            }
        };
        if let Some(long) = text.strip_prefix("--") {
            // Every flag of docker and podman is lowercase letters, digits
            // and dashes: anything else (`--shm_size`, `--shm-size%8g`) is
            // refused by the CLI, and whether it would take the next word
            // is unknown.
            let name = long.split_once('=').map_or(long, |(name, _)| name);
            if !word.dynamic
                && !name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            {
                self.uncertain = Some(format!("`--{name}` is a flag gpulint does not know"));
            }
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
                // pflag drops one `=` right after a short flag with
                // something after it: `-e=A=1` sets `A=1` (`-e=` sets `=`).
                let rest = &text[n + 2..];
                let rest = match rest.strip_prefix('=') {
                    Some(value) if !value.is_empty() => value,
                    _ => rest,
                };
                if rest.is_empty() {
                    self.options.push(option(long, words.get(k + 1), None));
                    return 2;
                }
                self.options
                    .push(option(long, None, Some((rest.to_string(), word.range))));
                return 1;
            }
            if !BOOLEAN_SHORT.contains(&flag) {
                self.uncertain = Some(format!("`{text}` is a flag gpulint does not know"));
            }
        }
        self.options.push(option(text, None, None));
        1
    }

    /// Reads the file of the `--env-file` option `file` (its `text`),
    /// as docker/cli `opts.ParseEnvFile` does: leading blanks dropped,
    /// blank lines and `#` lines skipped, the value after the first `=`
    /// taken as it is (quotes too), a name alone taken from the caller's
    /// environment (unknown here). Its variables come before every `-e`,
    /// which wins over them; `None` when the CLI refuses the file (a name
    /// with a blank, no name at all).
    pub fn read_env_file(&mut self, file: &RunOption, text: &str) -> Option<()> {
        let mut read = Vec::new();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for line in text.lines() {
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, value) = match line.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (line, None),
            };
            if name.is_empty() || name.contains([' ', '\t', '\n', '\x0b', '\x0c', '\r']) {
                return None;
            }
            read.push(RunOption {
                name: "--env".into(),
                value: Some(match value {
                    Some(value) => format!("{name}={value}"),
                    None => name.to_string(),
                }),
                value_range: None,
                dynamic: false,
                range: file.range,
                via: file.value.clone(),
            });
        }
        // Before every option: the CLI reads env files first, then `-e`.
        let files_before = self.env_files_read;
        self.options
            .splice(files_before..files_before, read.iter().cloned());
        self.env_files_read += read.len();
        Some(())
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

    /// The `-e NAME[=value]` that decides `name` (the last one wins), as
    /// [`Self::env`] yields it.
    pub fn last_env(&self, name: &str) -> Option<(&str, Option<&str>, &RunOption)> {
        self.env().filter(|(n, _, _)| *n == name).last()
    }

    /// `podman run`, or a Quadlet unit's: Podman's defaults apply.
    pub fn is_podman(&self) -> bool {
        self.program == "podman"
    }

    /// Why the container never starts, for what gpulint reads: the Docker
    /// CLI refuses a `--gpus` value, or the daemon a device request (both a
    /// count and device ids: `--gpus device=0,1` without the inner quotes).
    pub fn refusal(&self) -> Option<String> {
        self.options_named("--gpus")
            .zip(self.device_requests())
            .find_map(|((_, option), request)| match request? {
                Err(why) => Some(format!(
                    "the Docker CLI refuses `--gpus {}`: {why}",
                    option.value.as_deref().unwrap_or("")
                )),
                Ok(r) => r.start_refusal(),
            })
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
    pub(crate) fn uses_rdma(&self) -> bool {
        self.env()
            .any(|(name, value, _)| crate::workload::selects_rdma(name, value))
            || self.options_named("--device").any(|(_, d)| {
                d.value
                    .as_deref()
                    .is_some_and(|v| v.starts_with("/dev/infiniband"))
            })
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
        // A long flag no CLI has: whether it takes the next word (here a
        // `--shm-size`) is unknown, and the CLI refuses the line anyway.
        for flag in ["--shm_size=8g", "--shm-size%8g", "--Shm-Size=8g"] {
            let line = format!("docker run --gpus all {flag} --shm-size=8g x");
            let parsed = run(&line).unwrap();
            assert!(
                parsed.uncertain.unwrap().contains("does not know"),
                "{line}"
            );
            assert_eq!(shm(&format!("docker run {flag} x")), (Unknown, Unresolved));
        }
        // The image from a variable: the run is still checked.
        for image in ["$IMAGE", "${IMAGE}:latest", "\"$IMG\""] {
            let line = format!("docker run --gpus all {image} python train.py");
            assert_eq!(shm(&line), (Default, Nothing), "{line}");
        }
    }

    /// What the engine gives (tests/it/engine.rs, the `--ipc` judge): a
    /// mount at /dev/shm wins over every IPC mode, and a mode it does not
    /// know refuses the container.
    #[test]
    fn a_mount_wins_over_the_ipc_mode_and_unknown_modes_are_refused() {
        let shm = |t: &str| {
            let shm = run(t).unwrap().shm();
            (shm.kind, shm.decided_by)
        };
        assert_eq!(
            shm("docker run --ipc=host --tmpfs /dev/shm:size=1g x"),
            (ShmKind::Sized, ShmSetting::Mount)
        );
        assert_eq!(
            shm("docker run --ipc none -v shm:/dev/shm x"),
            (ShmKind::Disk, ShmSetting::Mount)
        );
        for mode in [
            "hosts",
            "HOST",
            "service:x",
            "container:",
            "ns:/proc/1/ns/ipc",
        ] {
            let line = format!("docker run --ipc={mode} --tmpfs /dev/shm:size=1g x");
            assert_eq!(shm(&line), (ShmKind::Refused, ShmSetting::Ipc), "{line}");
        }
        for mode in ["", "private", "shareable", "container:donor", "$MODE"] {
            let line = format!("docker run --ipc={mode} x");
            assert_ne!(shm(&line).0, ShmKind::Refused, "{line}");
        }
        assert_ne!(
            shm("podman run --ipc=ns:/proc/1/ns/ipc x").0,
            ShmKind::Refused
        );
    }

    /// pflag drops one `=` after a short flag: `-e=A=1` sets `A=1`.
    #[test]
    fn a_short_flag_written_with_an_equals_sign() {
        // `-e=` alone is the value `=` (which the CLI refuses).
        let r = run("docker run -e=NCCL_DEBUG=INFO -eNCCL_IB_DISABLE=1 -e= x").unwrap();
        let values: Vec<_> = r
            .options_named("--env")
            .map(|(_, o)| o.value.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(values, ["NCCL_DEBUG=INFO", "NCCL_IB_DISABLE=1", "="]);
    }

    /// An expansion followed by options of `docker run` sits among the
    /// options: the shell drops it when it is unset, and the options after
    /// it are read; what it may hold leaves the rest unknown.
    #[test]
    fn an_expansion_before_options_hides_options_not_the_image() {
        let r = run("docker run $EXTRA --gpus all --shm-size 8g img torchrun t.py").unwrap();
        assert_eq!(r.image.as_ref().unwrap().text, "img");
        assert_eq!(r.gpus(), Gpus::All);
        assert_eq!(r.shm().bytes, Some(8 << 30));
        assert!(r.uncertain.unwrap().contains("`$EXTRA` may hold options"));
        let r = run("docker run $EXTRA $MORE --shm-size 1g img").unwrap();
        assert_eq!(r.shm().bytes, Some(1 << 30), "expansions in a row");
        let r = run("docker run ${EXTRA:-} --gpus all img").unwrap();
        assert_eq!(
            r.shm().kind,
            ShmKind::Unknown,
            "what it may hold is unknown"
        );
        // A variable named as options is one before the image too.
        let r = run("docker run $DOCKER_OPTS img python t.py").unwrap();
        assert_eq!(r.image.as_ref().unwrap().text, "img");
        // The image's own flags after it: the variable is the image.
        for line in [
            "docker run --gpus all $IMAGE --help",
            "docker run --gpus all $X serve --port 8000",
            "docker run --gpus all $X --model m",
        ] {
            let r = run(line).unwrap();
            assert!(r.image.is_none(), "{line}");
            assert_eq!(r.uncertain, None, "{line}");
        }
    }

    /// What Podman 4.3 records (tests/it/podman.rs): its own default size, 0
    /// as no limit, a size refused with the host's or no IPC namespace, and
    /// an unreadable size refused whatever else sets /dev/shm.
    #[test]
    fn podman_reads_shm_options_as_podman_does() {
        let shm = |line: &str| run(line).unwrap().shm();
        let default = shm("podman run --device nvidia.com/gpu=all img");
        assert_eq!(
            (default.kind, default.bytes),
            (ShmKind::Default, Some(PODMAN_DEFAULT_SHM_BYTES))
        );
        assert_eq!(shm("docker run --gpus all img").bytes, Some(64 << 20));
        assert_eq!(shm("podman run --shm-size=0 img").kind, ShmKind::Unbounded);
        assert_eq!(shm("docker run --shm-size=0 img").kind, ShmKind::Default);
        for ipc in ["host", "none"] {
            let line = format!("podman run --shm-size=1g --ipc={ipc} img");
            assert_eq!(shm(&line).kind, ShmKind::Refused, "{line}");
        }
        assert_eq!(
            shm("docker run --shm-size=1g --ipc=host img").kind,
            ShmKind::Host
        );
        for program in ["docker", "podman"] {
            let line = format!("{program} run --shm-size=abc --tmpfs /dev/shm:size=1g img");
            assert_eq!(shm(&line).kind, ShmKind::Refused, "{line}");
        }
        let run = run("podman run --device nvidia.com/gpu=0 --device /dev/nvidia1 img").unwrap();
        assert_eq!(run.gpus(), Gpus::Count(2));
    }
}
