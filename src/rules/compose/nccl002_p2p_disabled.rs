//! NCCL002: NCCL peer-to-peer disabled (`NCCL_P2P_DISABLE=1`, `NCCL_P2P_LEVEL=LOC`).

use crate::rules::helpers::remove_env_fix;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for var in &service.environment {
            let value = var.value.as_deref().map(str::trim).unwrap_or("");
            let disabled = match var.name.as_str() {
                "NCCL_P2P_DISABLE" => value == "1",
                "NCCL_P2P_LEVEL" => value.eq_ignore_ascii_case("LOC") || value == "0",
                _ => false,
            };
            if !disabled {
                continue;
            }
            out.report(var.range, format!("service `{}` disables NCCL peer-to-peer transfers", service.name))
                .label(format!("{} is a debugging switch", var.name))
                .note("GPU-to-GPU traffic then goes through host memory instead of NVLink or PCIe P2P, which cuts collective bandwidth several times; NCCL's docs say debugging variables \"should not be used in production\"")
                .help("remove it; keep it only for GPUs without working P2P (consumer cards), with a suppression comment that says so")
                .fix(remove_env_fix(cx, service, var));
        }
    }
}
