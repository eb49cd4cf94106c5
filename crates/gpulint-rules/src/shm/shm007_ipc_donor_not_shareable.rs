//! SHM007: `ipc: service:X` where X does not share its IPC namespace.
//!
//! The engine refuses to start a container that joins a private one. A
//! donor that itself joins another service shares that one, so the chain
//! is followed to the service that owns the namespace. A donor the
//! project does not define is PROJ001's finding.

use crate::fix::Applicability;
use crate::model::compose::{IpcMode, Service};
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "ipc-donor-not-shareable",
    severity: Error,
    fix: Safe,
    summary: "ipc: service:X where X does not share its IPC namespace",
    sources: [
        "moby `daemon/container_operations_unix.go` (non-shareable IPC error)",
    ],
}

pub const CHECK: Check = Check::compose(check);

/// How many `ipc: service:` links are followed (the engine refuses a cycle).
const MAX_CHAIN: usize = 8;

/// The service that owns the IPC namespace `service:name` joins, with the
/// names on the way; `None` for a donor the project does not define or a
/// cycle.
fn owner<'p>(cx: &ComposeContext<'p>, name: &str) -> Option<(&'p Service, Vec<String>)> {
    let mut via = Vec::new();
    let mut current = cx.project.service(name)?;
    loop {
        match current.ipc_mode() {
            Some(IpcMode::Service(next)) if via.len() < MAX_CHAIN => {
                via.push(current.name.clone());
                current = cx.project.service(next)?;
            }
            Some(IpcMode::Service(_)) => return None,
            _ => return Some((current, via)),
        }
    }
}

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(ipc) = &service.ipc else { continue };
        let IpcMode::Service(donor_name) = &ipc.value else {
            continue;
        };
        let Some((donor, via)) = owner(cx, donor_name) else {
            continue;
        };
        if matches!(
            donor.ipc_mode(),
            Some(IpcMode::Shareable | IpcMode::Host | IpcMode::Unknown(_))
        ) {
            continue;
        }
        let owner_name = &donor.name;
        let through = if via.len() > 1 {
            format!(
                " (through {})",
                via[1..]
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        };
        let written = donor
            .ipc
            .as_ref()
            .map_or("no `ipc` (private by default)".to_string(), |i| {
                format!("`ipc: {}`", cx.source(i.node))
            });
        let (related, related_label) = match &donor.ipc {
            Some(donor_ipc) => (cx.range(donor_ipc.node), "the donor's IPC mode"),
            None => (cx.range(donor.key), "the donor service"),
        };
        // The fix edits the donor; it is offered when the donor's setting
        // is in the file this finding is in.
        let title = format!("Set `ipc: shareable` on `{owner_name}`");
        let fix = match &donor.ipc {
            None if donor.map.file == ipc.node.file => cx.insert_fix(
                donor,
                &["ipc"],
                NewNode::scalar("shareable"),
                title,
                Applicability::Safe,
            ),
            Some(donor_ipc)
                if donor_ipc.value == IpcMode::Private && donor_ipc.node.file == ipc.node.file =>
            {
                let editor = cx.editor(donor_ipc.node.file);
                cx.edit_fix(
                    donor,
                    donor_ipc.node,
                    &["ipc"],
                    vec![editor.replace(
                        donor_ipc.node.node,
                        editor.scalar_like(donor_ipc.node.node, "shareable"),
                    )],
                    &[&["ipc"]],
                    title,
                    Applicability::Safe,
                )
            }
            // `ipc: none` was chosen on purpose; the user decides.
            _ => None,
        };
        out.report(
            cx.range(ipc.node),
            format!("service `{}` joins the IPC namespace of `{owner_name}`{through}, which is not shareable", service.name),
        )
        .label(format!("`{owner_name}` has {written}"))
        .related(related, related_label)
        .note("the container fails to start: `non-shareable IPC (hint: use IpcMode:shareable for the donor container)`")
        .help(format!("set `ipc: shareable` on `{owner_name}` (and size /dev/shm there with `shm_size`)"))
        .fix(fix);
    }
}
