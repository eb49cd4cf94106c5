//! Ulimits GPU jobs need (`memlock`) or trip over (`stack`).

pub mod ulim001_memlock_not_unlimited;
pub mod ulim003_unlimited_stack;
