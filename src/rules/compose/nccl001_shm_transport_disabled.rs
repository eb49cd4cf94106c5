//! NCCL001: `NCCL_SHM_DISABLE=1` shipped in a config.

use crate::rules::helpers::remove_env_fix;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(var) = service.env("NCCL_SHM_DISABLE") else { continue };
        if var.value.as_deref().map(str::trim) != Some("1") {
            continue;
        }
        out.report(var.range, format!("service `{}` disables NCCL's shared-memory transport", service.name))
            .label("NCCL_SHM_DISABLE is a debugging switch")
            .note("NCCL's docs say debugging variables \"should not be used in production\": GPUs in this container then talk over sockets or IB instead of shared memory, and collectives slow down; it is usually a workaround for a too-small /dev/shm")
            .help("remove it and give the service a large enough /dev/shm (`shm_size` or `ipc: host`)")
                .fix(remove_env_fix(cx, service, var));
    }
}
