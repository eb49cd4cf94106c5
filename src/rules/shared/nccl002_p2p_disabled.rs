//! NCCL002: NCCL peer-to-peer disabled (`NCCL_P2P_DISABLE=1`, `NCCL_P2P_LEVEL=LOC`)
//! in a compose service or a container.

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

fn disables_p2p(var: EnvView) -> bool {
    let value = var.value.map(str::trim).unwrap_or("");
    match var.name {
        "NCCL_P2P_DISABLE" => value == "1",
        "NCCL_P2P_LEVEL" => value.eq_ignore_ascii_case("LOC") || value == "0",
        _ => false,
    }
}

fn report<'r>(out: &'r mut Reporter, var: EnvView, owner: &str) -> DiagnosticBuilder<'r> {
    out.report(var.range, format!("{owner} disables NCCL peer-to-peer transfers"))
        .label(format!("{} is a debugging switch", var.name))
        .note("GPU-to-GPU traffic then goes through host memory instead of NVLink or PCIe P2P, which cuts collective bandwidth several times; NCCL's docs say debugging variables \"should not be used in production\"")
        .help("remove it; keep it only for GPUs without working P2P (consumer cards), with a suppression comment that says so")
}

fn compose(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for var in service
            .environment
            .iter()
            .filter(|v| disables_p2p(env_view(v)))
        {
            let finding = report(out, env_view(var), &format!("service `{}`", service.name));
            compose_env_finding(cx, service, var, finding);
        }
    }
}

fn kubernetes(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        // From a ConfigMap of the stream: reported there, not removed (other
        // workloads may read it).
        for from in config_map_env(cx.yaml(), container.map) {
            if disables_p2p(from.var.view()) {
                let owner = format!(
                    "ConfigMap `{}`, through {}'s `envFrom`,",
                    from.config_map,
                    pod.describe_container(container)
                );
                report(out, from.var.view(), &owner);
            }
        }
        for var in container.env.iter().filter(|v| disables_p2p(v.view())) {
            report(out, var.view(), &pod.describe_container(container))
                .fix(cx.remove_env_fix(container, var));
        }
    }
}

fn dockerfile(cx: &DockerfileContext, out: &mut Reporter) {
    for setting in cx
        .model
        .env_settings()
        .iter()
        .filter(|s| disables_p2p(s.view()))
    {
        report(out, setting.view(), &cx.describe_stage(setting.stage))
            .fix(cx.remove_env_fix(setting, Applicability::Unsafe));
    }
}

fn commands(cx: &ScriptContext, out: &mut Reporter) {
    // Set by the script for what it runs: reported, not removed (a removed
    // line would shift every later command).
    for setting in cx.script_env().filter(|s| disables_p2p(s.view())) {
        report(out, setting.view(), "the script");
    }
    for (site, option, var) in cx.run_env().filter(|(_, _, v)| disables_p2p(*v)) {
        report(out, var, &ScriptContext::describe_run(site)).fix(cx.remove_option_fix(
            site,
            option,
            format!("Remove `-e {}`", var.name),
            Applicability::Unsafe,
        ));
    }
}
