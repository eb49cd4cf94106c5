//! Suppression comments, reported by the engine.

pub(crate) mod sup001_unused_suppression;
pub(crate) mod sup002_invalid_suppression;
