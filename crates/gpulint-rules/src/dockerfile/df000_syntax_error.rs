//! DF000: a Dockerfile that BuildKit cannot parse.

use crate::{Check, DockerfileContext, Reporter};

pub const CHECK: Check = Check::dockerfile(check);

fn check(cx: &DockerfileContext, out: &mut Reporter) {
    for error in &cx.model.syntax.errors {
        out.report(error.range, error.message.clone())
            .note("`docker build` stops here with `failed to solve: dockerfile parse error`, before any layer is built")
            .help("correct the instruction (see the Dockerfile reference: https://docs.docker.com/reference/dockerfile/)");
    }
}
