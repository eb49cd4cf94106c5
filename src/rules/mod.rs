//! The rule registry. Each rule is one file under `src/rules/<target>/`
//! (`shared/` for rules that check several kinds of file), one
//! doc `rules/<CODE>.md` (whose front matter is the rule's metadata) and one
//! fixture folder `fixtures/<CODE>/`. Adding a rule means adding its module
//! to its target's `mod.rs` (a plain `mod` line, so rustfmt reaches the file)
//! and one line to [`declare_rules!`] below; a test checks the two agree.

pub mod compose;
pub mod context;
pub mod docker_context;
pub mod dockerfile;
pub mod helpers;
pub mod kube_context;
pub mod kubernetes;
mod meta;
pub mod script_context;
pub mod shared;
pub mod slurm;
pub mod suppression;

pub use context::{ComposeContext, Reporter, RuleSettings};
pub use docker_context::DockerfileContext;
pub use kube_context::KubeContext;
pub use meta::{FixKind, RuleMeta, Target};
pub use script_context::ScriptContext;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// How a rule is run: once per compose document, Kubernetes document,
/// Dockerfile or file that runs commands (its `docker run` lines, or its
/// SLURM directives and launches), or for several of them (one rule, one
/// implementation of its logic, an adapter per target); or by the engine
/// itself (suppression comments).
#[derive(Clone, Copy)]
pub struct Check {
    pub compose: Option<fn(&ComposeContext, &mut Reporter)>,
    pub kubernetes: Option<fn(&KubeContext, &mut Reporter)>,
    pub dockerfile: Option<fn(&DockerfileContext, &mut Reporter)>,
    pub commands: Option<fn(&ScriptContext, &mut Reporter)>,
    pub slurm: Option<fn(&ScriptContext, &mut Reporter)>,
}

impl Check {
    /// Reported by the engine itself.
    pub const ENGINE: Check = Check {
        compose: None,
        kubernetes: None,
        dockerfile: None,
        commands: None,
        slurm: None,
    };

    pub const fn compose(check: fn(&ComposeContext, &mut Reporter)) -> Check {
        Check {
            compose: Some(check),
            ..Check::ENGINE
        }
    }

    pub const fn kubernetes(check: fn(&KubeContext, &mut Reporter)) -> Check {
        Check {
            kubernetes: Some(check),
            ..Check::ENGINE
        }
    }

    pub const fn both(
        compose: fn(&ComposeContext, &mut Reporter),
        kubernetes: fn(&KubeContext, &mut Reporter),
    ) -> Check {
        Check {
            compose: Some(compose),
            kubernetes: Some(kubernetes),
            ..Check::ENGINE
        }
    }

    pub const fn dockerfile(check: fn(&DockerfileContext, &mut Reporter)) -> Check {
        Check {
            dockerfile: Some(check),
            ..Check::ENGINE
        }
    }

    pub const fn slurm(check: fn(&ScriptContext, &mut Reporter)) -> Check {
        Check {
            slurm: Some(check),
            ..Check::ENGINE
        }
    }

    /// The same check for `docker run` command lines too.
    pub const fn and_commands(self, check: fn(&ScriptContext, &mut Reporter)) -> Check {
        Check {
            commands: Some(check),
            ..self
        }
    }

    /// The same check for Dockerfile `ENV` too.
    pub const fn and_dockerfile(self, check: fn(&DockerfileContext, &mut Reporter)) -> Check {
        Check {
            dockerfile: Some(check),
            ..self
        }
    }

    /// The targets this check runs on, to compare with the doc's `targets`.
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        if self.compose.is_some() {
            targets.push(Target::Compose);
        }
        if self.kubernetes.is_some() {
            targets.push(Target::Kubernetes);
        }
        if self.dockerfile.is_some() {
            targets.push(Target::Dockerfile);
        }
        if self.commands.is_some() {
            targets.push(Target::Commands);
        }
        if self.slurm.is_some() {
            targets.push(Target::Slurm);
        }
        targets
    }
}

pub struct RuleInfo {
    pub code: RuleCode,
    pub doc: &'static str,
    pub check: Check,
}

/// A user's text (a config file, `--select`, a suppression comment) that
/// names no rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRuleCode(pub String);

impl fmt::Display for UnknownRuleCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a gpulint rule code", self.0)
    }
}

impl std::error::Error for UnknownRuleCode {}

macro_rules! declare_rules {
    ($( $target:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        /// A rule's code. Rust source names a rule by its variant, so a
        /// misspelt code does not compile; user input is parsed with
        /// [`str::parse`] at the boundary. Variants are in [`RULES`] order.
        #[allow(clippy::upper_case_acronyms)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RuleCode {
            $( $( $code, )* )*
        }

        impl RuleCode {
            /// Every code, in [`RULES`] order.
            pub const ALL: &'static [RuleCode] = &[ $( $( RuleCode::$code, )* )* ];

            /// The code as users write it (`GPU001`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $( RuleCode::$code => stringify!($code), )* )*
                }
            }
        }

        /// Every rule, grouped by target, in code order within a group.
        pub static RULES: &[RuleInfo] = &[
            $( $( RuleInfo {
                code: RuleCode::$code,
                doc: include_str!(concat!("../../rules/", stringify!($code), ".md")),
                check: $target::$module::CHECK,
            }, )* )*
        ];
    };
}

