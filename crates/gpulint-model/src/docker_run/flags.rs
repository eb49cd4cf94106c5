//! The flags of `docker run` (and Podman's common ones) as its option
//! reader knows them: which take a value, and which are flags at all.

/// Boolean flags of `docker run` (and podman's common ones): they take no value.
pub(super) const BOOLEAN_LONG: &[&str] = &[
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
    "--use-api-socket",
];
pub(super) const BOOLEAN_SHORT: &[u8] = b"dit PqR";
/// Short flags that take a value, and the long flag each stands for.
pub(super) const VALUE_SHORT: &[(u8, &str)] = &[
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

/// Every long flag of `docker run` (Docker CLI 28's `docker run --help`):
/// a word after an expansion that is one of these says the expansion sits
/// among the options.
const RUN_FLAGS: &[&str] = &[
    "--add-host",
    "--annotation",
    "--attach",
    "--blkio-weight",
    "--blkio-weight-device",
    "--cap-add",
    "--cap-drop",
    "--cgroup-parent",
    "--cgroupns",
    "--cidfile",
    "--cpu-count",
    "--cpu-percent",
    "--cpu-period",
    "--cpu-quota",
    "--cpu-rt-period",
    "--cpu-rt-runtime",
    "--cpu-shares",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--detach",
    "--detach-keys",
    "--device",
    "--device-cgroup-rule",
    "--device-read-bps",
    "--device-read-iops",
    "--device-write-bps",
    "--device-write-iops",
    "--disable-content-trust",
    "--dns",
    "--dns-option",
    "--dns-search",
    "--domainname",
    "--entrypoint",
    "--env",
    "--env-file",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-cmd",
    "--health-interval",
    "--health-retries",
    "--health-start-interval",
    "--health-start-period",
    "--health-timeout",
    "--hostname",
    "--init",
    "--interactive",
    "--io-maxbandwidth",
    "--io-maxiops",
    "--ip",
    "--ip6",
    "--ipc",
    "--isolation",
    "--kernel-memory",
    "--label",
    "--label-file",
    "--link",
    "--link-local-ip",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "--memory",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--mount",
    "--name",
    "--network",
    "--network-alias",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--oom-score-adj",
    "--pid",
    "--pids-limit",
    "--platform",
    "--privileged",
    "--publish",
    "--publish-all",
    "--pull",
    "--quiet",
    "--read-only",
    "--restart",
    "--rm",
    "--runtime",
    "--security-opt",
    "--shm-size",
    "--sig-proxy",
    "--stop-signal",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--tmpfs",
    "--tty",
    "--ulimit",
    "--use-api-socket",
    "--user",
    "--userns",
    "--uts",
    "--volume",
    "--volume-driver",
    "--volumes-from",
    "--workdir",
];

/// Whether `word` is an option of `docker run` as written: a long flag it
/// has (`--gpus`, `--shm-size=8g`), or short ones it has (`-it`, `-e`).
pub(super) fn is_run_flag(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        let name = long.split_once('=').map_or(long, |(name, _)| name);
        return RUN_FLAGS.contains(&format!("--{name}").as_str());
    }
    word.strip_prefix('-').is_some_and(|flags| {
        flags.bytes().next().is_some_and(|first| {
            BOOLEAN_SHORT.contains(&first) || VALUE_SHORT.iter().any(|(s, _)| *s == first)
        })
    })
}

/// Whether the option `word` takes the next word as its value, as the
/// reader of `docker run` options reads it (`--shm-size 8g`, `-e A=1`; not
/// `--shm-size=8g`, `-it`, `-eA=1`).
pub fn takes_next_word(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        return !long.is_empty() && !long.contains('=') && !BOOLEAN_LONG.contains(&word);
    }
    let Some(flags) = word.strip_prefix('-') else {
        return false;
    };
    for (n, flag) in flags.bytes().enumerate() {
        if VALUE_SHORT.iter().any(|(s, _)| *s == flag) {
            return n + 1 == flags.len();
        }
    }
    false
}
