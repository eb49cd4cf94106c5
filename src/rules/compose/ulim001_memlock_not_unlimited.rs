//! ULIM001: multi-GPU training or RDMA services without `memlock: -1`.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::rules::helpers::{gpu_reason, set_ulimit_edits};
use crate::syntax::yaml_edit::NewNode;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let gpu = &service.gpu;
        let multi_gpu_training = gpu.is_reserved() && gpu.is_multi_gpu() && gpu.launcher.is_some();
        if !(gpu.rdma || multi_gpu_training) {
            continue;
        }
        if service.ulimits.memlock.as_ref().is_some_and(|m| m.is_unlimited()) {
            continue;
        }
        let range = match &service.ulimits.memlock {
            Some(m) => cx.entry_range(m.key, m.value_node),
            None => cx.range(service.key),
        };
        let why = if gpu.rdma {
            "uses RDMA/InfiniBand".to_string()
        } else {
            gpu_reason(service)
        };
        let title = "Set `ulimits.memlock` to -1 (unlimited)";
        let fix = match &service.ulimits.memlock {
            None => cx.insert_fix(service, &["ulimits", "memlock"], NewNode::scalar("-1"), title, Applicability::Safe),
            Some(limit) => set_ulimit_edits(cx, limit, "-1").and_then(|edits| {
                cx.edit_fix(service, &["ulimits", "memlock"], edits, &[&["ulimits", "memlock"]], title, Applicability::Safe)
            }),
        };
        out.report(range, format!("service `{}` does not lift the locked-memory limit (`memlock`)", service.name))
            .severity(if gpu.rdma { Severity::Warning } else { Severity::Info })
            .label(format!("the service {why}"))
            .note("Docker containers default to a small locked-memory limit; NCCL's docs ask for `--ulimit memlock=-1`, and registering RDMA buffers fails with `NCCL WARN Call to ibv_reg_mr failed` or `ibv_create_cq ... Cannot allocate memory`")
            .help("add `ulimits: {memlock: -1}` (or `memlock: {soft: -1, hard: -1}`)")
            .fix(fix);
    }
}
