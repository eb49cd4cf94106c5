//! ULIM001: multi-GPU training or RDMA services without `memlock: -1`.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::rules::helpers::{gpu_reason, set_ulimit_edits};
use crate::rules::{Check, ComposeContext, Reporter, ScriptContext};
use crate::syntax::yaml_edit::NewNode;

pub const CHECK: Check = Check::compose(check).and_commands(commands);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let gpu = &service.gpu;
        let multi_gpu_training = gpu.is_reserved() && gpu.is_multi_gpu() && gpu.launcher.is_some();
        if !(gpu.rdma || multi_gpu_training) {
            continue;
        }
        if service
            .ulimits
            .memlock
            .as_ref()
            .is_some_and(|m| m.is_unlimited())
        {
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
            None => cx.insert_fix(
                service,
                &["ulimits", "memlock"],
                NewNode::scalar("-1"),
                title,
                Applicability::Safe,
            ),
            Some(limit) => set_ulimit_edits(cx, limit, "-1").and_then(|edits| {
                cx.edit_fix(
                    service,
                    limit.key,
                    &["ulimits", "memlock"],
                    edits,
                    &[&["ulimits", "memlock"]],
                    title,
                    Applicability::Safe,
                )
            }),
        };
        let mut finding = out
            .report(
                range,
                format!(
                    "service `{}` does not lift the locked-memory limit (`memlock`)",
                    service.name
                ),
            )
            .severity(if gpu.rdma {
                Severity::Warning
            } else {
                Severity::Info
            })
            .label(format!("the service {why}"));
        // A later file removes it (`ulimits: !reset`): no fix the reset
        // would undo, and where it is.
        if service.ulimits.memlock.is_none()
            && let Some(reset) = service.reset_of("ulimits.memlock")
        {
            finding = finding.related(
                cx.range(reset),
                "a later file of the project resets `ulimits` here",
            );
        }
        finding
            .note("Docker containers default to a small locked-memory limit; NCCL's docs ask for `--ulimit memlock=-1`, and registering RDMA buffers fails with `NCCL WARN Call to ibv_reg_mr failed` or `ibv_create_cq ... Cannot allocate memory`")
            .help("add `ulimits: {memlock: -1}` (or `memlock: {soft: -1, hard: -1}`)")
            .fix(fix);
    }
}

/// `docker run` with several GPUs and a distributed launcher, or RDMA, and
/// no `--ulimit memlock=-1`.
fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        let run = &site.run;
        let rdma = run.uses_rdma();
        let multi_gpu_training =
            run.gpu_request().is_some() && run.multi_gpu() && run.launcher().is_some();
        if !(rdma || multi_gpu_training) || run.uncertain.is_some() {
            continue;
        }
        let memlock = run
            .options_named("--ulimit")
            .filter(|(_, o)| {
                o.value
                    .as_deref()
                    .is_some_and(|v| v.starts_with("memlock="))
            })
            .last();
        if memlock.is_some_and(|(_, o)| {
            o.dynamic
                || o.value
                    .as_deref()
                    .is_some_and(|v| v == "memlock=-1" || v == "memlock=-1:-1")
        }) {
            continue;
        }
        let why = if rdma {
            "uses RDMA/InfiniBand".to_string()
        } else {
            run.gpu_request().unwrap_or_default()
        };
        let title = "Add `--ulimit memlock=-1`";
        // A limited `--ulimit memlock=…` is replaced when written plainly.
        let fix = match memlock {
            None => cx
                .insert_option(site, "--ulimit memlock=-1")
                .map(|edit| cx.run_fix(site, title, Applicability::Safe, vec![edit])),
            Some((_, o)) => o
                .value_range
                .filter(|r| cx.text.get(r.as_range()) == o.value.as_deref())
                .map(|r| {
                    cx.run_fix(
                        site,
                        "Set `--ulimit memlock=-1`",
                        Applicability::Safe,
                        vec![crate::fix::Edit {
                            range: r,
                            content: "memlock=-1".into(),
                        }],
                    )
                }),
        };
        let range = memlock.map_or(run.program_range, |(_, o)| o.range);
        out.report(range, format!("{} does not lift the locked-memory limit (`memlock`)", ScriptContext::describe_run(site)))
            .severity(if rdma { Severity::Warning } else { Severity::Info })
            .label(format!("the container {why}"))
            .note("Docker containers default to a small locked-memory limit; NCCL's docs ask for `--ulimit memlock=-1`, and registering RDMA buffers fails with `NCCL WARN Call to ibv_reg_mr failed` or `ibv_create_cq ... Cannot allocate memory`")
            .help("add `--ulimit memlock=-1`")
            .fix(fix);
    }
}
