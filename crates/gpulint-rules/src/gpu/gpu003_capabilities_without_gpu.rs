//! GPU003: device `capabilities` that select no NVIDIA GPU.

use crate::fix::{Applicability, Edit};
use crate::helpers::device_request_site;
use crate::model::compose::NVIDIA_CAPABILITIES;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "capabilities-without-gpu",
    severity: Warning,
    fix: Safe,
    summary: "device capabilities that select no NVIDIA GPU",
    sources: [
        "moby `daemon/devices_nvidia_linux.go` (capability set)",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for request in &service.device_requests {
            let Some(caps) = &request.capabilities else {
                continue;
            };
            let driver = request
                .driver
                .as_ref()
                .map(|d| d.value.to_ascii_lowercase());
            if !matches!(driver.as_deref(), None | Some("nvidia")) || caps.value.is_empty() {
                continue;
            }
            if caps
                .value
                .iter()
                .any(|c| NVIDIA_CAPABILITIES.contains(&c.to_ascii_lowercase().as_str()))
            {
                continue;
            }
            let listed = caps
                .value
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let fix = device_request_site(cx, service, request).and_then(|site| {
                let mut path: Vec<&str> = site.iter().map(String::as_str).collect();
                path.push("capabilities");
                let edits = replace_with_gpu(cx, caps.node)?;
                cx.edit_fix(
                    service,
                    caps.node,
                    &path,
                    edits,
                    &[&path],
                    "Use `capabilities: [gpu]`",
                    Applicability::Safe,
                )
            });
            out.report(
                cx.range(caps.node),
                format!("capabilities {listed} of service `{}` select no NVIDIA GPU", service.name),
            )
            .label("the NVIDIA driver answers to gpu, compute, utility, graphics, video, display, compat32, nvidia")
            .note("the engine finds no device driver for the request and the container fails to start (`could not select device driver ... with capabilities`)")
            .help("use `capabilities: [gpu]`")
            .fix(fix);
        }
    }
}

/// Edits that make a capabilities list `[gpu]`: the whole flow list, or the
/// first block item (keeping its quoting) with the others removed.
fn replace_with_gpu(cx: &ComposeContext, list: crate::model::compose::Src) -> Option<Vec<Edit>> {
    let yaml = cx.yaml(list.file);
    let editor = cx.editor(list.file);
    let list = yaml.resolve(list.node);
    // `capabilities:` with no value (a comment at most): the empty value's
    // span sits at the key, where an insertion would rename the key.
    if yaml.range(list).is_empty() {
        return None;
    }
    let items = yaml.items(list);
    if yaml.node(list).flow || items.is_empty() {
        return Some(vec![editor.replace(list, "[gpu]")]);
    }
    let mut edits = vec![editor.replace(items[0], editor.scalar_like(items[0], "gpu"))];
    for &item in &items[1..] {
        edits.push(editor.remove_item(list, item).ok()?);
    }
    Some(edits)
}
