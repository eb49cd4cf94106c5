//! SHM002: `/dev/shm` sized below what GPU jobs need.

use crate::fix::Applicability;
use crate::model::compose::{EffectiveShm, ShmMount};
use crate::model::size::{HumanBytes, MIB, SizeValue};
use crate::rules::helpers::{SHM_FAILURES, gpu_reason, is_gpu_workload, needs_large_shm, set_shm_size_fix, shm_threshold};
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        if !is_gpu_workload(service) {
            continue;
        }
        let (bytes, node) = match &service.effective_shm {
            EffectiveShm::Sized { bytes, node } => (*bytes, *node),
            EffectiveShm::Mount {
                mount: ShmMount::Tmpfs(Some(SizeValue::Bytes { bytes, .. })),
                node,
            } => (*bytes, *node),
            _ => continue,
        };
        // A bare number under a mebibyte is a unit mistake: SHM003 reports it.
        let bare = matches!(
            service.shm_size.as_ref().map(|s| &s.value),
            Some(SizeValue::Bytes { bare_number: true, .. })
        );
        if bare && bytes < MIB {
            continue;
        }
        let threshold = shm_threshold(service, cx.settings);
        if bytes >= threshold {
            continue;
        }
        let kind = if needs_large_shm(service) {
            "multi-GPU or distributed"
        } else {
            "GPU"
        };
        // Only a plain `shm_size` is rewritten: an interpolated default or a
        // tmpfs mount's size option is left to the user.
        let fix = service
            .shm_size
            .as_ref()
            .filter(|s| s.node == node && !cx.source(node).contains('$'))
            .and_then(|s| set_shm_size_fix(cx, service, s.node, "Raise", Applicability::Unsafe));
        out.report(
            cx.range(node),
            format!(
                "/dev/shm of {} is below the {} gpulint expects for {kind} service `{}`",
                HumanBytes(bytes),
                HumanBytes(threshold),
                service.name
            ),
        )
        .label(format!("the service {}", gpu_reason(service)))
        .note(SHM_FAILURES)
        .help(format!(
            "raise it to at least \"{}\" (`{}` in gpulint.toml's [shm] sets the threshold)",
            cx.settings.fix_shm_size,
            if needs_large_shm(service) { "min-size-multi-gpu" } else { "min-size" }
        ))
        .fix(fix);
    }
}
