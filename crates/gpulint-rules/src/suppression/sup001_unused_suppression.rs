//! SUP001: a suppression comment that suppresses nothing.
//!
//! Reported by the engine's suppression pass (`engine::suppress`), which
//! knows which codes each comment matched.

use crate::Check;

pub const CHECK: Check = Check::ENGINE;
