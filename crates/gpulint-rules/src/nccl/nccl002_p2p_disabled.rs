//! NCCL002: NCCL peer-to-peer disabled (`NCCL_P2P_DISABLE=1`, `NCCL_P2P_LEVEL=LOC`)
//! in a compose service or a container.

use crate::{Check, EnvSetting, Reporter};

crate::declare_rule! {
    name: "nccl-p2p-disabled",
    severity: Warning,
    fix: Unsafe,
    summary: "NCCL peer-to-peer disabled (NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC)",
    sources: [
        "NCCL user guide, environment variables (Debugging)",
    ],
}

pub const CHECK: Check = Check::env(check);

fn disables_p2p(var: &EnvSetting) -> bool {
    let value = var.value.map(str::trim).unwrap_or("");
    match var.name {
        "NCCL_P2P_DISABLE" => value == "1",
        "NCCL_P2P_LEVEL" => value.eq_ignore_ascii_case("LOC") || value == "0",
        _ => false,
    }
}

fn check(var: &EnvSetting, out: &mut Reporter) {
    if !disables_p2p(var) {
        return;
    }
    var.report(out, format!("{} disables NCCL peer-to-peer transfers", var.owner))
        .label(format!("{} is a debugging switch", var.name))
        .note("GPU-to-GPU traffic then goes through host memory instead of NVLink or PCIe P2P, which cuts collective bandwidth several times; NCCL's docs say debugging variables \"should not be used in production\"")
        .help("remove it; keep it only for GPUs without working P2P (consumer cards), with a suppression comment that says so");
}
