//! YAML: any text linted as a compose file (by name), as Kubernetes
//! manifests found by walking a directory, and as a GitHub workflow; plus
//! the runtime inspection (`gpulint inspect`) of the same text.
#![no_main]

#[path = "common.rs"]
mod common;

use gpulint::engine::{self, Scope};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = common::config_for(text);
    let compose = common::path("compose.yaml");
    let _ = engine::lint_text(text, &compose, config);
    let _ = engine::inspect_text(text, &compose, config);
    let manifest = common::path("k8s/deployment.yaml");
    let _ = engine::is_manifest_candidate(text);
    let _ = engine::check_text_in_scope(manifest, text.to_string(), config, Scope::ManifestsOnly);
    let workflow = common::path(".github/workflows/ci.yml");
    let _ = engine::lint_text(text, &workflow, config);
});
