//! SUP001: a suppression comment that suppresses nothing.
//!
//! Reported by the engine's suppression pass (`engine::suppress`), which
//! knows which codes each comment matched.

use crate::Check;

crate::declare_rule! {
    name: "unused-suppression",
    severity: Warning,
    fix: None,
    summary: "suppression comment that suppresses nothing",
    sources: [
        "ruff RUF100 (unused-noqa)",
    ],
}

pub const CHECK: Check = Check::ENGINE;
