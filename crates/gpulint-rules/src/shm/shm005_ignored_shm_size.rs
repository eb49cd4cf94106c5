//! SHM005: `shm_size` the engine ignores because of `ipc` or a /dev/shm mount.

use crate::fix::{Applicability, Fix};
use crate::model::container::{ShmKind, ShmSetting};
use crate::syntax::tree::Src;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "ignored-shm-size",
    severity: Warning,
    fix: Unsafe,
    summary: "shm_size the engine ignores because of ipc or a /dev/shm mount",
    sources: [
        "moby `setupIPCDirs` and `HasMountFor(\"/dev/shm\")`",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(shm) = &service.shm_size else {
            continue;
        };
        let decided = &cx.container(service).shm;
        let Some(range) = decided.at else { continue };
        let source = cx.source_file(decided.at_file);
        let written = &source.text[range.as_range()];
        let at = crate::diagnostic::At {
            range,
            file: Some(source.clone()),
        };
        let (cause, result) = match (decided.decided_by, decided.kind) {
            (ShmSetting::Ipc, ShmKind::Host) => (
                format!("`ipc: {written}`"),
                "the container uses the host's /dev/shm",
            ),
            (ShmSetting::Ipc, _) => (
                format!("`ipc: {written}`"),
                "the container has no /dev/shm at all",
            ),
            (ShmSetting::Donor, _) => (
                format!("`ipc: {written}`"),
                "the donor's /dev/shm is used; size it there",
            ),
            (ShmSetting::Mount, kind) => (
                "a mount at /dev/shm".to_string(),
                match kind {
                    ShmKind::Host => "the host's /dev/shm is bind-mounted instead",
                    ShmKind::Disk => "a volume replaces /dev/shm (on disk, not in memory)",
                    ShmKind::Unbounded => "an unbounded tmpfs replaces it",
                    ShmKind::HostShare => {
                        "a tmpfs sized as a share of the host's memory replaces it"
                    }
                    _ => "the tmpfs's own size applies",
                },
            ),
            _ => continue,
        };
        let fix = shm.key.and_then(|key| {
            let definition = cx.definition_in(service, key.file)?;
            let map = cx.resolve(definition.map);
            let edit = cx.editor(key.file).remove_entry(map.node, key.node).ok()?;
            let fix = cx.edit_fix(
                service,
                key,
                &[],
                vec![edit],
                &[&["shm_size"]],
                "Remove the ignored `shm_size`",
                Applicability::Unsafe,
            )?;
            // A `shm_size` merged in from an anchor would take its place,
            // ignored the same way: removing this one alone fixes nothing.
            Some(match cx.yaml(key.file).merged_entry(map.node, "shm_size") {
                Some(merged) => Fix {
                    applicability: Applicability::DisplayOnly,
                    title: format!(
                        "{} (not applied automatically: the `shm_size: {}` merged in from an anchor would take its place, ignored too)",
                        fix.title,
                        cx.source(Src {
                            file: key.file,
                            node: merged.value,
                        }),
                    ),
                    ..fix
                },
                None => fix,
            })
        });
        out.report(
            cx.setting_range(shm),
            format!("`shm_size` of service `{}` has no effect because of {cause}", service.name),
        )
        .label("ignored by the engine")
        .related(at, result)
        .note("Docker only applies `shm_size` to a private or shareable IPC namespace without a /dev/shm mount")
        .help("remove `shm_size`, or drop the setting that overrides it")
        .fix(fix);
    }
}
