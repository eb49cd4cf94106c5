//! Suppression comments, reported by the engine.

pub mod sup001_unused_suppression;
pub mod sup002_invalid_suppression;
