//! DF007: `NVIDIA_DRIVER_CAPABILITIES` narrowed so that CUDA is not exposed.

use crate::diagnostic::Severity;
use crate::fix::{Applicability, Edit, Fix};
use crate::{Check, DockerfileContext, Reporter};

crate::declare_rule! {
    name: "driver-capabilities-without-compute",
    severity: Warning,
    fix: Unsafe,
    summary: "NVIDIA_DRIVER_CAPABILITIES narrowed so that CUDA is not exposed",
    sources: [
        "NVIDIA Container Toolkit, specialized configurations with Docker (driver capabilities)",
    ],
}

pub const CHECK: Check = Check::dockerfile(check);

const NAME: &str = "NVIDIA_DRIVER_CAPABILITIES";

fn check(cx: &DockerfileContext, out: &mut Reporter) {
    for setting in cx.model.env_settings() {
        let stage = setting.stage;
        if setting.pair.key.text != NAME || setting.value.contains('$') {
            continue;
        }
        let capabilities: Vec<&str> = setting.value.split(',').map(str::trim).collect();
        if setting.value.trim().is_empty()
            || capabilities
                .iter()
                .any(|c| c.eq_ignore_ascii_case("compute") || c.eq_ignore_ascii_case("all"))
        {
            continue;
        }
        let Some(value) = &setting.pair.value else {
            continue;
        };
        // After an opening quote, so the quoting stays as written.
        let written = cx.source(value.range);
        let at = value.range.start as usize + usize::from(written.starts_with(['"', '\'']));
        let fix = Fix::new(
            format!("Add `compute` to {NAME}"),
            Applicability::Unsafe,
            vec![Edit::insert(at as u32, "compute,")],
            vec![DockerfileContext::env_path(stage, NAME)],
        );
        // A stage built on a CUDA or framework image is there to run CUDA:
        // without `compute` it cannot. On another base the narrowing is
        // often deliberate (NVML-only device plugins, DCGM, MIG managers set
        // `utility`), so it only informs.
        let runs_cuda = cx
            .model
            .base(stage, &foldhash::HashMap::default())
            .is_some_and(|base| base.accelerator().is_some());
        out.report(
                setting.pair.range,
                format!("{} gives containers the GPU driver without CUDA", cx.describe_stage(stage)),
            )
            .severity(if runs_cuda { Severity::Warning } else { Severity::Info })
            .label(format!("`{}` does not include `compute`", setting.value))
            .note("the NVIDIA container runtime mounts only the listed driver libraries; without `compute` there is no libcuda, and CUDA programs fail with `CUDA driver version is insufficient` or find no device")
            .help(format!("add `compute` (`{NAME}=compute,utility` is the toolkit's default) or use `all`"))
            .fix(fix);
    }
}
