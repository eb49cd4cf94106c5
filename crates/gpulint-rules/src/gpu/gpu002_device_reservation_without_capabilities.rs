//! GPU002: a `deploy.resources.reservations.devices` entry without `capabilities`.

use crate::fix::Applicability;
use crate::helpers::device_request_site;
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "device-reservation-without-capabilities",
    severity: Error,
    fix: Safe,
    summary: "device reservation without capabilities",
    sources: [
        "compose-spec schema (`devices` items require `capabilities`)",
        "Docker docs, Compose GPU support",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for request in &service.device_requests {
            if request.from_gpus_field || request.capabilities.is_some() {
                continue;
            }
            let at = cx.range(request.node);
            let text = cx.source(request.node);
            let first_line_end =
                at.range.start as usize + text.find(['\n', '\r']).unwrap_or(text.len());
            let start = at.range.start as usize;
            let fix = device_request_site(cx, service, request).and_then(|site| {
                let mut path: Vec<&str> = site.iter().map(String::as_str).collect();
                path.push("capabilities");
                cx.insert_fix_in(
                    service,
                    request.node.file,
                    &path,
                    NewNode::scalar("[gpu]"),
                    "Add `capabilities: [gpu]`",
                    Applicability::Safe,
                )
            });
            out.report(
                crate::diagnostic::At {
                    range: crate::text::TextRange::new(start, first_line_end),
                    file: at.file,
                },
                format!("device reservation of service `{}` has no `capabilities`", service.name),
            )
            .label("Compose requires `capabilities` on every device request")
            .note("`docker compose up` rejects the service (`capabilities` is required by the Compose schema), so the container never gets its GPU")
            .help("add `capabilities: [gpu]` to the entry")
            .fix(fix);
        }
    }
}
