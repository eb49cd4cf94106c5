//! `apptainer` / `singularity` container launches in scripts (`exec`,
//! `run`, `shell`, `test`, `instance start`), read as their command line
//! parsers read them: global options, the action's options (those that take
//! a value skipped with it: `--bind /data`, `-B /a:/b`, `--env A=1`), then
//! the image. What SLURM005 asks of it is whether `--nv` (or `--nvccli`,
//! `--rocm`) comes before the image.
//!
//! The option tables are Apptainer's (`cmd/internal/cli/action_flags.go`
//! and the persistent flags of `cmd/internal/cli/apptainer.go`, apptainer
//! 1.4), with the value options SingularityCE adds (`--library`); an
//! option in neither table stops the reading, since gpulint cannot tell
//! whether it takes the next word.

use crate::script_vars::Expanded;
use crate::syntax::shell::{Command, Word};
use crate::text::TextRange;

/// Options of the actions that take a value, long and short.
const VALUE_LONG: &[&str] = &[
    "app",
    "bind",
    "mount",
    "home",
    "overlay",
    "scratch",
    "workdir",
    "shell",
    "cwd",
    "pwd",
    "hostname",
    "network",
    "network-args",
    "dns",
    "security",
    "apply-cgroups",
    "containlibs",
    "fusemount",
    "tmpdir",
    "no-mount",
    "add-caps",
    "drop-caps",
    "env",
    "no-env",
    "env-file",
    "dmtcp-launch",
    "dmtcp-restart",
    "blkio-weight",
    "blkio-weight-device",
    "cpu-shares",
    "cpus",
    "cpuset-cpus",
    "cpuset-mems",
    "memory",
    "memory-reservation",
    "memory-swap",
    "pids-limit",
    "runscript-timeout",
    "netns-path",
    "device",
    "cdi-dirs",
    // Persistent flags of the root command, accepted after the action.
    "docker-username",
    "docker-password",
    "docker-host",
    "buildkit-host",
    "pem-path",
    "config",
    "authfile",
    // SingularityCE.
    "library",
];
const VALUE_SHORT: &[u8] = b"BHoSWs";

/// Options that take no value.
const SWITCH_LONG: &[&str] = &[
    "disable-cache",
    "boot",
    "fakeroot",
    "cleanenv",
    "compat",
    "contain",
    "containall",
    "nv",
    "nvccli",
    "compat32",
    "rocm",
    "writable",
    "writable-tmpfs",
    "no-home",
    "no-init",
    "no-nv",
    "no-rocm",
    "pid",
    "no-pid",
    "ipc",
    "net",
    "uts",
    "userns",
    "keep-privs",
    "no-privs",
    "allow-setuid",
    "no-umask",
    "no-eval",
    "oom-kill-disable",
    "unsquash",
    "ignore-subuid",
    "ignore-fakeroot-command",
    "ignore-userns",
    "underlay",
    "sharens",
    "intel-hpu",
    // Persistent flags of the root command.
    "debug",
    "nocolor",
    "silent",
    "quiet",
    "verbose",
    "docker-login",
    "passphrase",
    "force",
    "no-https",
    "nohttps",
    "build-config",
    // SingularityCE.
    "oci",
    "no-oci",
    "sif-fuse",
    "keep-layers",
    "no-compat",
];
const SWITCH_SHORT: &[u8] = b"fecCwpinu";

/// The root command's own short options, before the action: `-c` is
/// `--config FILE` there (and `--contain` after it), `-s` `--silent` (and
/// `--shell PATH` after it).
const GLOBAL_VALUE_SHORT: &[u8] = b"c";
const GLOBAL_SWITCH_SHORT: &[u8] = b"dsqv";

/// The options that give the container the host's GPUs.
pub(crate) const GPU_OPTIONS: &[&str] = &["--nv", "--nvccli", "--rocm"];

/// One launch of a container by Apptainer or Singularity.
#[derive(Debug, Clone)]
pub struct ApptainerRun {
    /// `apptainer` or `singularity`, as written.
    pub program: Word,
    /// `exec`, `run`, `shell`, `test` or `instance start`.
    pub action: String,
    /// From the program to the action.
    pub range: TextRange,
    /// `--nv`, `--nvccli` or `--rocm`, when one comes before the image.
    pub gpu_option: Option<String>,
    /// Why the options cannot all be read (an option gpulint does not
    /// know, or a variable whose value it cannot tell): one may be `--nv`.
    pub uncertain: Option<String>,
    /// The image, when it is a literal.
    pub image: Option<Word>,
    /// The program `exec` runs in the container (the word after the image),
    /// when it is a literal.
    pub program_in_container: Option<String>,
}

