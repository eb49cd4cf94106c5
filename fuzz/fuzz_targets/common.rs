//! Shared by the fuzz targets: the paths inputs are linted as and the
//! configuration. A bug the fuzzers find and that is not fixed yet may get
//! a filter here that names it, so they spend their time on new ones;
//! delete it once the fix lands.
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

/// Every rule, opt-in ones too. Built once per process: a configuration
/// is not cheap.
pub fn config_for(_text: &str) -> &'static Config {
    static EVERY: OnceLock<Config> = OnceLock::new();
    EVERY.get_or_init(|| {
        let mut config = Config::default();
        let every: Vec<String> = gpulint::rules::RULES
            .iter()
            .map(|r| r.code.to_string())
            .collect();
        config.set_selection(&every, &[]);
        config
    })
}
