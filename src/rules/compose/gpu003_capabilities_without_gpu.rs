//! GPU003: device `capabilities` that select no NVIDIA GPU.

use crate::model::compose::NVIDIA_CAPABILITIES;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for request in &service.device_requests {
            let Some(caps) = &request.capabilities else { continue };
            let driver = request.driver.as_ref().map(|d| d.value.to_ascii_lowercase());
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
            let listed = caps.value.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
            out.report(
                cx.range(caps.node),
                format!("capabilities {listed} of service `{}` select no NVIDIA GPU", service.name),
            )
            .label("the NVIDIA driver answers to gpu, compute, utility, graphics, video, display, compat32, nvidia")
            .note("the engine finds no device driver for the request and the container fails to start (`could not select device driver ... with capabilities`)")
            .help("use `capabilities: [gpu]`");
        }
    }
}
