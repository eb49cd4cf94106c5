//! DF001: a CUDA, NGC or GPU-framework base image with no tag or a floating one.

use crate::diagnostic::Severity;
use crate::model::workload::split_image;
use crate::{Check, DockerfileContext, Reporter};
use foldhash::{HashMap, HashMapExt};

crate::declare_rule! {
    name: "gpu-base-image-unpinned",
    severity: Info,
    fix: None,
    summary: "CUDA, NGC or GPU-framework base image without a tag or with a floating one",
    sources: [
        "nvidia/cuda image README and support policy",
        "NVIDIA/nvidia-docker #1454, #1735, #1768",
    ],
}

pub const CHECK: Check = Check::dockerfile(check);

/// `nvidia/cuda` under any registry prefix (Docker Hub, NGC, mirrors).
fn is_nvidia_cuda(name: &str) -> bool {
    name == "nvidia/cuda" || name.ends_with("/nvidia/cuda")
}

/// NGC's framework containers, which NGC tags by release only: there is no
/// `latest` (triton-inference-server/server#5359: `manifest unknown`).
fn is_ngc_framework(name: &str) -> bool {
    [
        "nvcr.io/nvidia/pytorch",
        "nvcr.io/nvidia/tensorflow",
        "nvcr.io/nvidia/tritonserver",
        "nvcr.io/nvidia/nemo",
        "nvcr.io/nvidia/cuda",
    ]
    .contains(&name)
}

fn check(cx: &DockerfileContext, out: &mut Reporter) {
    for index in 0..cx.model.stages.len() {
        let Some(base) = cx.model.base(index, &HashMap::new()) else {
            continue;
        };
        // Stage references are checked at the stage that names the image.
        if base.stage != index || !base.complete || base.accelerator().is_none() {
            continue;
        }
        let lower = base.image.to_ascii_lowercase();
        if lower.contains('@') {
            continue; // pinned by digest
        }
        let (name, tag) = split_image(&lower);
        let floating = match tag {
            None => true,
            Some(t) => t == "latest" || t.starts_with("latest-") || t.starts_with("nightly"),
        };
        if !floating {
            continue;
        }
        let removed = (is_nvidia_cuda(name) || is_ngc_framework(name))
            && matches!(tag, None | Some("latest"));
        let written = match tag {
            None => "no tag (`latest`)".to_string(),
            Some(t) => format!("the floating tag `{t}`"),
        };
        let message = if removed {
            format!(
                "base image `{}` does not exist: {name} has no `latest` tag",
                base.image
            )
        } else {
            format!("GPU base image `{}` has {written}", base.image)
        };
        let finding = out
            .report(base.range, message)
            .label(format!("the base of {}", cx.describe_stage(index)));
        if removed {
            finding
                .severity(Severity::Error)
                .note(format!("NVIDIA publishes no `latest` tag of {name} (it removed nvidia/cuda's; NGC tags by release): `docker build` fails with `manifest for {name}:latest not found: manifest unknown`"))
                .help("pin a full tag such as `nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04` that matches your driver and framework");
        } else {
            // It builds today: a reproducibility risk, reported as information.
            finding
                .severity(Severity::Info)
                .note("a floating tag changes CUDA, cuDNN and framework versions under you: a rebuild can stop matching the host driver or your wheels, and NVIDIA deletes end-of-life CUDA tags")
                .help("pin a versioned tag (and ideally a digest, `image:tag@sha256:...`)");
        }
    }
}
