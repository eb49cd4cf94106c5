//! Shared by the fuzz targets: the paths inputs are linted as, the
//! configuration, and the filters that keep the fuzzer off bugs that are
//! already known and being fixed elsewhere (so it spends its time finding
//! new ones). Each filter names its bug; delete it once the fix lands.
#![allow(dead_code)]

use gpulint::engine::config::Config;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A directory that does not exist: linting never reads a neighbour
/// (compose override, built Dockerfile, gpulint.toml) from disk.
pub const ROOT: &str = "/nonexistent-gpulint-fuzz";

pub fn path(name: &str) -> PathBuf {
    PathBuf::from(ROOT).join(name)
}

/// The file names an input is linted as, chosen by the fix and lsp
/// targets' first byte (`seed.sh` prefixes fixtures with these letters).
pub const KINDS: &[(u8, &str)] = &[
    (b'c', "compose.yaml"),
    (b'k', "k8s/deployment.yaml"),
    (b'd', "Dockerfile"),
    (b's', "run.sh"),
    (b'b', "job.sbatch"),
    (b'm', "Makefile"),
    (b'r', "README.md"),
    (b'w', ".github/workflows/ci.yml"),
];

/// The kind byte's file name: a known letter, else any byte modulo.
pub fn kind_name(byte: u8) -> &'static str {
    KINDS
        .iter()
        .find(|(b, _)| *b == byte)
        .map_or(KINDS[usize::from(byte) % KINDS.len()].1, |(_, n)| n)
}

/// Every rule, opt-in ones too, except for a known bug: DF003 panics on
/// non-ASCII RUN text (fixed on branch rel-a/rel-b), so it is off for
/// non-ASCII text. Built once per process: a configuration is not cheap.
pub fn config_for(text: &str) -> &'static Config {
    static ASCII: OnceLock<Config> = OnceLock::new();
    static NON_ASCII: OnceLock<Config> = OnceLock::new();
    let build = |ignore: &[&str]| {
        let mut config = Config::default();
        let every: Vec<String> = gpulint::rules::RULES
            .iter()
            .map(|r| r.code.to_string())
            .collect();
        let ignore: Vec<String> = ignore.iter().map(|c| c.to_string()).collect();
        config.set_selection(&every, &ignore);
        config
    };
    if text.is_ascii() {
        ASCII.get_or_init(|| build(&[]))
    } else {
        NON_ASCII.get_or_init(|| build(&["DF003"]))
    }
}

/// Known bug: YAML merge keys (`<<: [*a, *a]`) chained through aliases
/// expand exponentially (fixed on branch rel-a/rel-b). A few merges are
/// still fuzzed; long chains, the only ones that get slow, are skipped.
pub fn is_merge_alias_chain(text: &str) -> bool {
    text.matches("<<").count() > 8
}

/// Known bug: a `|+` / `>+` block scalar (keep chomping, optionally with an
/// indentation indicator) breaks fix insertion (fixed on branch rel-a/rel-b).
pub fn has_keep_block_scalar(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        (b == b'|' || b == b'>')
            && match bytes.get(i + 1) {
                Some(b'+') => true,
                Some(d) if d.is_ascii_digit() => bytes.get(i + 2) == Some(&b'+'),
                _ => false,
            }
    })
}

/// Known bug: a fix that edits an anchor an alias reads fails verification
/// (fixed on branch rel-a/rel-b): YAML with both an anchor and an alias.
pub fn has_anchor_and_alias(text: &str) -> bool {
    let marks = |mark: u8| {
        text.as_bytes()
            .windows(2)
            .any(|w| w[0] == mark && (w[1].is_ascii_alphanumeric() || matches!(w[1], b'_' | b'-')))
    };
    marks(b'&') && marks(b'*')
}
