//! NCCL003: other NCCL debugging variables left in a compose service or a
//! container, classified as NCCL's environment documentation does: a
//! transport switched off is a warning, a tuning override or trace logging
//! is info, and system configuration (interfaces, HCAs, GPUDirect levels)
//! is no finding.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::model::k8s_env_from::config_map_env;
use crate::model::workload::EnvView;
use crate::rules::context::DiagnosticBuilder;
use crate::rules::helpers::{compose_env_finding, env_view};
use crate::rules::{
    Check, ComposeContext, DockerfileContext, KubeContext, Reporter, ScriptContext,
};

pub const CHECK: Check = Check::both(compose, kubernetes)
    .and_dockerfile(dockerfile)
    .and_commands(commands);

/// Tuning overrides from the "Debugging" section of NCCL's environment
/// documentation (the SHM and P2P switches have their own rules;
/// `NCCL_IB_DISABLE` and `NCCL_DEBUG` are judged by their value below).
/// `NCCL_NET_GDR_LEVEL` and `NCCL_NET_GDR_READ` are not here: the docs list
/// them under "System configuration", site settings that belong in configs.
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
    "NCCL_P2P_DIRECT_DISABLE",
    "NCCL_NVB_DISABLE",
    "NCCL_PXN_DISABLE",
    "NCCL_MNNVL_ENABLE",
    "NCCL_DMABUF_ENABLE",
];

/// How a variable set to a value is reported: its severity and label.
fn classify(name: &str, value: &str) -> Option<(Severity, &'static str)> {
    let value = value.trim();
    match name {
        // Turning a transport off is what the debugging section warns about
        // most: inter-node traffic falls back to TCP sockets.
        "NCCL_IB_DISABLE" => (value == "1").then_some((
            Severity::Warning,
            "disables the InfiniBand/RoCE transport: traffic between nodes falls back to sockets",
        )),
        // `WARN` is the production minimum and `INFO` a common diagnostic
        // level (NCCL's logging guide); `TRACE` logs every call.
        "NCCL_DEBUG" => value.eq_ignore_ascii_case("TRACE").then_some((
            Severity::Info,
            "TRACE logs every NCCL call and slows collectives",
        )),
        "NCCL_PROTO" if value.to_ascii_uppercase().contains("LL128") => Some((
            Severity::Warning,
            "forcing LL128 where it is unsupported can corrupt data",
        )),
        _ => DEBUGGING
            .contains(&name)
            .then_some((Severity::Info, "a tuning knob for debugging")),
    }
}

/// The finding for a debugging variable, if `var` is one.
fn report<'r>(out: &'r mut Reporter, var: EnvView, owner: &str) -> Option<DiagnosticBuilder<'r>> {
    let (severity, label) = classify(var.name, var.value.unwrap_or(""))?;
    Some(out.report(var.range, format!("{owner} sets the NCCL debugging variable {}", var.name))
        .severity(severity)
        .label(label)
        .note("NCCL's docs say debugging variables \"should not be used in production nor retained in scripts\": they override NCCL's own tuning and can cause sub-optimal behaviour, crashes or hangs on other hardware or NCCL versions")
        .help(format!("remove {} once the problem it worked around is fixed", var.name)))
}

fn compose(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for var in &service.environment {
            if let Some(finding) =
                report(out, env_view(var), &format!("service `{}`", service.name))
            {
                compose_env_finding(cx, service, var, finding);
            }
        }
    }
}

fn kubernetes(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        // From a ConfigMap of the stream: reported there, not removed (other
        // workloads may read it).
        for from in config_map_env(cx.yaml(), container.map) {
            let owner = format!(
                "ConfigMap `{}`, through {}'s `envFrom`,",
                from.config_map,
                pod.describe_container(container)
            );
            report(out, from.var.view(), &owner);
        }
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
    // Set by the script for what it runs: only a transport switched off or
    // an unsafe protocol. Batch and launch scripts are where sites keep
    // their tuning (`NCCL_ALGO=Ring` across nodes), which is not flagged
    // there. Reported, not removed: a removed line shifts later commands.
    for setting in cx.script_env() {
        let warns = classify(&setting.name, setting.value.as_deref().unwrap_or(""))
            .is_some_and(|(severity, _)| severity == Severity::Warning);
        if warns {
            report(out, setting.view(), "the script");
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classified_as_nccl_docs_do() {
        let severity = |name, value| classify(name, value).map(|(s, _)| s);
        assert_eq!(severity("NCCL_IB_DISABLE", "1"), Some(Severity::Warning));
        assert_eq!(severity("NCCL_IB_DISABLE", "0"), None);
        assert_eq!(severity("NCCL_DEBUG", "TRACE"), Some(Severity::Info));
        assert_eq!(severity("NCCL_DEBUG", "INFO"), None);
        assert_eq!(severity("NCCL_ALGO", "Ring"), Some(Severity::Info));
        assert_eq!(severity("NCCL_PROTO", "LL128"), Some(Severity::Warning));
        for site in [
            "NCCL_NET_GDR_LEVEL",
            "NCCL_NET_GDR_READ",
            "NCCL_SOCKET_IFNAME",
            "NCCL_IB_HCA",
            "NCCL_CROSS_NIC",
            "NCCL_NET",
        ] {
            assert_eq!(severity(site, "1"), None, "{site}");
        }
    }
}
