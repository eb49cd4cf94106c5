//! SHM001: a GPU service left on Docker's 64 MiB `/dev/shm`.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::model::container::ShmSetting;
use crate::model::size::SizeValue;
use crate::rules::helpers::{
    SHM_FAILURES, add_shm_help, gpu_reason, service_shm_need, set_shm_size_fix,
};
use crate::rules::{Check, ComposeContext, Reporter, ScriptContext};
use crate::syntax::yaml_edit::NewNode;

pub const CHECK: Check = Check::compose(check).and_commands(commands);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        if !service.is_gpu_workload() {
            continue;
        }
        // Nothing the service's settings change leaves the default
        // (`shm_size: 0` and a size Compose drops are written, but leave it).
        let shm = &cx.container(service).shm;
        if shm.decided_by != ShmSetting::Default {
            continue;
        }
        // A `build.shm_size` the user thinks applies is SHM009's finding.
        if service.build_shm_size.is_some() && service.shm_size.is_none() {
            continue;
        }
        let container = cx.container(service);
        let severity = if container.gpus.is_some() && container.launches_ranks() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let explicit_zero = service
            .shm_size
            .as_ref()
            .filter(|s| matches!(s.value, SizeValue::Bytes { bytes: 0, .. }));
        let size = &cx.settings.fix_shm_size;
        let fix = match explicit_zero {
            Some(zero) => set_shm_size_fix(
                cx,
                service,
                zero.node,
                &cx.settings
                    .shm_size_for(service_shm_need(cx, service).bytes),
                "Set",
                Applicability::Safe,
            ),
            None => cx.insert_fix(
                service,
                &["shm_size"],
                NewNode::scalar(cx.editor(service.map.file).quoted(size)),
                format!("Add `shm_size: \"{size}\"`"),
                Applicability::Safe,
            ),
        };
        let diagnostic = match explicit_zero {
            Some(zero) => out
                .report(
                    cx.range(zero.node),
                    format!(
                        "`shm_size: 0` gives GPU service `{}` Docker's default 64 MiB /dev/shm",
                        service.name
                    ),
                )
                .label("0 means \"use the daemon default\", not \"unlimited\""),
            None => out
                .report(
                    cx.range(service.key),
                    format!(
                        "GPU service `{}` runs with Docker's default 64 MiB /dev/shm",
                        service.name
                    ),
                )
                .label(format!(
                    "{}, but sets no `shm_size`, `ipc` or /dev/shm mount",
                    gpu_reason(service)
                )),
        };
        let mut diagnostic = diagnostic.gpu_evidence(cx, service);
        // Where a later file removes the size (`shm_size: !reset`), the
        // fix is not offered (the reset would undo it): say where.
        if let Some(reset) = service.reset_of("shm_size") {
            diagnostic = diagnostic.related(cx.range(reset), "a later file resets `shm_size` here");
        }
        for other in service.definitions.iter().filter(|d| d.key != service.key) {
            diagnostic = diagnostic.related(
                cx.range(other.key),
                format!(
                    "`{}` is merged with this definition, which sets no /dev/shm either",
                    service.name
                ),
            );
        }
        diagnostic
            .severity(severity)
            .note(SHM_FAILURES)
            .help(add_shm_help(cx.settings))
            .fix(fix);
    }
}

/// `docker run --gpus …` (or `--runtime=nvidia`, an NVIDIA device,
/// `nvidia-docker`) with no `--shm-size`, `--ipc` or /dev/shm mount.
fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        let run = &site.run;
        let Some(request) = run.gpu_request() else {
            continue;
        };
        // `--shm-size=0` is written: adding another option is no fix.
        let shm = &cx.container(site).shm;
        if shm.decided_by != ShmSetting::Default || shm.at.is_some() {
            continue;
        }
        let severity = if cx.container(site).launches_ranks() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let size = &cx.settings.fix_shm_size;
        let option = format!("--shm-size={size}");
        let fix = cx.insert_option(site, &option).map(|edit| {
            cx.run_fix(
                site,
                format!("Add `{option}`"),
                Applicability::Safe,
                vec![edit],
            )
        });
        out.report(
            run.program_range,
            format!("GPU container started by `{}` runs with the default 64 MiB /dev/shm", run.invocation()),
        )
        .label(format!("{request}, but sets no `--shm-size`, `--ipc` or /dev/shm mount"))
        .severity(severity)
        .note(SHM_FAILURES)
        .help(format!("add `{option}` (or `--ipc=host`); `fix-size` in gpulint.toml's [shm] sets the size the fix adds"))
        .fix(fix);
    }
}
