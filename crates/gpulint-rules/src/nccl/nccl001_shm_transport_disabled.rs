//! NCCL001: `NCCL_SHM_DISABLE=1` shipped in a compose service or a container.

use crate::{Check, EnvSetting, Reporter};

crate::declare_rule! {
    name: "nccl-shm-transport-disabled",
    severity: Warning,
    fix: Unsafe,
    summary: "NCCL_SHM_DISABLE=1 shipped in a config",
    sources: [
        "NCCL user guide, environment variables (Debugging)",
    ],
}

pub const CHECK: Check = Check::env(check);

const NAME: &str = "NCCL_SHM_DISABLE";

fn check(var: &EnvSetting, out: &mut Reporter) {
    if var.name != NAME || var.value.map(str::trim) != Some("1") {
        return;
    }
    var.report(out, format!("{} disables NCCL's shared-memory transport", var.owner))
        .label("NCCL_SHM_DISABLE is a debugging switch")
        .note("NCCL's docs say debugging variables \"should not be used in production\": GPUs in this container then talk over sockets or IB instead of shared memory, and collectives slow down; it is usually a workaround for a too-small /dev/shm")
        .help(format!(
            "remove it and give the container a large enough /dev/shm ({})",
            var.shm_remedy()
        ));
}