/// What the script says a lone variable becomes (see [`Expanded`]).
pub(crate) type Resolve<'a> = &'a dyn Fn(&Word) -> Option<Expanded>;

impl ApptainerRun {
    /// The container launch in a simple command, if it is one.
    pub fn find(command: &Command, resolve: Resolve) -> Option<ApptainerRun> {
        let words = &command.words;
        let at = words.iter().position(|w| {
            !w.dynamic && matches!(w.text.rsplit('/').next(), Some("apptainer" | "singularity"))
        })?;
        let mut run = ApptainerRun {
            program: words[at].clone(),
            action: String::new(),
            range: words[at].range,
            gpu_option: None,
            uncertain: None,
            image: None,
            program_in_container: None,
        };
        // Global options, then the action.
        let mut k = at + 1;
        while words.get(k).is_some_and(|w| w.text.starts_with('-')) {
            let texts: Vec<String> = words[k..].iter().map(|w| w.text.clone()).collect();
            match run.read_option(&texts, true) {
                Some(taken) => k += taken,
                None => return None,
            }
        }
        let action = words.get(k)?;
        run.range = run.program.range.cover(action.range);
        match action.text.as_str() {
            "exec" | "run" | "shell" | "test" => run.action = action.text.clone(),
            "instance" if words.get(k + 1).is_some_and(|w| w.text == "start") => {
                run.range = run.range.cover(words[k + 1].range);
                run.action = "instance start".into();
                k += 1;
            }
            _ => return None,
        }
        k += 1;
        while let Some(word) = words.get(k) {
            if let Some(expanded) = resolve(word) {
                match run.read_variable(&expanded) {
                    Ok(true) => {
                        k += 1;
                        continue;
                    }
                    // The image is in the variable: the options end there.
                    Ok(false) => return Some(run),
                    Err(why) => {
                        run.uncertain = Some(why);
                        return Some(run);
                    }
                }
            }
            if word.dynamic && !word.text.starts_with('-') {
                if holds_options(&word.text) {
                    run.uncertain = Some(format!(
                        "`{}` may hold options, which are only known at run time",
                        word.text
                    ));
                } else {
                    // `$IMG`: the image, from the caller.
                }
                return Some(run);
            }
            if !word.text.starts_with('-') || word.text == "-" {
                run.image = Some(word.clone());
                run.program_in_container = words
                    .get(k + 1)
                    .filter(|w| !w.dynamic)
                    .map(|w| w.text.rsplit('/').next().unwrap_or(&w.text).to_string());
                return Some(run);
            }
            if word.dynamic {
                run.uncertain = Some(format!("`{}` is only known at run time", word.text));
                return Some(run);
            }
            let texts: Vec<String> = words[k..].iter().map(|w| w.text.clone()).collect();
            match run.read_option(&texts, false) {
                Some(taken) => k += taken,
                None => {
                    run.uncertain = Some(format!(
                        "`{}` is an option gpulint does not know",
                        word.text
                    ));
                    return Some(run);
                }
            }
        }
        Some(run)
    }

