//! Dockerfiles: the syntax parser, the model built from it (its stages,
//! its leaves as fix verification compares them), and the lint.
#![no_main]

#[path = "common.rs"]
mod common;

use gpulint::model::dockerfile::DockerfileModel;
use gpulint::syntax::dockerfile::Dockerfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let syntax = Dockerfile::parse(text);
    for instruction in &syntax.instructions {
        let _ = instruction.words();
        let _ = instruction.key_values();
    }
    let model = DockerfileModel::from_syntax(syntax);
    let _ = model.leaves();
    let config = common::config_for(text);
    let _ = gpulint::engine::lint_text(text, &common::path("Dockerfile"), config);
    let _ = gpulint::engine::inspect_text(text, &common::path("Dockerfile"), config);
});
