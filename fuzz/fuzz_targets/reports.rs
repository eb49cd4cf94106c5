//! Report formats on hostile names and `.env` values: a compose project in
//! memory (its file's path, the `.env`, the service names and their lines
//! from the input) is linted and rendered as text, concise, github, json,
//! sarif, gitlab and junit; no line may start a GitHub workflow command
//! and no value the `.env` sets that gpulint hides may be shown.
//! `fuzz_targets/report_checks.rs` holds the checks (shared with
//! tests/it/fuzz_regressions.rs) and describes the input.
#![no_main]

#[path = "common.rs"]
mod common;
#[path = "report_checks.rs"]
mod report_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    report_checks::run(data, common::config_for(""));
});