impl RuleCode {
    /// Its index in [`RULES`] and [`all_meta`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Codes order as their text does (`DF004` before `GPU001`), whatever the
/// order of [`RULES`], so sorted findings and reports read alphabetically.
impl Ord for RuleCode {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for RuleCode {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Case-insensitive, as suppression comments and config files have always
/// been read.
impl FromStr for RuleCode {
    type Err = UnknownRuleCode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        RuleCode::ALL
            .iter()
            .copied()
            .find(|code| code.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| UnknownRuleCode(text.to_string()))
    }
}

impl fmt::Display for RuleCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RuleCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RuleCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

declare_rules! {
    compose {
        GPU001 => gpu001_count_and_device_ids,
        GPU002 => gpu002_device_reservation_without_capabilities,
        GPU003 => gpu003_capabilities_without_gpu,
        GPU005 => gpu005_legacy_nvidia_runtime,
        GPU006 => gpu006_training_without_gpu_reservation,
        GPU011 => gpu011_gpu_resource_in_deploy_resources,
        PROJ001 => proj001_project_refused,
        SHM001 => shm001_default_shm,
        SHM003 => shm003_malformed_shm_size,
        SHM005 => shm005_ignored_shm_size,
        SHM006 => shm006_ipc_none,
        SHM007 => shm007_ipc_donor_not_shareable,
        SHM009 => shm009_build_shm_size_only,
        SHM011 => shm011_invalid_ipc_mode,
        ULIM001 => ulim001_memlock_not_unlimited,
        ULIM003 => ulim003_unlimited_stack,
        DF004 => df004_legacy_runtime_without_visible_devices,
    }
    kubernetes {
        K8S001 => k8s001_gpu_request_without_limit,
        K8S002 => k8s002_gpu_request_limit_mismatch,
        K8S003 => k8s003_non_integer_gpu_count,
        K8S004 => k8s004_gpu_pod_without_shm_volume,
        K8S005 => k8s005_shm_volume_not_memory_backed,
        K8S006 => k8s006_shm_volume_without_size_limit,
        K8S008 => k8s008_quantity_unit_mistake,
        K8S009 => k8s009_host_ipc_on_gpu_pod,
        K8S013 => k8s013_shm_volume_not_mounted,
    }
    dockerfile {
        DF000 => df000_syntax_error,
        DF001 => df001_gpu_base_image_unpinned,
        DF003 => df003_torch_wheel_accelerator_mismatch,
        DF005 => df005_cuda_visible_devices_in_image,
        DF007 => df007_driver_capabilities_without_compute,
    }
    // Several targets: one implementation of the logic, an adapter per target.
    shared {
        GPU004 => gpu004_parallel_size_above_gpus,
        NCCL001 => nccl001_shm_transport_disabled,
        NCCL002 => nccl002_p2p_disabled,
        NCCL003 => nccl003_debugging_variable,
        SHM002 => shm002_shm_size_too_small,
    }
    slurm {
        SLURM001 => slurm001_unexpanded_variable,
        SLURM002 => slurm002_directive_after_command,
        SLURM003 => slurm003_gpus_per_node_mismatch,
        SLURM004 => slurm004_multi_node_without_rendezvous,
        SLURM005 => slurm005_container_without_nv,
    }
    suppression {
        SUP001 => sup001_unused_suppression,
        SUP002 => sup002_invalid_suppression,
    }
}

/// Metadata of every rule, parsed once from the docs.
pub fn all_meta() -> &'static [RuleMeta] {
    static META: OnceLock<Vec<RuleMeta>> = OnceLock::new();
    META.get_or_init(|| {
        RULES
            .iter()
            .map(|r| {
                RuleMeta::parse(r.doc)
                    .unwrap_or_else(|e| panic!("rules/{}.md has bad front matter: {e}", r.code))
            })
            .collect()
    })
}

pub fn rule(code: RuleCode) -> (&'static RuleInfo, &'static RuleMeta) {
    (&RULES[code.index()], &all_meta()[code.index()])
}

/// Where a rule's doc is published: `rules/<CODE>.md` in the repository.
pub fn doc_url(code: RuleCode) -> String {
    format!("{}/blob/main/rules/{code}.md", env!("CARGO_PKG_REPOSITORY"))
}

pub fn meta(code: RuleCode) -> &'static RuleMeta {
    &all_meta()[code.index()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_from_user_text_case_insensitively() {
        assert_eq!("SHM001".parse(), Ok(RuleCode::SHM001));
        assert_eq!("shm001".parse(), Ok(RuleCode::SHM001));
        let unknown = "SHM999".parse::<RuleCode>().unwrap_err();
        assert_eq!(unknown.to_string(), "`SHM999` is not a gpulint rule code");
        // A prefix is a selector, not a code.
        assert!("SHM".parse::<RuleCode>().is_err());
    }

    #[test]
    fn every_code_is_its_rules_and_reads_back() {
        assert_eq!(RuleCode::ALL.len(), RULES.len());
        for (index, (info, meta)) in RULES.iter().zip(all_meta()).enumerate() {
            assert_eq!(info.code.index(), index);
            assert_eq!(
                meta.code, info.code,
                "rules/{}.md names another code",
                info.code
            );
            assert_eq!(info.code.as_str().parse(), Ok(info.code));
            assert_eq!(info.code.to_string(), info.code.as_str());
            let json = serde_json::to_string(&info.code).unwrap();
            assert_eq!(json, format!("\"{}\"", info.code));
            assert_eq!(serde_json::from_str::<RuleCode>(&json).unwrap(), info.code);
        }
    }

    #[test]
    fn codes_sort_as_their_text_not_as_declared() {
        // DF004 is declared among the compose rules, before K8S001.
        let mut codes = vec![RuleCode::K8S001, RuleCode::DF004, RuleCode::SHM001];
        codes.sort();
        assert_eq!(codes, [RuleCode::DF004, RuleCode::K8S001, RuleCode::SHM001]);
    }
}
