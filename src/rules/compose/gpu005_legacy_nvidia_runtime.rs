//! GPU005: the legacy `runtime: nvidia`.

use crate::diagnostic::Severity;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(runtime) = &service.runtime else { continue };
        if runtime.value != "nvidia" {
            continue;
        }
        let has_modern = !service.device_requests.is_empty() || service.gpus.is_some();
        let diagnostic = out.report(
            cx.setting_range(runtime),
            if has_modern {
                format!("`runtime: nvidia` of service `{}` is redundant next to its device reservation", service.name)
            } else {
                format!("service `{}` gets GPUs through the legacy `runtime: nvidia`", service.name)
            },
        );
        if has_modern {
            diagnostic
                .severity(Severity::Info)
                .note("the device reservation already gives the container its GPUs; the runtime line only adds a dependency on the daemon's runtime list")
                .help("remove `runtime: nvidia`");
        } else {
            diagnostic
                .severity(Severity::Warning)
                .note("it fails with `unknown or invalid runtime name: nvidia` on hosts without that runtime registered, and which GPUs the container sees then depends on NVIDIA_VISIBLE_DEVICES in the image")
                .help("reserve GPUs instead: `deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]`");
        }
    }
}
