//! SHM005: `shm_size` the engine ignores because of `ipc` or a /dev/shm mount.

use crate::fix::Applicability;
use crate::model::compose::{EffectiveShm, ShmMount};
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(shm) = &service.shm_size else {
            continue;
        };
        let (node, cause, result) = match &service.effective_shm {
            EffectiveShm::Host { node } => (
                *node,
                format!("`ipc: {}`", cx.source(*node)),
                "the container uses the host's /dev/shm",
            ),
            EffectiveShm::Donor { node, .. } => (
                *node,
                format!("`ipc: {}`", cx.source(*node)),
                "the donor's /dev/shm is used; size it there",
            ),
            EffectiveShm::Missing { node } => (
                *node,
                format!("`ipc: {}`", cx.source(*node)),
                "the container has no /dev/shm at all",
            ),
            EffectiveShm::Mount { mount, node } => (
                *node,
                "a mount at /dev/shm".to_string(),
                match mount {
                    ShmMount::HostBind => "the host's /dev/shm is bind-mounted instead",
                    ShmMount::Volume => "a volume replaces /dev/shm (on disk, not in memory)",
                    ShmMount::Tmpfs(None) => "an unbounded tmpfs replaces it",
                    ShmMount::Tmpfs(Some(_)) => "the tmpfs's own size applies",
                },
            ),
            _ => continue,
        };
        let fix = shm.key.and_then(|key| {
            let edit = cx.edit.remove_entry(cx.service_map(service), key).ok()?;
            cx.edit_fix(
                service,
                &[],
                vec![edit],
                &[&["shm_size"]],
                "Remove the ignored `shm_size`",
                Applicability::Unsafe,
            )
        });
        out.report(
            cx.setting_range(shm),
            format!("`shm_size` of service `{}` has no effect because of {cause}", service.name),
        )
        .label("ignored by the engine")
        .related(cx.range(node), result)
        .note("Docker only applies `shm_size` to a private or shareable IPC namespace without a /dev/shm mount")
        .help("remove `shm_size`, or drop the setting that overrides it")
        .fix(fix);
    }
}
