//! NCCL003: other NCCL debugging variables left in a config.

use crate::diagnostic::Severity;
use crate::rules::helpers::remove_env_fix;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

/// Variables from the "Debugging" section of NCCL's environment documentation
/// (the SHM and P2P switches have their own rules).
const DEBUGGING: &[&str] = &[
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_BUFFSIZE",
    "NCCL_NTHREADS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_CTAS",
    "NCCL_MIN_CTAS",
    "NCCL_LAUNCH_MODE",
    "NCCL_CHECKS_DISABLE",
    "NCCL_CUMEM_ENABLE",
    "NCCL_CUMEM_HOST_ENABLE",
    "NCCL_NVLS_ENABLE",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_P2P_DIRECT_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_NVB_DISABLE",
    "NCCL_PXN_DISABLE",
    "NCCL_MNNVL_ENABLE",
    "NCCL_DMABUF_ENABLE",
];

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for var in &service.environment {
            if !DEBUGGING.contains(&var.name.as_str()) {
                continue;
            }
            let value = var.value.as_deref().unwrap_or("");
            let corrupting = var.name == "NCCL_PROTO" && value.to_ascii_uppercase().contains("LL128");
            out.report(var.range, format!("service `{}` sets the NCCL debugging variable {}", service.name, var.name))
                .severity(if corrupting { Severity::Warning } else { Severity::Info })
                .label(if corrupting { "forcing LL128 where it is unsupported can corrupt data" } else { "a tuning knob for debugging" })
                .note("NCCL's docs say debugging variables \"should not be used in production nor retained in scripts\": they override NCCL's own tuning and can cause sub-optimal behaviour, crashes or hangs on other hardware or NCCL versions")
                .help(format!("remove {} once the problem it worked around is fixed", var.name))
                .fix(remove_env_fix(cx, service, var));
        }
    }
}
