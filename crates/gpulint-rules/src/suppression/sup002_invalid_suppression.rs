//! SUP002: a suppression comment gpulint cannot honour (unknown code, no codes, no reason).
//!
//! Reported by the engine's suppression pass (`engine::suppress`).

use crate::Check;

pub const CHECK: Check = Check::ENGINE;