    /// Reads the option that starts `words` (`global`: before the action),
    /// noting a GPU option; how many words it takes, `None` for one not in
    /// the tables.
    fn read_option(&mut self, words: &[String], global: bool) -> Option<usize> {
        let text = words[0].as_str();
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if GPU_OPTIONS.contains(&format!("--{name}").as_str()) {
                self.gpu_option = Some(format!("--{name}"));
            }
            return if SWITCH_LONG.contains(&name) {
                Some(1)
            } else if VALUE_LONG.contains(&name) {
                Some(if inline { 1 } else { 2 })
            } else {
                None
            };
        }
        // Grouped short switches (`-ce`), the last of which may take a
        // value, attached (`-B/data`) or as the next word.
        let bytes = &text.as_bytes()[1..];
        if bytes.is_empty() {
            return None;
        }
        let (values, switches) = if global {
            (GLOBAL_VALUE_SHORT, GLOBAL_SWITCH_SHORT)
        } else {
            (VALUE_SHORT, SWITCH_SHORT)
        };
        for (n, flag) in bytes.iter().enumerate() {
            if values.contains(flag) {
                return Some(if n + 1 == bytes.len() { 2 } else { 1 });
            }
            if !switches.contains(flag) {
                return None;
            }
        }
        Some(1)
    }

    /// Reads a variable where an option may be, with every value the
    /// script gives it: `Ok(true)` when every value is options only,
    /// `Ok(false)` when every value ends in the image; `Err` says why
    /// gpulint cannot tell.
    fn read_variable(&mut self, expanded: &Expanded) -> Result<bool, String> {
        let name = &expanded.name;
        let mut gpu = Vec::new();
        let mut holds_image = Vec::new();
        for value in &expanded.values {
            let mut scratch = ApptainerRun {
                gpu_option: None,
                ..self.clone()
            };
            let mut k = 0;
            let mut image = false;
            while k < value.len() {
                if !value[k].starts_with('-') {
                    image = true;
                    break;
                }
                match scratch.read_option(&value[k..], false) {
                    Some(taken) if k + taken <= value.len() => k += taken,
                    _ => {
                        return Err(format!(
                            "`${name}` may be `{}`, which gpulint cannot read past",
                            value.join(" ")
                        ));
                    }
                }
            }
            gpu.push(scratch.gpu_option);
            holds_image.push(image);
        }
        if gpu.iter().any(|g| g != &gpu[0]) || holds_image.iter().any(|h| *h != holds_image[0]) {
            return Err(format!(
                "`${name}` may hold `--nv` on some of its values only"
            ));
        }
        if let Some(option) = gpu[0].clone() {
            self.gpu_option = Some(option);
        }
        Ok(!holds_image[0])
    }
}

/// A variable named as an option list (`$APPTAINER_ARGS`, `${OPTS}`).
fn holds_options(word: &str) -> bool {
    let name: String = word
        .trim_start_matches(['$', '{'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<String>()
        .to_ascii_uppercase();
    word.contains("[@]")
        || word.contains("[*]")
        || ["ARGS", "FLAGS", "OPTS", "OPTIONS"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::shell::{Snippet, commands};

    fn read(text: &str) -> Option<ApptainerRun> {
        commands(&Snippet::verbatim(text, 0))
            .iter()
            .find_map(|c| ApptainerRun::find(c, &|_: &Word| None))
    }

    /// The held-out case: `--bind /data` before `--nv` hid it.
    #[test]
    fn options_with_values_are_skipped_with_them() {
        for line in [
            "apptainer exec --bind /data --nv $IMG python train.py",
            "apptainer exec -B /data:/data --nv img.sif python train.py",
            "apptainer exec -B/data --env A=1 --nv img.sif python train.py",
            "singularity run --bind=/data -H /home/me --overlay o.img --nv img.sif",
            "srun singularity exec -W /tmp --pwd /w --nvccli img.sif python t.py",
            "apptainer --debug exec --cleanenv -c --nv img.sif python t.py",
            "apptainer exec -ce --rocm img.sif python t.py",
            "apptainer instance start --bind /data --nv img.sif inst",
        ] {
            let run = read(line).unwrap();
            assert!(run.gpu_option.is_some(), "{line}: {run:?}");
            assert_eq!(run.uncertain, None, "{line}");
        }
    }

    #[test]
    fn the_image_ends_the_options() {
        // `--nv` after the image is the command's argument.
        let run = read("apptainer exec --bind /data img.sif python --nv").unwrap();
        assert_eq!(run.gpu_option, None);
        assert_eq!(run.image.unwrap().text, "img.sif");
        // `$IMG` from the caller is the image; `$APPTAINER_ARGS` may be options.
        let run = read("apptainer exec --bind /data $IMG python").unwrap();
        assert_eq!(
            (run.gpu_option.as_deref(), run.uncertain.as_deref()),
            (None, None)
        );
        let run = read("apptainer exec $APPTAINER_ARGS img.sif python").unwrap();
        assert!(run.uncertain.is_some());
        // An option in no table: it may take the next word.
        let run = read("apptainer exec --frobnicate x --nv img.sif").unwrap();
        assert!(run.uncertain.unwrap().contains("--frobnicate"));
        assert!(read("apptainer build img.sif docker://x").is_none());
        assert!(read("apptainer instance list").is_none());
    }
}
