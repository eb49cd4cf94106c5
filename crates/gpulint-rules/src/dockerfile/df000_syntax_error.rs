//! DF000: a Dockerfile that BuildKit cannot parse.

use crate::{Check, DockerfileContext, Reporter};

crate::declare_rule! {
    name: "dockerfile-syntax-error",
    severity: Error,
    fix: None,
    summary: "Dockerfile that BuildKit cannot parse",
    sources: [
        "Dockerfile reference",
        "BuildKit frontend/dockerfile/parser",
    ],
}

pub const CHECK: Check = Check::dockerfile(check);

fn check(cx: &DockerfileContext, out: &mut Reporter) {
    for error in &cx.model.syntax.errors {
        out.report(error.range, error.message.clone())
            .note("`docker build` stops here with `failed to solve: dockerfile parse error`, before any layer is built")
            .help("correct the instruction (see the Dockerfile reference: https://docs.docker.com/reference/dockerfile/)");
    }
}
