//! SHM001: a GPU container left on the runtime's 64 MiB `/dev/shm`.

use crate::diagnostic::Severity;
use crate::helpers::shm_note;
use crate::model::container::ShmSetting;
use crate::{Check, ContainerSite, Reporter};

crate::declare_rule! {
    name: "default-shm-on-gpu-service",
    severity: Warning,
    fix: Safe,
    summary: "GPU service left on Docker's default 64 MiB /dev/shm",
    sources: [
        "NCCL troubleshooting: Docker needs `--shm-size=1g --ulimit memlock=-1`",
        "PyTorch README, Docker section: the default shared memory segment is not enough",
        "moby `daemon/container_operations_unix.go`: 64 MiB default, 0 means default",
    ],
}

/// A pod on the container runtime's default is K8S004's finding: its fix
/// adds one volume for the pod and a mount in each container that needs it.
pub const CHECK: Check = Check::containers(check).except_pods();

fn check(site: &ContainerSite, out: &mut Reporter) {
    let model = site.model;
    // Nothing the container's settings change leaves the default (a size
    // of 0 and one Compose drops are written, but leave it).
    if !model.gpu_workload || model.shm.decided_by != ShmSetting::Default {
        return;
    }
    // A `build.shm_size` the user thinks applies is SHM009's finding.
    if site.build_shm_size_only() {
        return;
    }
    // A size written on a command line that leaves the default
    // (`--shm-size=0`): adding another option is no fix.
    if site.leaves_default_shm_as_written() {
        return;
    }
    let zero = site.zero_shm_size();
    // GPUs alone are no evidence of shared memory (a media server, a
    // single-process inference server, a probe): without evidence the
    // finding only informs.
    let evidence = site.shm_evidence();
    let severity = match &evidence {
        None => Severity::Info,
        Some(_) if model.gpus.is_some() && model.launches_ranks() => Severity::Error,
        Some(_) => Severity::Warning,
    };
    let finding = match &zero {
        Some(zero) => out
            .report(
                zero.at.clone(),
                format!(
                    "{} gives {} Docker's default 64 MiB /dev/shm",
                    zero.written,
                    site.describe_gpu()
                ),
            )
            .label("0 means \"use the daemon default\", not \"unlimited\""),
        None => out
            .report(
                site.at(),
                format!(
                    "{} runs with {} 64 MiB /dev/shm",
                    site.describe_gpu(),
                    site.default_shm_owner()
                ),
            )
            .label(format!(
                "{}, but sets no {}",
                site.gpu_reason(),
                site.shm_settings()
            )),
    };
    let mut finding = site.gpu_evidence(finding);
    // Where a later file removes the size (`shm_size: !reset`), the fix is
    // not offered (the reset would undo it): say where.
    if let Some(reset) = site.reset_of("shm_size") {
        finding = finding.related(reset, "a later file resets `shm_size` here");
    }
    for other in site.merged_definitions() {
        finding = finding.related(
            other,
            format!(
                "`{}` is merged with this definition, which sets no /dev/shm either",
                model.name
            ),
        );
    }
    finding
        .severity(severity)
        .note(shm_note(evidence.as_deref()))
        .help(site.add_shm_help())
        .fix(site.add_shm_fix());
}
