//! SHM011: an `ipc` mode the engine refuses (`ipc: bogus`, `ipc: HOST`).

use crate::model::compose::IpcMode;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "invalid-ipc-mode",
    severity: Error,
    fix: None,
    summary: "ipc value the engine refuses, such as a typo or `HOST`",
    sources: [
        "moby `api/types/container/hostconfig.go` (`IpcMode.Valid`)",
    ],
}

pub const CHECK: Check = Check::compose(check);

/// The modes Docker accepts besides `service:NAME` and `container:NAME`.
const MODES: [&str; 4] = ["none", "private", "shareable", "host"];

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(ipc) = &service.ipc else { continue };
        let IpcMode::Invalid(value) = &ipc.value else {
            continue;
        };
        let lower = value.to_ascii_lowercase();
        // Modes are case-sensitive: `HOST` is not `host`.
        let help = match MODES.iter().find(|m| **m == lower) {
            Some(mode) => format!("IPC modes are case-sensitive: write `ipc: {mode}`"),
            None if lower.starts_with("service:") || lower.starts_with("container:") => {
                "name the service or container to share with: `ipc: service:NAME` or `ipc: container:NAME`".to_string()
            }
            None => "use one of `private` (the default), `shareable`, `host`, `none`, `service:NAME` or `container:NAME`".to_string(),
        };
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
