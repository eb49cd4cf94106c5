//! ULIM003: `stack: -1` (unlimited), which NCCL crashes with.

use crate::fix::Applicability;
use crate::rules::helpers::set_ulimit_edits;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(stack) = &service.ulimits.stack else {
            continue;
        };
        if stack.soft != Some(-1) {
            continue;
        }
        let fix = set_ulimit_edits(cx, stack, "67108864").and_then(|edits| {
            cx.edit_fix(
                service,
                stack.key,
                &["ulimits", "stack"],
                edits,
                &[&["ulimits", "stack"]],
                "Set `ulimits.stack` to 67108864 (64 MiB)",
                Applicability::Safe,
            )
        });
        out.report(
            cx.entry_range(stack.key, stack.value_node),
            format!("service `{}` sets an unlimited stack size", service.name),
        )
        .label("`stack: -1` means unlimited")
        .note("with an unlimited stack glibc gives each new thread only 2 MiB; NCCL's troubleshooting guide reports crashes with this setting (NGC images recommend 64 MiB)")
        .help("use `stack: 67108864` (64 MiB), as NVIDIA's containers recommend")
        .fix(fix);
    }
}
