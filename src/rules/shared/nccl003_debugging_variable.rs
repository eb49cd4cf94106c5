//! NCCL003: other NCCL debugging variables left in a compose service or a container.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::model::workload::EnvView;
use crate::rules::context::DiagnosticBuilder;
use crate::rules::helpers::remove_env_fix;
use crate::rules::{
    Check, ComposeContext, DockerfileContext, KubeContext, Reporter, ScriptContext,
};

pub const CHECK: Check = Check::both(compose, kubernetes)
    .and_dockerfile(dockerfile)
    .and_commands(commands);

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

/// The finding for a debugging variable, if `var` is one.
fn report<'r>(out: &'r mut Reporter, var: EnvView, owner: &str) -> Option<DiagnosticBuilder<'r>> {
    if !DEBUGGING.contains(&var.name) {
        return None;
    }
    let value = var.value.unwrap_or("");
    let corrupting = var.name == "NCCL_PROTO" && value.to_ascii_uppercase().contains("LL128");
    Some(out.report(var.range, format!("{owner} sets the NCCL debugging variable {}", var.name))
        .severity(if corrupting { Severity::Warning } else { Severity::Info })
        .label(if corrupting { "forcing LL128 where it is unsupported can corrupt data" } else { "a tuning knob for debugging" })
        .note("NCCL's docs say debugging variables \"should not be used in production nor retained in scripts\": they override NCCL's own tuning and can cause sub-optimal behaviour, crashes or hangs on other hardware or NCCL versions")
        .help(format!("remove {} once the problem it worked around is fixed", var.name)))
}

fn compose(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for var in &service.environment {
            if let Some(finding) = report(out, var.view(), &format!("service `{}`", service.name)) {
                finding.fix(remove_env_fix(cx, service, var));
            }
        }
    }
}

fn kubernetes(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        for var in &container.env {
            if let Some(finding) = report(out, var.view(), &pod.describe_container(container)) {
                finding.fix(cx.remove_env_fix(container, var));
            }
        }
    }
}

fn dockerfile(cx: &DockerfileContext, out: &mut Reporter) {
    for setting in cx.model.env_settings() {
        let owner = cx.describe_stage(setting.stage);
        if let Some(finding) = report(out, setting.view(), &owner) {
            finding.fix(cx.remove_env_fix(&setting, Applicability::Unsafe));
        }
    }
}

fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for (site, option, var) in cx.run_env() {
        if let Some(finding) = report(out, var, &ScriptContext::describe_run(site)) {
            finding.fix(cx.remove_option_fix(
                site,
                option,
                format!("Remove `-e {}`", var.name),
                Applicability::Unsafe,
            ));
        }
    }
}
