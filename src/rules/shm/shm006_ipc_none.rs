//! SHM006: `ipc: none` on a GPU service (no /dev/shm at all).

use crate::model::container::{ShmKind, ShmSetting};
use crate::rules::helpers::{add_shm_help, gpu_reason};
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let shm = &cx.container(service).shm;
        let (ShmSetting::Ipc, ShmKind::Missing, Some(at)) =
            (shm.decided_by, shm.kind, cx.decided_at(shm))
        else {
            continue;
        };
        if !service.is_gpu_workload() {
            continue;
        }
        out.report(
            at,
            format!("`ipc: none` leaves GPU service `{}` without any /dev/shm", service.name),
        )
        .label(format!("the service {}", gpu_reason(service)))
        .gpu_evidence(cx, service)
        .note("NCCL, DataLoader workers and POSIX semaphores fail: `NCCL WARN Error: failed to extend /dev/shm/nccl-...`, `unable to open shared memory object`")
        .help(format!("remove `ipc: none` and {}", add_shm_help(cx.settings)));
    }
}
