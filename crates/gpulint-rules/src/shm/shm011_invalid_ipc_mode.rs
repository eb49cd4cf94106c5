//! SHM011: an `ipc` mode the engine refuses (`ipc: bogus`, `ipc: HOST`,
//! `docker run --ipc=hosts`).

use crate::model::compose::IpcMode;
use crate::{Check, ComposeContext, Reporter, ScriptContext};

crate::declare_rule! {
    name: "invalid-ipc-mode",
    severity: Error,
    fix: None,
    summary: "ipc value the engine refuses, such as a typo or `HOST`",
    sources: [
        "moby `api/types/container/hostconfig.go` (`IpcMode.Valid`)",
        "podman-run(1) `--ipc` (`container:ID`, `host`, `none`, `ns:PATH`, `private`, `shareable`)",
    ],
}

pub const CHECK: Check = Check::compose(check).and_commands(commands);

/// The modes Docker accepts besides `service:NAME` and `container:NAME`.
const MODES: [&str; 4] = ["none", "private", "shareable", "host"];

/// The help for a mode the engine refuses, written as `example` writes a
/// mode (`ipc: host`, `--ipc=host`); `joins` names what a mode can join
/// (`service:NAME`, `container:NAME`).
fn help(value: &str, example: &dyn Fn(&str) -> String, joins: &[&str]) -> String {
    let lower = value.to_ascii_lowercase();
    let written: Vec<String> = joins.iter().map(|j| format!("`{}`", example(j))).collect();
    // Modes are case-sensitive: `HOST` is not `host`.
    match MODES.iter().find(|m| **m == lower) {
        Some(mode) => format!("IPC modes are case-sensitive: write `{}`", example(mode)),
        None if lower.starts_with("service:") || lower.starts_with("container:") => {
            format!("name what to share with: {}", written.join(" or "))
        }
        None => {
            let mut modes: Vec<String> = vec!["`private` (the default)".into()];
            modes.extend(["shareable", "host", "none"].map(|m| format!("`{m}`")));
            modes.extend(joins.iter().map(|j| format!("`{j}`")));
            let last = modes.pop().unwrap_or_default();
            format!("use one of {} or {last}", modes.join(", "))
        }
    }
}

/// `docker run --ipc=hosts`: the container is never created (`podman
/// run` the same, with its `ns:PATH` besides).
fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        let Some((_, ipc)) = site.run.option("--ipc") else {
            continue;
        };
        if site.run.ipc_refusal(ipc).is_none() {
            continue;
        }
        let value = ipc.value.as_deref().unwrap_or("");
        let (tool, note) = if site.run.is_podman() {
            ("Podman", "Podman refuses to create the container")
        } else {
            (
                "Docker",
                "the engine refuses to create the container: `Invalid IPC mode`",
            )
        };
        out.report(
            ipc.range,
            format!("`--ipc {value}` is not an IPC mode {tool} accepts"),
        )
        .note(note)
        .help(help(
            value,
            &|mode| format!("--ipc={mode}"),
            &["container:NAME"],
        ));
    }
}

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(ipc) = &service.ipc else { continue };
        let IpcMode::Invalid(value) = &ipc.value else {
            continue;
        };
        let help = help(
            value,
            &|mode| format!("ipc: {mode}"),
            &["service:NAME", "container:NAME"],
        );
        out.report(
            cx.range(ipc.node),
            format!(
                "`ipc: {value}` of service `{}` is not an IPC mode Docker accepts",
                service.name
            ),
        )
        .note("the engine refuses to create the container: `invalid IPC mode`")
        .help(help);
    }
}
