//! SUP002: a suppression comment gpulint cannot honour (unknown code, no codes, no reason).
//!
//! Reported by the engine's suppression pass (`engine::suppress`).

use crate::Check;

crate::declare_rule! {
    name: "invalid-suppression",
    severity: Warning,
    fix: None,
    summary: "suppression comment gpulint cannot honour",
    sources: [],
}

pub const CHECK: Check = Check::ENGINE;
