//! Compose projects Compose itself refuses.

pub(crate) mod proj001_project_refused;
