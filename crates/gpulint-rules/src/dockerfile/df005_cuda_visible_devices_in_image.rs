//! DF005: `ENV CUDA_VISIBLE_DEVICES` baked into an image.

use crate::fix::Applicability;
use crate::{Check, DockerfileContext, Reporter};

crate::declare_rule! {
    name: "cuda-visible-devices-in-image",
    severity: Warning,
    fix: Unsafe,
    summary: "ENV CUDA_VISIBLE_DEVICES baked into an image",
    sources: [
        "CUDA C Programming Guide, CUDA_VISIBLE_DEVICES",
        "NVIDIA Container Toolkit, GPU enumeration",
    ],
}

pub const CHECK: Check = Check::dockerfile(check);

fn check(cx: &DockerfileContext, out: &mut Reporter) {
    for setting in cx.model.env_settings() {
        if setting.pair.key.text != "CUDA_VISIBLE_DEVICES" {
            continue;
        }
        out.report(
                setting.pair.range,
                format!("{} fixes which GPUs CUDA may use", cx.describe_stage(setting.stage)),
            )
            .label("every container of this image sees only these device indices")
            .note("the devices a container gets are chosen at run time (`gpus`, device reservations, the Kubernetes device plugin); a baked index hides the GPUs it was given, so a job on GPU 3 finds `no CUDA-capable device is detected` or all ranks land on one GPU")
            .help("remove it and select GPUs when the container runs (`--gpus`, `deploy.resources.reservations.devices`, `nvidia.com/gpu` limits)")
            .fix(cx.remove_env_fix(&setting, Applicability::Unsafe));
    }
}
