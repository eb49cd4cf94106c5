//! Kustomize overlays: a tree of files from the input (see
//! `overlay_checks.rs`) built, linted and inspected as gpulint does; no
//! panic, no hang, every finding inside the file it names.
#![no_main]

#[path = "common.rs"]
mod common;
#[path = "overlay_checks.rs"]
mod overlay_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    overlay_checks::run(data, common::config_for(""));
});
