//! Rule codes, below every layer: a finding names its rule by
//! [`RuleCode`], and the list of rules ([`for_each_rule!`]) is the one
//! place a new rule is registered. `rules` builds its table (`RULES`: the
//! doc and the check of each code) from the same list, so codes and rules
//! cannot disagree, and [`crate::diagnostic`] needs nothing from `rules`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Hands every rule, grouped by family (the module under `src/rules/`
/// that holds it, named after the code's prefix: `SHM` in `shm`, `K8S` in
/// `k8s`, `DF` in `dockerfile`), as `CODE => module`, to the macro named.
/// Adding a rule is one line here (`scripts/new_rule.py` writes it).
/// Exported for the integration tests, which generate a test per rule
/// from it (`gpulint::for_each_rule!`); not part of the library's API.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_rule {
    ($then:ident) => {
        $then! {
            shm {
                SHM001 => shm001_default_shm,
                SHM002 => shm002_shm_size_too_small,
                SHM003 => shm003_malformed_shm_size,
                SHM005 => shm005_ignored_shm_size,
                SHM006 => shm006_ipc_none,
                SHM007 => shm007_ipc_donor_not_shareable,
                SHM009 => shm009_build_shm_size_only,
                SHM011 => shm011_invalid_ipc_mode,
            }
            gpu {
                GPU001 => gpu001_count_and_device_ids,
                GPU002 => gpu002_device_reservation_without_capabilities,
                GPU003 => gpu003_capabilities_without_gpu,
                GPU004 => gpu004_parallel_size_above_gpus,
                GPU005 => gpu005_legacy_nvidia_runtime,
                GPU006 => gpu006_training_without_gpu_reservation,
                GPU011 => gpu011_gpu_resource_in_deploy_resources,
                GPU012 => gpu012_gpus_value_refused,
                GPU013 => gpu013_option_word_taken_as_image,
            }
            nccl {
                NCCL001 => nccl001_shm_transport_disabled,
                NCCL002 => nccl002_p2p_disabled,
                NCCL003 => nccl003_debugging_variable,
            }
            ulim {
                ULIM001 => ulim001_memlock_not_unlimited,
                ULIM003 => ulim003_unlimited_stack,
            }
            k8s {
                K8S001 => k8s001_gpu_request_without_limit,
                K8S002 => k8s002_gpu_request_limit_mismatch,
                K8S003 => k8s003_non_integer_gpu_count,
                K8S004 => k8s004_gpu_pod_without_shm_volume,
                K8S005 => k8s005_shm_volume_not_memory_backed,
                K8S006 => k8s006_shm_volume_without_size_limit,
                K8S008 => k8s008_quantity_unit_mistake,
                K8S009 => k8s009_host_ipc_on_gpu_pod,
                K8S013 => k8s013_shm_volume_not_mounted,
                K8S014 => k8s014_manifest_refused,
            }
            dockerfile {
                DF000 => df000_syntax_error,
                DF001 => df001_gpu_base_image_unpinned,
                DF003 => df003_torch_wheel_accelerator_mismatch,
                DF004 => df004_legacy_runtime_without_visible_devices,
                DF005 => df005_cuda_visible_devices_in_image,
                DF007 => df007_driver_capabilities_without_compute,
            }
            slurm {
                SLURM001 => slurm001_unexpanded_variable,
                SLURM002 => slurm002_directive_after_command,
                SLURM003 => slurm003_gpus_per_node_mismatch,
                SLURM004 => slurm004_multi_node_without_rendezvous,
                SLURM005 => slurm005_container_without_nv,
            }
            proj {
                PROJ001 => proj001_project_refused,
            }
            devcontainer {
                DEV001 => dev001_devcontainer_value_refused,
            }
            suppression {
                SUP001 => sup001_unused_suppression,
                SUP002 => sup002_invalid_suppression,
            }
        }
    };
}
pub use for_each_rule;

macro_rules! declare_codes {
    ($( $target:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        /// A rule's code. Rust source names a rule by its variant, so a
        /// misspelt code does not compile; user input is parsed with
        /// [`str::parse`] at the boundary. Variants are in the order of
        /// [`for_each_rule!`] (and of `rules::RULES`).
        #[allow(clippy::upper_case_acronyms)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RuleCode {
            $( $( $code, )* )*
        }

        impl RuleCode {
            /// Every code, in `rules::RULES` order.
            pub const ALL: &'static [RuleCode] = &[ $( $( RuleCode::$code, )* )* ];

            /// The code as users write it (`GPU001`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $( RuleCode::$code => stringify!($code), )* )*
                }
            }
        }
    };
}

for_each_rule!(declare_codes);

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

impl RuleCode {
    /// Its index in `gpulint_rules::RULES` and `gpulint_rules::all_meta`.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Codes order as their text does (`DF004` before `GPU001`), whatever the
/// order of `gpulint_rules::RULES`, so sorted findings and reports read
/// alphabetically.
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
