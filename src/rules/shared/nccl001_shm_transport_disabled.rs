//! NCCL001: `NCCL_SHM_DISABLE=1` shipped in a compose service or a container.

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

const NAME: &str = "NCCL_SHM_DISABLE";

fn disables_shm(var: EnvView) -> bool {
    var.name == NAME && var.value.map(str::trim) == Some("1")
}

fn report<'r>(
    out: &'r mut Reporter,
    var: EnvView,
    owner: &str,
    remedy: &str,
) -> DiagnosticBuilder<'r> {
    out.report(var.range, format!("{owner} disables NCCL's shared-memory transport"))
        .label("NCCL_SHM_DISABLE is a debugging switch")
        .note("NCCL's docs say debugging variables \"should not be used in production\": GPUs in this container then talk over sockets or IB instead of shared memory, and collectives slow down; it is usually a workaround for a too-small /dev/shm")
        .help(format!("remove it and give the container a large enough /dev/shm ({remedy})"))
}

fn compose(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(var) = service.env(NAME).filter(|v| disables_shm(env_view(v))) else {
            continue;
        };
        let finding = report(
            out,
            env_view(var),
            &format!("service `{}`", service.name),
            "`shm_size` or `ipc: host`",
        );
        compose_env_finding(cx, service, var, finding);
    }
}

fn kubernetes(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        // From a ConfigMap of the stream: reported there, not removed (other
        // workloads may read it).
        for from in config_map_env(cx.yaml(), container.map) {
            if disables_shm(from.var.view()) {
                let owner = format!(
                    "ConfigMap `{}`, through {}'s `envFrom`,",
                    from.config_map,
                    pod.describe_container(container)
                );
                report(
                    out,
                    from.var.view(),
                    &owner,
                    "an `emptyDir` with `medium: Memory` mounted at /dev/shm",
                );
            }
        }
        if let Some(var) = container.env(NAME).filter(|v| disables_shm(v.view())) {
            report(
                out,
                var.view(),
                &pod.describe_container(container),
                "an `emptyDir` with `medium: Memory` mounted at /dev/shm",
            )
            .fix(cx.remove_env_fix(container, var));
        }
    }
}

fn dockerfile(cx: &DockerfileContext, out: &mut Reporter) {
    for setting in cx
        .model
        .env_settings()
        .iter()
        .filter(|s| disables_shm(s.view()))
    {
        let owner = cx.describe_stage(setting.stage);
        report(
            out,
            setting.view(),
            &owner,
            "`shm_size` or `ipc: host` at run time",
        )
        .fix(cx.remove_env_fix(setting, Applicability::Unsafe));
    }
}

fn commands(cx: &ScriptContext, out: &mut Reporter) {
    // Set by the script for what it runs: reported, not removed (a removed
    // line would shift every later command).
    for setting in cx.script_env().filter(|s| disables_shm(s.view())) {
        report(
            out,
            setting.view(),
            "the script",
            "`--shm-size` or `--ipc=host` for a container",
        );
    }
    for (site, option, var) in cx.run_env().filter(|(_, _, v)| disables_shm(*v)) {
        report(
            out,
            var,
            &ScriptContext::describe_run(site),
            "`--shm-size` or `--ipc=host`",
        )
        .fix(cx.remove_option_fix(
            site,
            option,
            format!("Remove `-e {}`", var.name),
            Applicability::Unsafe,
        ));
    }
}
