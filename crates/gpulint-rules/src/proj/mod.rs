//! Compose projects Compose itself refuses.

pub mod proj001_project_refused;
