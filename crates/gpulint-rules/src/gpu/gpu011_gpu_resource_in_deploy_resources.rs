//! GPU011: `nvidia.com/gpu` (a Kubernetes resource name) under Compose's `deploy.resources`.

use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "gpu-resource-in-deploy-resources",
    severity: Error,
    fix: None,
    summary: "nvidia.com/gpu written under Compose's deploy.resources",
    sources: [
        "compose-spec schema, `deploy.resources`",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for resource in &service.misplaced_gpu_resources {
            let count = cx.source(resource.node);
            out.report(
                cx.setting_range(resource),
                format!("`{}` is not a Compose resource; service `{}` gets no GPU from it", resource.value, service.name),
            )
            .label("a Kubernetes resource name; Compose does not know it")
            .note(format!("`docker compose` rejects the file (`Additional property {} is not allowed`); GPUs are reserved as devices", resource.value))
            .help(format!(
                "replace it with `devices: [{{driver: nvidia, count: {count}, capabilities: [gpu]}}]` under `deploy.resources.reservations`"
            ));
        }
    }
}
