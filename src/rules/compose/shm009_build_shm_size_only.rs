//! SHM009: `build.shm_size` on a GPU service that has no run-time `shm_size`.

use crate::model::compose::EffectiveShm;
use crate::rules::helpers::{SHM_FAILURES, gpu_reason, is_gpu_workload};
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(build_shm) = &service.build_shm_size else { continue };
        if service.shm_size.is_some()
            || service.effective_shm != EffectiveShm::Default
            || !is_gpu_workload(service)
        {
            continue;
        }
        out.report(
            cx.setting_range(build_shm),
            format!(
                "`build.shm_size` only sizes the build container; GPU service `{}` still runs with 64 MiB /dev/shm",
                service.name
            ),
        )
        .label(format!("the service {}", gpu_reason(service)))
        .note(SHM_FAILURES)
        .help(format!(
            "also set `shm_size: {}` at the service level",
            cx.source(build_shm.node)
        ));
    }
}
