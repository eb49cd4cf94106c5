//! Ulimits GPU jobs need (`memlock`) or trip over (`stack`).

pub(crate) mod ulim001_memlock_not_unlimited;
pub(crate) mod ulim003_unlimited_stack;
