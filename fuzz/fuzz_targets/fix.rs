//! Fixes: on text the linter accepts, `--fix --unsafe-fixes` in memory.
//! Every fix the linter offers must pass its own verification (a failed
//! one is a bug in gpulint), and the fixed text must still lint.
//!
//! The first byte picks the file name the rest is linted as
//! (`common::KINDS`: `c` compose, `k` manifest, `d` Dockerfile, ...).
#![no_main]

#[path = "common.rs"]
mod common;

use gpulint::engine::fix::{FixMode, fix_text};
use gpulint::engine::lint_text;
use libfuzzer_sys::fuzz_target;

/// Refusals that are not bugs: verification needs the file's expansion.
const TOO_LARGE: &str = "the file is too large to verify the fix";

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let path = common::path(common::kind_name(kind));
    let config = common::config_for(text);
    let mode = FixMode { unsafe_fixes: true };
    // Text the linter rejects as a whole (not YAML, a template) has no fixes.
    let Ok(outcome) = fix_text(text, &path, config, mode) else {
        return;
    };
    let failed: Vec<_> = outcome
        .failed
        .iter()
        .filter(|f| f.reason != TOO_LARGE)
        .filter(|f| {
            !(f.code == gpulint::rules::RuleCode::DF007 && common::has_quote_spanning_lines(text))
        })
        .collect();
    if !failed.is_empty() {
        panic!(
            "{} fix(es) offered for {} failed verification: {failed:#?}\n--- text ---\n{text}",
            failed.len(),
            path.display()
        );
    }
    if let Err(error) = lint_text(&outcome.fixed_text, &path, config) {
        panic!(
            "the fixed text no longer lints: {}\n--- fixed ---\n{}",
            error.message, outcome.fixed_text
        );
    }
});
