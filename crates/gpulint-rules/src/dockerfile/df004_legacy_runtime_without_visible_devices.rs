//! DF004: a service that asks for GPUs only through the legacy
//! `runtime: nvidia` and builds its image on a base that does not set
//! `NVIDIA_VISIBLE_DEVICES`, so the runtime gives it no GPU.

use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "legacy-runtime-without-visible-devices",
    severity: Warning,
    fix: None,
    summary: "runtime: nvidia on an image built from a non-CUDA base that does not set NVIDIA_VISIBLE_DEVICES",
    sources: [
        "NVIDIA Container Toolkit, specialized configurations with Docker (NVIDIA_VISIBLE_DEVICES)",
        "NVIDIA/nvidia-container-toolkit internal/config/image",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(runtime) = service.runtime.as_ref().filter(|r| r.value == "nvidia") else {
            continue;
        };
        // A device reservation or `gpus:` makes the engine set the variable.
        if !service.device_requests.is_empty() || service.gpus.is_some() {
            continue;
        }
        let Some(built) = &service.built_image else {
            continue;
        };
        if built.base.accelerator().is_some()
            || built.base.is_scratch()
            || !built.base.complete
            || built.sets_visible_devices
            || service.env("NVIDIA_VISIBLE_DEVICES").is_some()
        {
            continue;
        }
        let message = format!(
            "based on `{}`, which does not set NVIDIA_VISIBLE_DEVICES",
            built.base.image
        );
        out
            .report(
                cx.setting_range(runtime),
                format!("service `{}` gets no GPU from `runtime: nvidia`: its image does not set NVIDIA_VISIBLE_DEVICES", service.name),
            )
            .label(format!("the image is built from {}", built.describe_dockerfile()))
            .note("the legacy NVIDIA runtime injects GPUs only when NVIDIA_VISIBLE_DEVICES is set in the image or the environment (CUDA base images set it to `all`); without it the container runs like plain runc, and frameworks report `no CUDA-capable device is detected`")
            .help("reserve GPUs instead (`deploy.resources.reservations.devices` or `gpus: all`; GPU005's fix does this), or set `NVIDIA_VISIBLE_DEVICES: all` in the service's `environment`")
            .built_image_label(cx, service, message);
    }
}
