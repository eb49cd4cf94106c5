//! GPU006: a distributed training workload with no GPU reservation.

use crate::fix::Applicability;
use crate::helpers::{gpu_reason, nvidia_reservation};
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "training-without-gpu-reservation",
    severity: Warning,
    fix: Unsafe,
    summary: "distributed training workload with no GPU reservation",
    sources: [
        "Docker docs, Compose GPU support",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        if service.gpu.is_reserved()
            || !service.misplaced_gpu_resources.is_empty()
            // A reservation written wrong: PROJ001 points at it.
            || service.malformed_devices.is_some()
            || !service.gpu.is_distributed()
        {
            continue;
        }
        let fix = cx.insert_fix(
            service,
            &["deploy", "resources", "reservations", "devices"],
            nvidia_reservation(),
            "Reserve all NVIDIA GPUs under `deploy.resources.reservations.devices`",
            Applicability::Unsafe,
        );
        out.report(
            cx.range(service.key),
            format!("service `{}` runs a GPU training workload but reserves no GPU", service.name),
        )
        .label(format!("the service {}", gpu_reason(service)))
        .note("without a reservation the container sees no GPU: `torch.cuda.is_available()` is False and NCCL reports `no CUDA-capable device is detected` (unless the host's default runtime happens to be nvidia)")
        .help("add `deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]` (or `gpus: all`)")
        .fix(fix);
    }
}
