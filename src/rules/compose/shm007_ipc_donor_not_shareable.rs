//! SHM007: `ipc: service:X` where X does not share its IPC namespace.

use crate::fix::Applicability;
use crate::model::compose::IpcMode;
use crate::rules::{Check, ComposeContext, Reporter};
use crate::syntax::yaml_edit::NewNode;

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(ipc) = &service.ipc else { continue };
        let IpcMode::Service(donor_name) = &ipc.value else {
            continue;
        };
        let range = cx.range(ipc.node);
        let Some(donor) = cx.file.service(donor_name) else {
            // A donor an included file defines is judged there (its mode is
            // not this file's to fix); `inspect` follows it.
            if cx.file.included.iter().any(|s| s.name == *donor_name) {
                continue;
            }
            out.report(
                range,
                format!("`ipc: service:{donor_name}` names a service this file does not define"),
            )
            .note("`docker compose up` fails: the service it joins does not exist")
            .help(
                "name a service defined under `services:`, or use `shareable` on the one you meant",
            );
            continue;
        };
        // An extended base or another file of the project may decide the
        // donor's mode; a fix here would not change it.
        let donor_mode = donor.merged_ipc();
        if let Some((mode, origin)) = &donor.inherited.ipc
            && !matches!(
                mode,
                IpcMode::Shareable | IpcMode::Host | IpcMode::Unknown(_)
            )
        {
            out.report(
                range,
                format!("service `{}` joins the IPC namespace of `{donor_name}`, which is not shareable", service.name),
            )
            .label(format!("`{donor_name}` gets `ipc: {mode:?}` from elsewhere"))
            .related_in(&origin.source, origin.range, format!("the donor's IPC mode: {}", origin.what))
            .note("the container fails to start: `non-shareable IPC (hint: use IpcMode:shareable for the donor container)`")
            .help(format!("set `ipc: shareable` where `{donor_name}`'s IPC mode is decided"));
            continue;
        }
        if matches!(
            donor_mode,
            Some(IpcMode::Shareable | IpcMode::Host | IpcMode::Unknown(_))
        ) {
            continue;
        }
        let written = donor
            .ipc
            .as_ref()
            .map_or("no `ipc` (private by default)".to_string(), |i| {
                format!("`ipc: {}`", cx.source(i.node))
            });
        let (related_range, related_label) = match &donor.ipc {
            Some(donor_ipc) => (cx.range(donor_ipc.node), "the donor's IPC mode"),
            None => (cx.range(donor.key), "the donor service"),
        };
        let title = format!("Set `ipc: shareable` on `{donor_name}`");
        let fix = match &donor.ipc {
            None => cx.insert_fix(
                donor,
                &["ipc"],
                NewNode::scalar("shareable"),
                title,
                Applicability::Safe,
            ),
            Some(donor_ipc) if donor_ipc.value == IpcMode::Private => cx.edit_fix(
                donor,
                &["ipc"],
                vec![cx.edit.replace(
                    donor_ipc.node,
                    cx.edit.scalar_like(donor_ipc.node, "shareable"),
                )],
                &[&["ipc"]],
                title,
                Applicability::Safe,
            ),
            // `ipc: none` was chosen on purpose; the user decides.
            Some(_) => None,
        };
        out.report(
            range,
            format!("service `{}` joins the IPC namespace of `{donor_name}`, which is not shareable", service.name),
        )
        .label(format!("`{donor_name}` has {written}"))
        .related(related_range, related_label)
        .note("the container fails to start: `non-shareable IPC (hint: use IpcMode:shareable for the donor container)`")
        .help(format!("set `ipc: shareable` on `{donor_name}` (and size /dev/shm there with `shm_size`)"))
        .fix(fix);
    }
}
