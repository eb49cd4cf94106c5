//! GPU005: the legacy `runtime: nvidia`.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::helpers::nvidia_reservation;
use crate::syntax::yaml_edit::KeyOrder;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "legacy-nvidia-runtime",
    severity: Info,
    fix: Unsafe,
    summary: "GPUs requested through the legacy runtime: nvidia",
    sources: [
        "NVIDIA Container Toolkit, specialized configurations with Docker",
        "Docker docs, Compose GPU support",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(runtime) = &service.runtime else {
            continue;
        };
        if runtime.value != "nvidia" {
            continue;
        }
        let has_modern = !service.device_requests.is_empty() || service.gpus.is_some();
        let fix = runtime.key.and_then(|key| {
            let definition = cx.definition_in(service, key.file)?;
            let map = cx.resolve(definition.map);
            let removal = cx.editor(key.file).remove_entry(map.node, key.node).ok()?;
            if has_modern {
                return cx.edit_fix(
                    service,
                    key,
                    &[],
                    vec![removal],
                    &[&["runtime"]],
                    "Remove `runtime: nvidia`",
                    Applicability::Unsafe,
                );
            }
            let edits = cx.chain_edits(service, key.file, removal, |editor, map| {
                let path = ["deploy", "resources", "reservations", "devices"];
                editor
                    .insert_path(map, &path, nvidia_reservation(), KeyOrder::ComposeService)
                    .ok()
                    .map(|p| p.edit)
            })?;
            cx.edit_fix(
                service,
                key,
                &[],
                edits,
                &[
                    &["runtime"],
                    &["deploy", "resources", "reservations", "devices"],
                ],
                "Replace `runtime: nvidia` with a reservation of all NVIDIA GPUs",
                Applicability::Unsafe,
            )
        });
        let diagnostic = out.report(
            cx.setting_range(runtime),
            if has_modern {
                format!(
                    "`runtime: nvidia` of service `{}` is redundant next to its device reservation",
                    service.name
                )
            } else {
                format!(
                    "service `{}` gets GPUs through the legacy `runtime: nvidia`",
                    service.name
                )
            },
        );
        if has_modern {
            diagnostic
                .severity(Severity::Info)
                .note("the device reservation already gives the container its GPUs; the runtime line only adds a dependency on the daemon's runtime list")
                .help("remove `runtime: nvidia`")
                .fix(fix);
        } else {
            // Working wherever the runtime is registered (and the Jetson
            // convention): it informs.
            diagnostic
                .severity(Severity::Info)
                .note("it fails with `unknown or invalid runtime name: nvidia` on hosts without that runtime registered, and which GPUs the container sees then depends on NVIDIA_VISIBLE_DEVICES in the image")
                .help("reserve GPUs instead: `deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]`")
                .fix(fix);
        }
    }
}
