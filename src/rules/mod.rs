//! The rule registry. Each rule is one file under `src/rules/<target>/`, one
//! doc `rules/<CODE>.md` (whose front matter is the rule's metadata) and one
//! fixture folder `fixtures/<CODE>/`. Adding a rule means adding one line to
//! [`declare_rules!`] below.

pub mod context;
pub mod helpers;
mod meta;

pub use context::{ComposeContext, Reporter, RuleSettings};
pub use meta::{FixKind, RuleMeta, Target};

use std::sync::OnceLock;

/// How a rule is run.
#[derive(Clone, Copy)]
pub enum Check {
    /// Called once per compose document.
    Compose(fn(&ComposeContext, &mut Reporter)),
    /// Reported by the engine itself (suppression comments).
    Engine,
}

pub struct RuleInfo {
    pub code: &'static str,
    pub doc: &'static str,
    pub check: Check,
}

macro_rules! declare_rules {
    ($( $target:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        $( pub mod $target { $( pub mod $module; )* } )*
        /// Every rule, in code order.
        pub static RULES: &[RuleInfo] = &[
            $( $( RuleInfo {
                code: stringify!($code),
                doc: include_str!(concat!("../../rules/", stringify!($code), ".md")),
                check: $target::$module::CHECK,
            }, )* )*
        ];
    };
}

declare_rules! {
    compose {
        GPU001 => gpu001_count_and_device_ids,
        GPU002 => gpu002_device_reservation_without_capabilities,
        GPU003 => gpu003_capabilities_without_gpu,
        GPU005 => gpu005_legacy_nvidia_runtime,
        GPU006 => gpu006_training_without_gpu_reservation,
        GPU011 => gpu011_gpu_resource_in_deploy_resources,
        NCCL001 => nccl001_shm_transport_disabled,
        NCCL002 => nccl002_p2p_disabled,
        NCCL003 => nccl003_debugging_variable,
        SHM001 => shm001_default_shm,
        SHM002 => shm002_shm_size_too_small,
        SHM003 => shm003_malformed_shm_size,
        SHM005 => shm005_ignored_shm_size,
        SHM006 => shm006_ipc_none,
        SHM007 => shm007_ipc_donor_not_shareable,
        SHM009 => shm009_build_shm_size_only,
        ULIM001 => ulim001_memlock_not_unlimited,
        ULIM003 => ulim003_unlimited_stack,
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

pub fn rule(code: &str) -> Option<(&'static RuleInfo, &'static RuleMeta)> {
    let index = RULES
        .iter()
        .position(|r| r.code.eq_ignore_ascii_case(code))?;
    Some((&RULES[index], &all_meta()[index]))
}

pub fn meta(code: &str) -> &'static RuleMeta {
    rule(code).map(|(_, m)| m).expect("registered rule code")
}
