//! SHM009: `build.shm_size` on a GPU service that has no run-time `shm_size`.

use crate::fix::Applicability;
use crate::helpers::{SHM_FAILURES, gpu_reason, service_shm_need};
use crate::model::container::ShmSetting;
use crate::model::size::SizeValue;
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "build-shm-size-only",
    severity: Warning,
    fix: Safe,
    summary: "build.shm_size on a GPU service with no run-time shm_size",
    sources: [
        "compose-spec `build.md` (`shm_size`: size of /dev/shm for the build container)",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(build_shm) = &service.build_shm_size else {
            continue;
        };
        if service.shm_size.is_some()
            || cx.container(service).shm.decided_by != ShmSetting::Default
            || !service.is_gpu_workload()
        {
            continue;
        }
        // Reuse the build's size when it is large enough, as the user wrote it.
        let build_is_enough = matches!(build_shm.value, SizeValue::Bytes { bytes, .. } if bytes >= service_shm_need(cx, service).bytes);
        let (value, shown) = if build_is_enough {
            (
                cx.source(build_shm.node).to_string(),
                cx.source(build_shm.node).to_string(),
            )
        } else {
            (
                cx.editor(service.map.file)
                    .quoted(&cx.settings.fix_shm_size),
                format!("\"{}\"", cx.settings.fix_shm_size),
            )
        };
        let fix = cx.insert_fix(
            service,
            &["shm_size"],
            NewNode::scalar(value),
            format!("Add `shm_size: {shown}`"),
            Applicability::Safe,
        );
        out.report(
            cx.setting_range(build_shm),
            format!(
                "`build.shm_size` only sizes the build container; GPU service `{}` still runs with 64 MiB /dev/shm",
                service.name
            ),
        )
        .label(format!("the service {}", gpu_reason(service)))
        .gpu_evidence(cx, service)
        .note(SHM_FAILURES)
        .help(format!(
            "also set `shm_size: {shown}` at the service level"
        ))
        .fix(fix);
    }
}
