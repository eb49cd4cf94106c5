//! SHM006: IPC mode `none` (`ipc: none`, `--ipc none`) on a GPU
//! container, which leaves it no /dev/shm at all.

use crate::model::container::{ShmKind, ShmSetting};
use crate::{Check, ContainerSite, Reporter};

crate::declare_rule! {
    name: "ipc-none-on-gpu-service",
    severity: Error,
    fix: None,
    summary: "ipc: none on a GPU service, which leaves it without /dev/shm",
    sources: [
        "moby `daemon/oci_linux.go`: no /dev/shm mount for IPC mode none",
    ],
}

/// A pod has no IPC mode `none` (only `hostIPC`).
pub const CHECK: Check = Check::containers(check).except_pods();

fn check(site: &ContainerSite, out: &mut Reporter) {
    let model = site.model;
    let shm = &model.shm;
    if (shm.decided_by, shm.kind) != (ShmSetting::Ipc, ShmKind::Missing) || !model.gpu_workload {
        return;
    }
    let Some(at) = site.shm_decided_at() else {
        return;
    };
    let finding = out
        .report(
            at,
            format!(
                "`{}` leaves {} without any /dev/shm",
                shm.from,
                site.describe_gpu()
            ),
        )
        .label(format!("{} {}", site.noun(), site.gpu_reason()));
    site.gpu_evidence(finding)
        .note("NCCL, DataLoader workers and POSIX semaphores fail: `NCCL WARN Error: failed to extend /dev/shm/nccl-...`, `unable to open shared memory object`")
        .help(format!("remove `{}` and {}", shm.from, site.add_shm_help()));
}
