//! GPU012: a `--gpus` value the Docker CLI refuses (`--gpus devices=0`,
//! `--gpus 'device=0,1'` written in a workflow's `options:`, where no
//! shell removes the `'`).

use crate::model::gpu_request::parse_gpus;
use crate::{Check, Reporter, ScriptContext};

crate::declare_rule! {
    name: "gpus-value-refused",
    severity: Error,
    fix: None,
    summary: "a --gpus value the Docker CLI refuses",
    sources: [
        "docker/cli `opts/gpus.go` (`GpuOpts.Set`: one CSV record of `count`, `device`, `driver`, `capabilities`, `options`)",
        "actions/runner `DockerCommandManager.DockerCreate` (`options:` joined into the argument string .NET splits)",
    ],
}

pub const CHECK: Check = Check::commands(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        // Podman reads `--gpus` its own way (Podman 4.3 has no such flag).
        if site.run.is_podman() {
            continue;
        }
        let in_workflow_options = site.run.subcommand.text == "create"
            && cx.script.snippets[site.snippet].yaml_path.is_some();
        for (_, option) in site.run.options_named("--gpus") {
            let Some(value) = option.value.as_deref().filter(|_| !option.dynamic) else {
                continue;
            };
            let Err(why) = parse_gpus(value) else {
                continue;
            };
            let help = if in_workflow_options && value.contains('\'') {
                "the runner gives `options:` to Docker without a shell, so `'` is part of the value: quote the device list with `\"\\\"device=0,1\\\"\"`".to_string()
            } else if value.contains('\n') {
                "a line break is part of the value: write the options of `options:` on one line, or fold them (`options: >-`)".to_string()
            } else {
                "write `all`, a count, or CSV fields: `--gpus '\"device=0,1\"'`, `--gpus count=2,capabilities=compute`".to_string()
            };
            out.report(
                option.range,
                format!(
                    "`--gpus {}` is a value the Docker CLI refuses: {why}",
                    shown(value)
                ),
            )
            .note("the Docker CLI stops with `invalid argument ... for \"--gpus\" flag`: no container is created")
            .help(help);
        }
    }
}

/// A value with its control characters (a line break from `options: |`)
/// written as escapes, its quotes as they are.
fn shown(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
